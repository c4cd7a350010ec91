#pragma once
// Preflight against the indexes: fetch every page a plan needs (all at once, while the
// venv is probed), then plan. Touches nothing.

#include <filesystem>
#include <string>
#include <vector>

#include "base/http.hpp"
#include "index/page_cache.hpp"
#include "manifest/manifest.hpp"
#include "plan/planner.hpp"
#include "venv/probe.hpp"

namespace stackup::txn {

// What preflight saw besides the venv.
struct Seen {
    std::string toolkit;   // nvcc's release; "" when none asked
    std::string driver;    // the driver's version; "" when none seen or asked
};

// The venv and host as one probe and the manifest's checks see them.
struct Host {
    venv::Facts facts;
    Seen seen;
};

// Everything `plan` and `apply` check before planning, touching nothing: one probe of
// the venv, then its interpreter, the toolkit and the driver against the manifest.
Host inspect_host(const manifest::Manifest& m, const std::filesystem::path& venv, const base::Environment& env);

// The venv is a venv, with the manifest's python; nothing touched.
void check_interpreter(const manifest::Manifest& m, const venv::Facts& facts, const std::filesystem::path& venv);
// <cuda.home>/bin/nvcc reports cuda.toolkit; returns the release seen ("" when none is asked).
std::string check_toolkit(const manifest::Manifest& m, const base::Environment& env);

// The driver meets cuda.driver; an absent driver is a warning, or a failure
// with require_driver: true. Returns the version seen ("" when none, or none asked).
std::string check_driver(const manifest::Manifest& m, const base::Environment& env);

struct Preflight {
    Host host;
    plan::Plan plan;
};

// inspect_host and the plan against the indexes, at once: the probe, nvcc and the driver run
// on a second thread while the pages come (a page waits for the venv's facts only to be
// picked), so preflight costs the longer of the two, not their sum. When the host fails, that
// failure is thrown, as when it ran first. Touches nothing.
Preflight inspect_and_plan(const manifest::Manifest& m, const std::filesystem::path& venv, const base::Environment& env,
                           const base::HttpOptions& http, const index::CacheOptions& cache);

// The plan's exact pins for one step, in the step's order, each with its sha256
// when the index gave one: the lines of the step's requirements file.
std::vector<std::string> requirement_lines(const plan::PlannedStep& planned, const manifest::Step& step);

// Throws Error(preflight_failed) listing every near miss when the plan has any.
void require_plan_ok(const plan::Plan& plan);

}  // namespace stackup::txn

#pragma once
// Preflight against the indexes: fetch every page a plan needs (all at once),
// then plan. Touches nothing.

#include <filesystem>
#include <string>
#include <vector>

#include "base/http.hpp"
#include "manifest/manifest.hpp"
#include "plan/planner.hpp"
#include "venv/probe.hpp"

namespace stackup::txn {

// The venv is a venv, with the manifest's python; nothing touched.
void check_interpreter(const manifest::Manifest& m, const venv::Facts& facts, const std::filesystem::path& venv);
// <cuda.home>/bin/nvcc reports cuda.toolkit.
void check_toolkit(const manifest::Manifest& m, const base::Environment& env);

// The driver meets cuda.driver; an absent driver is a warning, or a failure
// with require_driver: true.
void check_driver(const manifest::Manifest& m, const base::Environment& env);

plan::Plan plan_against_indexes(const manifest::Manifest& m, const venv::Facts& facts, const base::HttpOptions& http);

// The plan's exact pins for one step, in the step's order.
std::vector<std::string> pins_of(const plan::PlannedStep& planned, const manifest::Step& step);

// Throws Error(preflight_failed) listing every near miss when the plan has any.
void require_plan_ok(const plan::Plan& plan);

}  // namespace stackup::txn

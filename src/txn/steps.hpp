#pragma once
// The steps of one apply, run against one tree (the live venv in place, the
// clone blue/green): each step's uninstall and install, its probe, its
// judgements. A step's result is data in its StepReport; the executor decides.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "installer/command.hpp"
#include "installer/runner.hpp"
#include "manifest/manifest.hpp"
#include "txn/report.hpp"
#include "venv/driver.hpp"
#include "venv/probe.hpp"
#include "verify/requires.hpp"

namespace stackup::txn {

// Every dist whose version changed between `before` and `after` (the step's own packages
// included when `step` is given, even when they did not).
std::vector<PackageRow> package_rows(const manifest::Step* step, const venv::Facts& before, const venv::Facts& after);

// What the steps run, behind one seam: uv and the venv's python. The real ones start
// processes; test_steps.cpp passes its own to drive every outcome of a step without uv.
class Tools {
public:
    virtual ~Tools() = default;
    virtual installer::RunResult install(const installer::Invocation& invocation, const base::LineSink& on_line) = 0;
    // Throws Error when the venv's python does not answer.
    virtual venv::Facts probe(const std::filesystem::path& venv, const std::vector<venv::ImportRequest>& requests,
                              const base::Environment& env, const venv::Bytecode& bytecode) = 0;
    virtual CheckReport check(const manifest::Manifest& m, const std::filesystem::path& venv,
                              const base::Environment& env, const manifest::Check& check) = 0;
};

// uv and the venv's python, for real.
Tools& real_tools();

class StepRunner {
public:
    // `options.venv` is the tree the steps install into; each step's requirements file is
    // written into `requirements_dir`.
    StepRunner(const manifest::Manifest& m, Options options, Observer& obs, base::Environment env,
               std::filesystem::path requirements_dir, installer::Mode mode = installer::Mode::install,
               Tools& tools = real_tools())
        : m_(m), options_(std::move(options)), observer_(obs), env_(std::move(env)),
          requirements_dir_(std::move(requirements_dir)), mode_(mode), tools_(tools) {}

    // Returns false when the step failed; the report says how.
    bool step(std::size_t i, venv::Facts& facts, ApplyReport& report);
    // What the venv's requirements looked like before the first step: only what a step breaks counts.
    void set_baseline(const venv::Facts& facts);
    // The manifest's checks, in the tree's python; failures go into the report.
    void checks(ApplyReport& report);

private:
    std::optional<installer::Invocation> removal_invocation(const manifest::Step& step, const venv::Facts& facts,
                                                            StepReport& r) const;
    std::optional<installer::Invocation> install_invocation(std::size_t i, const manifest::Step& step, StepReport& r);
    bool run_installer(StepReport& r, const std::optional<installer::Invocation>& invocation);
    std::vector<verify::Judgement> judge_requirements(std::size_t i, const venv::Facts& after, StepReport& r) const;
    venv::Facts probe_after(std::size_t i, const venv::Facts& before, StepReport& r);
    void judge(std::size_t i, ApplyReport& report);

    const manifest::Manifest& m_;
    Options options_;
    Observer& observer_;
    base::Environment env_;
    std::filesystem::path requirements_dir_;
    installer::Mode mode_;
    Tools& tools_;
    std::vector<verify::BrokenRequirement> baseline_;
    venv::Facts baseline_facts_;
    std::optional<venv::GpuFacts> gpus_;
};

}  // namespace stackup::txn

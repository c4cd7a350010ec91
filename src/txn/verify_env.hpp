#pragma once
// `stackup verify`: the manifest's expectations, removals, the CUDA scan and the checks
// judged against the venv as it is; touches nothing.

#include <vector>

#include "manifest/manifest.hpp"
#include "txn/report.hpp"
#include "verify/binaries.hpp"
#include "verify/requires.hpp"

namespace stackup::txn {

struct VerifyReport {
    venv::Facts facts;
    std::vector<verify::ActiveExpectation> expectations;
    std::vector<verify::Judgement> judgements;   // every check of every expectation, passed or not
    std::vector<verify::Mismatch> mismatches;
    std::vector<CheckReport> checks;
    // Requirements the venv does not meet (pip check): said, never a failure, since
    // verify has no "before" to tell what an upgrade broke (apply does).
    std::vector<verify::BrokenRequirement> broken;
    bool ok() const { return mismatches.empty(); }
};

// Every expectation of the manifest, the mixed-CUDA scan and the checks; touches nothing.
VerifyReport verify_env(const manifest::Manifest& m, const Options& options);

// `stackup inspect`: per dist with shared objects, its CUDA build, kernels and missing libraries.
struct InspectReport {
    venv::Facts facts;
    verify::GpuTargets targets;
    std::vector<verify::DistSummary> dists;
};
// `arch` (compute capabilities) given: those are the targets; else the manifest's cuda.arch (`m`
// may be null), else what nvidia-smi reports. Touches nothing.
InspectReport inspect_env(const manifest::Manifest* m, const Options& options, const std::vector<std::string>& arch);

}  // namespace stackup::txn

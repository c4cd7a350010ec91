#pragma once
// `stackup verify`: the manifest's expectations, removals, the CUDA scan and the checks
// judged against the venv as it is; touches nothing.

#include <vector>

#include "manifest/manifest.hpp"
#include "txn/apply.hpp"
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

}  // namespace stackup::txn

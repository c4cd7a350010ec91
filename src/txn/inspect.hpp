#pragma once
// verify and rollback: the commands that judge or restore without installing.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "txn/apply.hpp"
#include "txn/journal.hpp"
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

struct RollbackReport {
    std::string snapshot_id;          // "" when an untouched interrupted run was only closed
    std::filesystem::path snapshot_path;
    std::string created;
    std::vector<std::string> warnings;
    std::optional<OpenTransaction> closed;  // the interrupted run this rollback resolved
};

// With an interrupted journal: restores THAT run's snapshot (or `id`, when
// given) and closes the journal; a run that died before its snapshot is only
// closed. Otherwise restores the latest snapshot of this venv (or `id`).
// Throws Error: locked, no snapshot (rollback_failed), or a restore that
// failed (rollback_failed; the journal then stays open).
RollbackReport rollback(const Options& options, const std::optional<std::string>& id);

}  // namespace stackup::txn

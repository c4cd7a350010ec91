#pragma once
// verify and rollback: the commands that judge or restore without installing.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "txn/apply.hpp"

namespace stackup::txn {

struct VerifyReport {
    venv::Facts facts;
    std::vector<verify::ActiveExpectation> expectations;
    std::vector<verify::Mismatch> mismatches;
    std::vector<CheckReport> checks;
    bool ok() const { return mismatches.empty(); }
};

// Every expectation of the manifest, the mixed-CUDA scan and the checks; touches nothing.
VerifyReport verify_env(const manifest::Manifest& m, const Options& options);

struct RollbackReport {
    std::string snapshot_id;
    std::filesystem::path snapshot_path;
    std::string created;
    std::vector<std::string> warnings;
};

// Restores the latest snapshot of this venv (or `id`). Throws Error: locked,
// no snapshot (rollback_failed), or a restore that failed (rollback_failed).
RollbackReport rollback(const Options& options, const std::optional<std::string>& id);

}  // namespace stackup::txn

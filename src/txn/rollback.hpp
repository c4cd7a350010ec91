#pragma once
// `stackup rollback`: restore a snapshot of the venv, exactly, and close an
// interrupted run's journal.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "txn/apply.hpp"
#include "txn/journal.hpp"

namespace stackup::txn {

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

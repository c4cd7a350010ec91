#pragma once
// `stackup rollback`: restore a snapshot of the venv, exactly, and close an
// interrupted run's journal.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "txn/report.hpp"
#include "txn/journal.hpp"

namespace stackup::txn {

struct RollbackReport {
    std::string snapshot_id;          // "" when an untouched interrupted run was only closed
    std::filesystem::path snapshot_path;
    std::string created;
    std::vector<std::string> warnings;
    std::optional<OpenTransaction> closed;  // the interrupted run this rollback resolved
    std::uint64_t generation = 0;           // the restored generation's number
    std::string replaced_id;                // the generation the replaced tree is kept as ("" when not kept)
    std::uint64_t replaced_generation = 0;  // (`rollback --to` it undoes this rollback)
    bool nothing_changed = false;           // an interrupted blue/green run that never switched: only closed
    std::vector<venv::ProcessUse> running;  // --switch-running: the processes restored under (need a restart)
};

// With an interrupted journal: restores THAT run's snapshot (or `id`, when
// given) and closes the journal; a run that died before it changed the venv
// (before its snapshot in place, before its switch blue/green) is only closed.
// Otherwise switches to the generation the live one was built from (or `id`: a
// generation number or a snapshot id), keeping the replaced tree as a
// generation so that `rollback --to` it undoes the rollback.
// Processes using the venv stop it before anything is touched (RunningError, exit 8) unless
// options.switch_running (txn/running.hpp).
// Throws Error: locked, no snapshot (rollback_failed), or a restore that
// failed (rollback_failed; the journal then stays open).
RollbackReport rollback(const Options& options, const std::optional<std::string>& id);

}  // namespace stackup::txn

#pragma once
// `stackup status`: the lock, an interrupted or running transaction, the last
// one that ended, and the snapshots, as data for the CLI to print.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "snapshot/store.hpp"
#include "txn/report.hpp"
#include "txn/journal.hpp"
#include "txn/running.hpp"
#include "venv/processes.hpp"

namespace stackup::txn {

// never_taken: no lock file. free: released normally. stale: free, but the
// holder line of a run that ended without releasing it is left. held: by a
// running holder. orphaned: held, but its holder is dead: a child of it (an
// installer that outlived its stackup) still holds the lock.
enum class LockStatus { never_taken, free, stale, held, orphaned };

struct LockState {
    std::filesystem::path path;
    LockStatus state = LockStatus::never_taken;
    std::string holder;               // the holder line, "" when none
    std::string holder_description;   // describe_holder(): pid, host, command, since, and whether it runs
    std::vector<long> holding_pids;   // orphaned: the processes with the lock file open
    bool held() const { return state == LockStatus::held || state == LockStatus::orphaned; }
};

struct StatusReport {
    LockState lock;
    std::optional<OpenTransaction> open;   // a journal that did not end
    std::optional<LastTransaction> last;
    std::vector<snapshot::SnapshotInfo> snapshots;   // newest first
    snapshot::StoreUsage usage;            // disk use of the whole store
    std::string venv_state;                // an interrupted blue/green run: which tree the venv holds
    std::optional<snapshot::SnapshotInfo> live;     // the generation the venv is (none: changed since, or none taken)
    std::optional<StagedGeneration> staged;         // built by `apply --stage`, waiting for `stackup switch`
    venv::ProcessScan running;                      // the processes using the venv now
    std::vector<OldCodeProcess> old_code;           // processes still running a replaced generation's code
    std::size_t old_code_unreadable = 0;
    // An open journal whose run is gone (its lock free, or held only by an orphan).
    bool interrupted() const { return open && lock.state != LockStatus::held; }
};

// Reads only; probes the lock without taking it or writing to it.
[[nodiscard]] StatusReport status(const Options& options);

}  // namespace stackup::txn

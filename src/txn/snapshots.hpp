#pragma once
// `stackup snapshots ...` and `stackup status`: the snapshot store and the
// state of a venv's transactions, as data for the CLI to print.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "snapshot/store.hpp"
#include "txn/apply.hpp"
#include "txn/journal.hpp"

namespace stackup::txn {

// Takes the lock, probes the venv for its distributions, snapshots it. Reads
// the venv only. `m` (optional) is recorded as the manifest and gives the
// probe its environment.
snapshot::SnapshotInfo create_snapshot(const Options& options, const manifest::Manifest* m, const std::string& label);

// This venv's snapshots, newest first.
[[nodiscard]] std::vector<snapshot::SnapshotInfo> list_snapshots(const Options& options);

// Throws Error(usage) when there is no such snapshot of this venv.
[[nodiscard]] snapshot::SnapshotInfo show_snapshot(const Options& options, const std::string& id);

// Takes the lock; refuses (Error interrupted) the snapshot an interrupted run
// needs, and an unknown id (Error usage).
void delete_snapshot(const Options& options, const std::string& id);

// Takes the lock; keeps the newest `keep` and the snapshot an interrupted run
// needs; returns the removed ids.
[[nodiscard]] std::vector<std::string> prune_snapshots(const Options& options, int keep);

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
    std::optional<LastApply> last;
    std::vector<snapshot::SnapshotInfo> snapshots;   // newest first
    snapshot::StoreUsage usage;            // disk use of the whole store
    // An open journal whose run is gone (its lock free, or held only by an orphan).
    bool interrupted() const { return open && lock.state != LockStatus::held; }
};

// Reads only; probes the lock without taking it or writing to it.
[[nodiscard]] StatusReport status(const Options& options);

}  // namespace stackup::txn

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

struct LockState {
    std::filesystem::path path;
    bool exists = false;
    bool held = false;       // held by another process right now
    std::string holder;      // the holder's line: who holds it, or last held it
};

struct StatusReport {
    LockState lock;
    std::optional<OpenTransaction> open;   // a journal that did not end
    std::optional<LastApply> last;
    std::vector<snapshot::SnapshotInfo> snapshots;   // newest first
    // An open journal under a lock nobody holds: the run died.
    bool interrupted() const { return open && !lock.held; }
};

// Reads only; probes the lock by taking and releasing it.
[[nodiscard]] StatusReport status(const Options& options);

}  // namespace stackup::txn

#pragma once
// `stackup snapshots ...`: a venv's snapshots, as data for the CLI to print.

#include <filesystem>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "snapshot/store.hpp"
#include "txn/apply.hpp"

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

}  // namespace stackup::txn

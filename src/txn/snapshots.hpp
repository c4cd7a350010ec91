#pragma once
// `stackup snapshots ...`: a venv's snapshots, as data for the CLI to print.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "snapshot/store.hpp"
#include "txn/report.hpp"
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
// needs, the live generation and an unknown id (Error usage).
void delete_snapshot(const Options& options, const std::string& id);

// `stackup history`: the generations of this venv, oldest first, which one is
// live (the venv unchanged since it was made or switched in) and what is staged.
struct History {
    std::vector<snapshot::SnapshotInfo> generations;
    std::string live_id;  // "" when the venv is none of them
    std::optional<StagedGeneration> staged;
};
[[nodiscard]] History history(const Options& options);

// Takes the lock; keeps the newest `keep` and the snapshot an interrupted run
// needs; returns the removed ids.
[[nodiscard]] std::vector<std::string> prune_snapshots(const Options& options, int keep);

}  // namespace stackup::txn

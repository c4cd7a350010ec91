#pragma once
// Snapshot retention: which snapshots of a venv an apply or `prune` keeps.

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "snapshot/store.hpp"
#include "venv/probe.hpp"

namespace stackup::txn {

// Keeps the newest `keep` snapshots of `venv`, always `keep_id` (when not empty:
// the generation an apply made) and the one it was built from (its undo target),
// else the live generation, and the snapshot an interrupted run in `state_dir` needs;
// returns the removed ids. An unreadable journal removes nothing. `later`: their folders go to the
// store's trash, deleted by the next apply while its installer runs (Store::empty_trash).
std::vector<std::string> prune(snapshot::Store& store, const std::filesystem::path& state_dir,
                               const std::filesystem::path& venv, int keep, const std::string& keep_id,
                               bool later = false);

// (name, version) of every installed dist: what a snapshot records.
std::vector<std::pair<std::string, std::string>> distribution_pairs(const venv::Facts& facts);

}  // namespace stackup::txn

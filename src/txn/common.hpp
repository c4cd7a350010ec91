#pragma once
// Pieces shared by apply, verify and rollback.

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "base/lock.hpp"
#include "base/process.hpp"
#include "manifest/manifest.hpp"
#include "snapshot/store.hpp"
#include "txn/apply.hpp"
#include "venv/probe.hpp"

namespace stackup::txn {

// The venv lock, inherited by every child started while it is held: an
// installer that outlives its stackup keeps the venv locked until it ends.
// Declaration order is teardown order: children stop inheriting, then the lock goes.
struct VenvLock {
    base::FileLock lock;
    base::InheritedFd inherited;
};

// One apply/rollback/snapshot at a time per venv; throws Error(locked) naming
// the holder (and saying so when that holder is dead but a child of it holds
// the lock); warns when it takes over the lock of a run that never released it.
[[nodiscard]] VenvLock acquire_lock(const std::filesystem::path& state_dir, const std::string& command);

// "pid 4242 (apply m.yaml, since T) is not running", or the line as written for a foreign one.
std::string describe_holder(const std::string& line);

std::vector<std::pair<std::string, std::string>> distribution_pairs(const venv::Facts& facts);

// Runs one manifest check with the venv's python.
CheckReport run_check(const manifest::Manifest& m, const std::filesystem::path& venv, const base::Environment& env,
                      const manifest::Check& check);
verify::Mismatch check_mismatch(const CheckReport& c);

// Keeps the newest `keep` snapshots of `venv`, always `keep_id` (when not
// empty) and the snapshot an interrupted run in `state_dir` needs; returns
// the removed ids. An unreadable journal removes nothing.
std::vector<std::string> prune(snapshot::Store& store, const std::filesystem::path& state_dir,
                               const std::filesystem::path& venv, int keep, const std::string& keep_id);

}  // namespace stackup::txn

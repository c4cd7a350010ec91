#pragma once
// The venv's lock: one apply, rollback or snapshot at a time per venv.

#include <filesystem>
#include <string>

#include "base/lock.hpp"
#include "base/process.hpp"

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

}  // namespace stackup::txn

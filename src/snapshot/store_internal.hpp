#pragma once
// Internal to the snapshot store (store.cpp, restore.cpp): the layout's names.

#include <filesystem>
#include <string>

#include "base/error.hpp"
#include "snapshot/link.hpp"

namespace stackup::snapshot::detail {

extern const char* const kInfoFile;   // "snapshot.json"
extern const char* const kIndexFile;  // "index.tsv"
extern const char* const kTreeDir;    // "tree": copies and reflinks
extern const char* const kObjectsDir; // ".objects": hard links, in the snapshots dir, shared (link.hpp)
extern const char* const kReadyDir;   // "ready"
extern const char* const kTrashDir;   // ".trash": removed snapshots' folders, deleted later

// The object store that hard-link snapshot `dir` (<snapshots>/<id>) draws on.
std::filesystem::path objects_of(const std::filesystem::path& dir);

// Four random hex digits, for names that must not collide.
std::string random_hex4();

// Every failure of a restore or a swap: Error(rollback_failed), its message saying which path
// holds what.
[[noreturn]] inline void restore_failed(const std::string& message) {
    throw Error(ExitCode::rollback_failed, message);
}

}  // namespace stackup::snapshot::detail

#pragma once
// Internal to the snapshot store (store.cpp, restore.cpp): the layout's names.

#include <filesystem>
#include <string>

#include "snapshot/link.hpp"

namespace stackup::snapshot::detail {

extern const char* const kInfoFile;   // "snapshot.json"
extern const char* const kIndexFile;  // "index.json"
extern const char* const kTreeDir;    // "tree"
extern const char* const kHashesFile; // "hashes.json"
extern const char* const kReadyDir;   // "ready"

// Four random hex digits, for names that must not collide.
std::string random_hex4();

// The sha256s seal() recorded for snapshot dir `dir`; empty when there are none or they are unreadable.
FileHashes load_hashes(const std::filesystem::path& dir);

}  // namespace stackup::snapshot::detail

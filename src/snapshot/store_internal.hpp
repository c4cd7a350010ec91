#pragma once
// Internal to the snapshot store (store.cpp, restore.cpp): the layout's names.

#include <string>

namespace stackup::snapshot::detail {

extern const char* const kInfoFile;   // "snapshot.json"
extern const char* const kIndexFile;  // "index.json"
extern const char* const kTreeDir;    // "tree"

// Four random hex digits, for names that must not collide.
std::string random_hex4();

}  // namespace stackup::snapshot::detail

#pragma once
// The hard-link strategy: one shared object store (<snapshots>/.objects)
// holding one hard link per inode that any snapshot needs, named by the inode
// number, and per snapshot an index whose files name their inode. A snapshot
// of a venv the store already holds costs an lstat per entry and a link per
// new inode: after an upgrade, only the files the upgrade wrote. Directories
// and symlinks live only in the index (a mkdir allocates an inode, which on
// this project's journal-less ext4 costs more than 20 links).
//
// The name is the identity: while .objects/<N> exists it holds inode N alive,
// so no other file on the filesystem can have that number; a venv file with
// inode N is the object itself. The integrity record (inode, size, mtime,
// ctime) makes an in-place write through the venv's link detectable.
// Restores go through the ready tree (ready.hpp). See Strategy in store.hpp.

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "snapshot/tree.hpp"

namespace stackup::snapshot {

// The name of inode `inode` in an object store, and its path in `objects`.
[[nodiscard]] std::string object_name(std::uint64_t inode);
[[nodiscard]] std::filesystem::path object_file(const std::filesystem::path& objects, std::uint64_t inode);

// What linking a tree cost.
struct Linked {
    TreeIndex index;           // modes, mtimes and sizes as the inodes have them, plus inode and ctime, no sha256
    std::uint64_t linked = 0;  // new objects: inodes the store did not hold yet
};

// Indexes the tree at `src` and makes the object store `objects` (created
// when absent; its parent must exist, on the same filesystem) hold every one
// of its files' inodes, linking only those it does not hold yet. On failure
// the objects this call linked are unlinked again and the error rethrown.
[[nodiscard]] Linked link_tree(const std::filesystem::path& src, const std::filesystem::path& objects);

// Problems of the snapshot whose index is `expected` in the object store
// `objects`, in diff()'s words; files are judged by their integrity record
// (judge_file without a sha256: a moved size or mtime is refused, a ctime-only
// move, a chmod or a link count change, is not).
[[nodiscard]] std::vector<std::string> check_links(const TreeIndex& expected, const std::filesystem::path& objects);

// The inodes whose objects `index` needs.
void add_referenced(const TreeIndex& index, std::set<std::uint64_t>& referenced);

// Unlinks every entry of `objects` whose inode is not in `referenced` (and
// anything there that is no object); returns how many. An absent store is empty.
std::uint64_t drop_unreferenced(const std::filesystem::path& objects, const std::set<std::uint64_t>& referenced);

}  // namespace stackup::snapshot

#pragma once
// The hard-link strategy: a flat snapshot tree holding one hard link per
// venv file, named by the file's position in the index (directories and
// symlinks live only in the index: a mkdir allocates an inode, which on this
// project's journal-less ext4 costs more than 20 links), and the integrity
// record that makes an in-place write through the venv's link detectable.
// Restores go through the ready tree (ready.hpp). See Strategy in store.hpp.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "snapshot/tree.hpp"

namespace stackup::snapshot {

// sha256 by relative path, recorded lazily by Store::seal.
using FileHashes = std::map<std::string, std::string>;

// The recorded sha256 of `path`, or "" when there is none.
[[nodiscard]] const std::string& hash_of(const FileHashes& hashes, const std::string& path);

// Where the flat tree `tree` holds the file at `position` in its index.
[[nodiscard]] std::filesystem::path linked_file(const std::filesystem::path& tree, std::size_t position);

// Indexes the tree at `src` and links its files into the flat `dst` (which
// must not exist; its parent must, on the same filesystem); returns the index:
// modes, mtimes and sizes as the linked inodes have them, plus inode and
// ctime, no sha256. On failure the partial `dst` is removed and the error rethrown.
[[nodiscard]] TreeIndex link_tree(const std::filesystem::path& src, const std::filesystem::path& dst);

// Problems of the snapshot tree `tree` against its index `expected`, in
// diff()'s words; files are judged by their integrity record (and `hashes`),
// so a mode or mtime that a chmod/touch in the venv gave the shared inode is
// no problem when the content is provably the same.
[[nodiscard]] std::vector<std::string> check_links(const TreeIndex& expected, const std::filesystem::path& tree,
                                                   const FileHashes& hashes);

// Whether `path` still holds exactly what its record says (inode, size, mtime and ctime).
[[nodiscard]] bool record_holds(const TreeEntry& entry, const std::filesystem::path& path);

}  // namespace stackup::snapshot

#pragma once
// The reflink strategy's own parts: whether the state dir's filesystem can
// share blocks with the venv's (probed with one real file), and the check of
// a snapshot tree of clones. The clones themselves are made by copy_tree
// (FileData::clone); each is its own inode, so the index holds its sha256 and
// the clone's integrity record (integrity.hpp): a restore checks the records
// at lstat cost and hashes only a file whose record moved.

#include <filesystem>
#include <string>
#include <vector>

#include "snapshot/tree.hpp"

namespace stackup::snapshot {

struct ReflinkProbe {
    bool supported = false;
    std::string reason;  // e.g. "cloning /v/pyvenv.cfg (ext4) into /s/snapshots (ext4) failed: Operation not supported"
};

// Clones one regular file of `venv` (the first non-empty one found) into a
// hidden temp file in `dir`, which it removes again. FICLONE errors that mean
// "cannot share blocks here" (clone_unsupported) say no; others throw std::system_error.
[[nodiscard]] ReflinkProbe probe_reflink(const std::filesystem::path& venv, const std::filesystem::path& dir);

// The filesystem holding `path` by its statfs magic: "ext4", "btrfs", "xfs",
// "tmpfs", ..., else "filesystem 0x<magic>".
[[nodiscard]] std::string filesystem_name(const std::filesystem::path& path);

// Problems of the clone tree `tree` against its index, in diff()'s words:
// layout, types, modes, mtimes and symlink targets compared, files judged by
// their integrity record and hashed where it moved.
[[nodiscard]] std::vector<std::string> check_clones(const TreeIndex& expected, const std::filesystem::path& tree);

}  // namespace stackup::snapshot

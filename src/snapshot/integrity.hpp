#pragma once
// The integrity record of a snapshot file that a cheap lstat can check: the
// inode, size, mtime and ctime it had right after the snapshot made it. A
// write moves mtime and ctime; nothing but root's clock can move them back.
// Hard links share the record's inode with the venv; reflink clones own theirs.

#include <filesystem>
#include <optional>
#include <string>

#include "snapshot/tree.hpp"

namespace stackup::snapshot {

// What lstat says of `path` in the fields of an integrity record (type, mode,
// size, mtime, inode, ctime); nullopt when it does not exist. Throws on other errors.
[[nodiscard]] std::optional<TreeEntry> lstat_record(const std::filesystem::path& path);
// The same for `name` in the directory open as `dirfd` (`path` names it in errors).
[[nodiscard]] std::optional<TreeEntry> lstat_record_at(int dirfd, const char* name, const std::filesystem::path& path);

// Whether `seen` matches the record exactly: intact without reading a byte.
[[nodiscard]] bool record_intact(const TreeEntry& want, const TreeEntry& seen);

// Whether of the record only ctime moved (inode, size and mtime match): what
// a chmod or a link count change does, and judge_file accepts without a sha256.
[[nodiscard]] bool only_ctime_moved(const TreeEntry& want, const TreeEntry& seen);

// Judges the file recorded as `want`, seen by lstat as `seen`: nullopt when it
// provably holds the recorded bytes, else the problem in diff()'s words.
// Intact when inode, size and mtime match and ctime did not move; when any
// moved and `sha256` (the recorded hash, may be empty) is known, `path` is
// hashed and must match; without one, a moved inode, size or mtime is refused
// and a ctime-only move (a chmod, a link count change) is accepted.
[[nodiscard]] std::optional<std::string> judge_file(const TreeEntry& want, const TreeEntry& seen,
                                                    const std::filesystem::path& path, const std::string& sha256);

}  // namespace stackup::snapshot

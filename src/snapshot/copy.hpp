#pragma once
// The plain copy and reflink strategies: an exact copy of a tree (paths,
// types, modes, symlinks as links, contents, mtimes to the nanosecond, owners
// when root), indexing the source in the same pass.

#include <cstdint>
#include <filesystem>

#include "snapshot/tree.hpp"

namespace stackup::snapshot {

// Whether a copy's file blocks are its own or shared with the source (reflinks).
enum class Blocks { own, shared };

struct SpaceNeeded {
    std::uint64_t bytes = 0;
    std::uint64_t inodes = 0;
    friend bool operator==(const SpaceNeeded&, const SpaceNeeded&) = default;
};

// What a copy of `plan` takes on a filesystem with `block_size` blocks
// (files rounded up to whole blocks unless shared, one block per directory).
[[nodiscard]] SpaceNeeded space_needed(const TreeIndex& plan, std::uint64_t block_size, Blocks blocks = Blocks::own);

// Throws std::system_error(ENOSPC) naming `dir` and the sizes when the copy
// of `plan` (taken of `source`) will not fit on the filesystem holding `dir`.
void require_free_space(const std::filesystem::path& dir, const TreeIndex& plan,
                        const std::filesystem::path& source, Blocks blocks = Blocks::own);

// How copy_tree makes each file's bytes.
enum class FileData {
    copy,           // read/write through a buffer (hashing on the way), or copy_file_range
    clone,          // FICLONE only: filesystems that cannot share blocks are an error
    clone_or_copy,  // FICLONE, else copy_file_range (restoring a reflink snapshot anywhere)
};

struct CopyOptions {
    Contents contents = Contents::hash;  // hash: each file's sha256, of the bytes the copy holds; or metadata_only
    FileData data = FileData::copy;
    bool record_copies = false;  // the index gets each copy's own inode and ctime (reflink's integrity record)
};

// Copies the tree at `src` to `dst` (which must not exist; its parent must)
// and returns the index of what it copied: the source's metadata, and what
// `options` asks for. Files are copied by one thread per core (at most 8), biggest first. Checks
// free space first, syncs the filesystem at the end. On failure the partial
// `dst` is removed and the error rethrown.
[[nodiscard]] TreeIndex copy_tree(const std::filesystem::path& src, const std::filesystem::path& dst,
                                  const CopyOptions& options);
// With Contents::hash the file bytes are hashed as they pass through, so the
// index costs no second read; with Contents::metadata_only the kernel copies.
[[nodiscard]] TreeIndex copy_tree(const std::filesystem::path& src, const std::filesystem::path& dst,
                                  Contents contents = Contents::hash);

// Removes `path` and everything below it, even read-only directories.
// Returns false when there was nothing to remove.
bool remove_tree(const std::filesystem::path& path);
// remove_tree for a half-made tree while another error is on its way: the
// first error is the one worth reporting, so this one never throws.
void discard_after_failure(const std::filesystem::path& path) noexcept;

}  // namespace stackup::snapshot

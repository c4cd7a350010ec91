#pragma once
// A canonical index of a directory tree: what "the same venv, byte for byte"
// means. Built without following symlinks; compared entry by entry.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace stackup::snapshot {

enum class EntryType { file, dir, symlink };

std::string to_string(EntryType type);

struct TreeEntry {
    std::string path;           // relative to the root, '/'-separated; the root itself is "."
    EntryType type = EntryType::file;
    std::uint32_t mode = 0;     // permission bits incl. setuid/setgid/sticky (st_mode & 07777)
    std::uint64_t size = 0;     // file: bytes; symlink: target length; dir: 0 (fs-dependent)
    std::int64_t mtime_ns = 0;  // nanoseconds since the epoch
    std::string target;         // symlink target, as stored (never resolved)
    std::string sha256;         // file contents (lowercase hex); empty when not hashed
    // Hard-link snapshots only (0 otherwise): the shared inode's number and
    // ctime right after it was linked, the cheap half of its integrity record.
    std::uint64_t inode = 0;
    std::int64_t ctime_ns = 0;
    friend bool operator==(const TreeEntry&, const TreeEntry&) = default;
};

// The index's order: the root "." first, then plain byte order, so a
// directory always comes before everything inside it.
[[nodiscard]] bool path_less(const std::string& a, const std::string& b);

struct TreeIndex {
    std::vector<TreeEntry> entries;  // sorted by path_less
    friend bool operator==(const TreeIndex&, const TreeIndex&) = default;

    [[nodiscard]] const TreeEntry* find(const std::string& path) const;
    [[nodiscard]] std::uint64_t file_bytes() const;  // sum of regular file sizes
};

// What index_tree records of each file beyond its metadata: its sha256 (read
// every byte), nothing, or its inode and ctime (the integrity record, at lstat
// cost). `identity` records of a file only its path, type and inode, as its
// directory lists them (no lstat: mode, size and mtime stay 0); dirs and
// symlinks as `records` does.
enum class Contents { hash, metadata_only, records, identity };

// Regular files' lstat records by inode, which one walk (`Contents::records`) learns and a walk
// of another tree right after reuses: two hard-link trees share most inodes (a rollback walks
// the live venv for drift, then the target's ready tree), so the second walk takes each file's
// inode from its directory listing (d_ino, no lstat) and stats only what the first did not see.
// Where a listing's d_ino ever differed from lstat's st_ino (overlayfs), `usable` is false and
// nothing is reused. A file written between the two walks is seen as the first walk saw it,
// as one written between a walk and the swap is seen as the walk saw it.
// A file on this machine: (st_dev, st_ino); hashable, for the maps that count each inode once.
struct InodeKey {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    friend bool operator==(const InodeKey&, const InodeKey&) = default;
};
struct InodeKeyHash {
    std::size_t operator()(const InodeKey& k) const noexcept {
        return std::hash<std::uint64_t>{}(k.dev * 0x9E3779B97F4A7C15ULL ^ k.ino);
    }
};

struct FileRecords {
    struct Record {  // a regular file's TreeEntry without its path: 40 bytes, not 140
        std::uint32_t mode = 0;
        std::uint64_t size = 0;
        std::int64_t mtime_ns = 0;
        std::uint64_t inode = 0;
        std::int64_t ctime_ns = 0;
    };
    std::unordered_map<InodeKey, Record, InodeKeyHash> files;
    bool usable = true;
};

// Walks `root` (a directory, not a symlink) without following symlinks.
// Types other than file, dir and symlink throw std::runtime_error naming the path.
// `learn`: filled with every regular file's record (Contents::records only). `known`: records a
// file's entry is taken from, unstat'ed, when its listing names one of their inodes.
[[nodiscard]] TreeIndex index_tree(const std::filesystem::path& root, Contents contents,
                                   FileRecords* learn = nullptr, const FileRecords* known = nullptr);

// Human-readable differences, one per line, in path order: "missing: P",
// "extra: P", "type differs: P: dir -> file", "content differs: P",
// "mode differs: P: 0644 -> 0755", "mtime differs: P: <iso> -> <iso>",
// "symlink target differs: P: a -> b". Contents are compared only where both sides were hashed.
[[nodiscard]] std::vector<std::string> diff(const TreeIndex& expected, const TreeIndex& actual);

// diff() against an index taken with Contents::identity: files are compared by
// type and inode only ("inode differs: P: 12 -> 34"), everything else as diff() does.
[[nodiscard]] std::vector<std::string> diff_identity(const TreeIndex& expected, const TreeIndex& actual);

// What changed in a tree since `expected` was taken of it with Contents::records
// (`actual` taken the same way): files by inode, size, mtime and mode (a ctime
// that moved is no change: linking the file elsewhere moves it), symlinks by
// target, directories by mode (their mtime follows their entries, which are
// compared themselves). Entries under a `__pycache__` directory are left out:
// a python importing from the tree may write bytecode there at any time.
[[nodiscard]] std::vector<std::string> diff_drift(const TreeIndex& expected, const TreeIndex& actual);

// One sha256 over the whole canonical index (paths, types, modes, sizes, mtimes, targets, hashes).
[[nodiscard]] std::string tree_digest(const TreeIndex& index);

// "2026-12-02T16:05:01.123456789Z".
[[nodiscard]] std::string format_time_ns(std::int64_t ns);
// "0755".
[[nodiscard]] std::string format_mode(std::uint32_t mode);

}  // namespace stackup::snapshot

#pragma once
// A snapshot's record (snapshot.json) and what asks for one: the strategy its tree was made
// with, what its generation changed and installed. store.hpp keeps the trees; store_json and
// strategy read and write these values without the store.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stackup::snapshot {

// How a snapshot's tree is made. `automatic` is only asked for: it resolves to
// reflink when one venv file can be cloned (FICLONE) into the store, else to
// hardlink when the state dir and the venv share a filesystem (st_dev), else
// to copy; the snapshot records the result and why.
//
// A reflink snapshot is a tree of clones: each file its own inode sharing the
// venv's blocks until either is written, so in-place writes to the venv do not
// reach it. Its index has each file's sha256, as a copy's has, and each
// clone's integrity record (inode, size, mtime, ctime), which a restore checks
// at lstat cost, hashing only where a record moved.
//
// A hard-link snapshot shares each file's inode with the venv, so its index
// records no sha256 (hashing 800 MB would cost more than the snapshot) but an
// integrity record per file: inode, size, mtime and ctime right after linking.
// A file counts as intact when inode, size and mtime still match; when any of
// them moved it is refused as damaged. ctime alone is not enough to refuse: it
// also moves on every link and unlink (uv replacing the venv's copy), so a
// ctime-only change is accepted.
enum class Strategy { copy, hardlink, automatic, reflink };

std::string to_string(Strategy strategy);
std::optional<Strategy> strategy_from_string(const std::string& text);

// One distribution a generation changed: version before and after ("" for none).
struct PackageChange {
    std::string name;
    std::string before;
    std::string after;
    friend bool operator==(const PackageChange&, const PackageChange&) = default;
};

// What one step of the apply that made a generation installed: its requirement lines, each
// an exact pin with the index's sha256 ("torch==2.11.0.dev20251230+cu130 --hash=sha256:...").
struct PlannedInstall {
    std::string step;
    std::vector<std::string> requirements;
    friend bool operator==(const PlannedInstall&, const PlannedInstall&) = default;
};

// A generation is a snapshot in the history of one venv: its number, the one
// it was built from, how it came to be and what it changed. Its tree is the
// live venv while the venv's root directory is the inode it records, and its
// `ready` folder when it is not (hard links only).
struct CreateRequest {
    std::string label;
    std::string manifest;  // path of the manifest the snapshot was taken for; may be empty
    std::vector<std::pair<std::string, std::string>> distributions;  // (name, version)
    Strategy strategy = Strategy::automatic;  // reflinks, else hard links on the venv's filesystem, else a copy
    // Generations: where the tree lives once it is switched in (empty: where it is now, the
    // venv itself), the generation it was built from, how it came to be, and what it changed.
    std::filesystem::path venv{};
    std::string parent{};
    std::string outcome = "snapshot";  // "snapshot" (taken as found), "applied", "staged"
    std::vector<PackageChange> changes{};
    std::vector<PlannedInstall> plan{};
};

struct SnapshotInfo {
    std::string id;        // "20261202T160501Z-3fa9": sortable time, then random
    std::string created;   // ISO-8601 UTC, microseconds: "2026-12-02T16:05:01.123456Z"
    std::string label;
    std::string manifest;
    std::filesystem::path venv;  // absolute, symlinks resolved
    Strategy strategy = Strategy::copy;  // never automatic: what was used
    std::string strategy_reason;         // why, e.g. "automatic: hardlink, no reflinks (cloning ... failed ...)"
    std::vector<std::pair<std::string, std::string>> distributions;
    std::uint64_t entries = 0;     // files, dirs and symlinks, the venv root included
    std::uint64_t file_bytes = 0;  // sum of file sizes
    std::string tree_digest;       // tree_digest() of the index file's index
    std::filesystem::path dir;     // <state>/snapshots/<id> (not stored in the json)
    std::string index_file = "index.tsv";  // in dir
    std::uint64_t generation = 0;  // 1, 2, ...: the order generations were made in (0: taken before they were numbered)
    std::string parent{};          // the id of the generation this one was built from, "" for none
    std::string outcome{};         // see CreateRequest
    std::vector<PackageChange> changes{};
    std::vector<PlannedInstall> plan{};  // what the apply that made it installed, step by step
    std::uint64_t root_device = 0;  // the root directory the tree had when taken (or last switched in):
    std::uint64_t root_inode = 0;   // while the venv's root is this inode, the venv is this generation
    friend bool operator==(const SnapshotInfo&, const SnapshotInfo&) = default;
};

}  // namespace stackup::snapshot

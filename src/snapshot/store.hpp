#pragma once
// The snapshot store: generations and snapshots of a venv, each a tree, its index and its record.
// Where every tree lives (<s> = <state>/snapshots):
//   the venv                 the live generation's tree: the newest whose root inode it has and
//                            from which it did not drift (live()); apply, switch, rollback exchange it
//   <s>/<id>/ready/          a hard-link generation's tree while it is not live (a cache: converged
//                            from .objects before use, ready.hpp); blue/green builds the next
//                            generation in its base's ready/ (the clone, also a staged generation)
//   <s>/.objects/<inode>     one link per inode a hard-link index names: the live one's files
//                            survive a venv changed in place or by hand (link.hpp)
//   <s>/<id>/tree/           a copy or reflink snapshot's tree (in-place mode)
//   beside the venv          .<venv>.stackup-restore-<id>-*: a copy or clone being restored
//   <s>/.trash/              removed snapshots' folders, deleted later (empty_trash)
// <s>/<id>/index.tsv is a snapshot's index, <s>/<id>/snapshot.json its record (format 1), written
// last: a snapshot dir without it is incomplete; list() ignores it, cleanup_incomplete() removes it.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "snapshot/info.hpp"
#include "snapshot/tree.hpp"

namespace stackup::snapshot {

// How long one phase of a restore took (tests/bench/snapshot_bench.py prints them).
struct RestorePhase {
    std::string name;  // "load", "stage", "sync", "swap", "check", "clean up"
    double seconds = 0;
};

struct RestoreResult {
    std::string id;
    std::filesystem::path venv;
    std::string tree_digest;          // the snapshot's, which the venv re-indexed after the restore matched
    bool swapped_atomically = true;   // false: the fs lacks RENAME_EXCHANGE, two renames were used
    std::vector<std::string> warnings;  // e.g. the old tree could not be removed (and where it is)
    std::vector<RestorePhase> phases;   // in order
};

// Real disk use, st_blocks * 512. Hard-link snapshots share inodes with the
// venv and with each other, so a sum of file sizes overstates what they cost.
struct SnapshotUsage {
    std::string id;
    std::uint64_t apparent_bytes = 0;  // sizes of its files and symlinks, shared or not (each inode once)
    std::uint64_t own_bytes = 0;       // blocks no path outside this snapshot links to: what deleting it frees
    friend bool operator==(const SnapshotUsage&, const SnapshotUsage&) = default;
};

struct StoreUsage {
    std::vector<SnapshotUsage> snapshots;  // complete snapshots, newest first
    std::uint64_t disk_bytes = 0;          // the whole store, each (st_dev, st_ino) counted once
    friend bool operator==(const StoreUsage&, const StoreUsage&) = default;
};

// Store::restore(..., unless_drifted): the venv is not the generation it was believed to be;
// nothing was changed (the target's ready tree, a cache, may have been brought up to date).
struct VenvDrifted : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Store {
public:
    explicit Store(std::filesystem::path state_dir);

    const std::filesystem::path& snapshots_dir() const { return snapshots_dir_; }

    // Copies `venv` into a new snapshot and records it. Throws std::system_error
    // on I/O failure (ENOSPC when it will not fit), Error(usage) when reflink
    // is asked for where the filesystems cannot clone, leaving no partial snapshot.
    SnapshotInfo create(const std::filesystem::path& venv, const CreateRequest& request);

    // Complete snapshots, newest first.
    [[nodiscard]] std::vector<SnapshotInfo> list() const;
    [[nodiscard]] std::optional<SnapshotInfo> find(const std::string& id) const;
    // The recorded index; throws Error(rollback_failed) when it does not match snapshot.json.
    [[nodiscard]] TreeIndex index(const SnapshotInfo& info) const;
    // Differences between the snapshot's tree on disk and its recorded index:
    // contents hashed for copies, the integrity record checked for hard links
    // and reflinks (a reflink whose record moved is hashed).
    [[nodiscard]] std::vector<std::string> verify(const std::string& id) const;
    // Hard links: builds (or brings up to date) the snapshot's ready tree, so
    // that a restore need not make 2,000 directories when every second counts.
    // Minutes off the critical path (during the installs) suit it; never run it
    // alongside a restore of the same snapshot. Returns the entries it changed;
    // other strategies return 0. Throws Error(rollback_failed) for a damaged snapshot.
    // `durable`: sync it to disk when it changed (a restore that finds it ready need not);
    // a clone that an apply builds into is synced before its switch instead.
    std::uint64_t prepare(const std::string& id, bool durable = true) const;

    // Walks every snapshot (lstat only; nothing is read or followed). An absent store is empty.
    [[nodiscard]] StoreUsage usage() const;

    // Removes a snapshot: snapshot.json first, so a crash mid-way leaves an
    // incomplete one; then the objects no other snapshot needs.
    // Returns false when there is no such snapshot.
    bool remove(const std::string& id);
    // Removes several, then the objects none of the rest needs, once; a failure
    // to remove one is recorded and the others still go.
    struct Removal {
        std::vector<std::string> removed;                          // ids, in the order given
        std::vector<std::pair<std::string, std::string>> failed;  // (id, why)
        std::string garbage_error;  // why the unneeded objects could not all be removed; "" when they were
    };
    // `later`: each folder is moved into <snapshots>/.trash instead of being deleted now (a
    // generation's tree is 20,000 unlinks, which an apply's retention need not wait for);
    // empty_trash() deletes them. Either way a removed snapshot is gone from list() at once.
    Removal remove(const std::vector<std::string>& ids, bool later = false);
    // Deletes what remove(..., later) moved aside; returns how many folders. Safe beside a
    // create or a restore: nothing in the trash is any snapshot's.
    std::uint64_t empty_trash() const;
    // Removes snapshot dirs that have no snapshot.json, and the objects that
    // they alone linked; returns their ids.
    // Call it under the venv lock: a create in progress looks incomplete.
    std::vector<std::string> cleanup_incomplete();

    // Restores snapshot `id` into `venv`, exactly: checks the snapshot while
    // staging its tree (copies and clones beside the venv, hard links in the
    // ready tree), swaps the staged tree and the venv in one rename, re-indexes
    // the venv, then disposes of the old tree (hard links: it becomes the next
    // ready tree). Every failure throws Error(ExitCode::rollback_failed) saying
    // which path holds what.
    // With `keep_replaced_as` (the id of the generation the venv is now), the replaced tree
    // becomes that generation's ready tree as it is, so that the restore can be undone by
    // another exchange; else it becomes this snapshot's next ready tree.
    // With `unless_drifted` (the generation the venv is believed to be, by its root: candidate()),
    // the venv's drift from it is checked, and a venv that drifted is not touched: VenvDrifted is
    // thrown before the swap. For a hard-link target that walk comes first and the target's
    // walk reuses its files' records (FileRecords: the two trees share most inodes); else the
    // two run side by side.
    [[nodiscard]] RestoreResult restore(const std::string& id, const std::filesystem::path& venv,
                                        const std::string& keep_replaced_as = "",
                                        const std::optional<SnapshotInfo>& unless_drifted = std::nullopt) const;

    // Generations. Where a hard-link snapshot's tree is kept while it is not the live venv.
    [[nodiscard]] std::filesystem::path tree_of(const SnapshotInfo& info) const;
    // What stops `venv` being switched by one exchange with a tree of this store: another
    // filesystem, a mount point, a filesystem without RENAME_EXCHANGE; nullopt when nothing.
    [[nodiscard]] std::optional<std::string> exchange_blocker(const std::filesystem::path& venv) const;
    // What changed in `tree` since the hard-link snapshot `info` was taken of it (diff_drift).
    // `learn`: filled with the tree's files' records (index_tree).
    [[nodiscard]] std::vector<std::string> drift(const SnapshotInfo& info, const std::filesystem::path& tree,
                                                 FileRecords* learn = nullptr) const;
    // The generation the venv is: the newest one whose root is the venv's root directory
    // and which the venv still matches (drift); nullopt when the venv changed since, or none is.
    [[nodiscard]] std::optional<SnapshotInfo> live(const std::filesystem::path& venv) const;
    // live() without the walk: the newest generation whose root is the venv's root directory,
    // which the venv is unless it drifted (drifted(): a walk of the venv; unreadable counts).
    [[nodiscard]] std::optional<SnapshotInfo> candidate(const std::filesystem::path& venv) const;
    [[nodiscard]] bool drifted(const SnapshotInfo& info, const std::filesystem::path& venv,
                               FileRecords* learn = nullptr) const;
    // Exchanges the ready tree of `holder` with `venv` in one RENAME_EXCHANGE: the switch.
    // Throws std::system_error when the kernel refuses; nothing changed then.
    void exchange(const SnapshotInfo& holder, const std::filesystem::path& venv) const;
    // Rewrites a generation's snapshot.json (its outcome, its root) atomically.
    void update(const SnapshotInfo& info) const;

private:
    // Unlinks the objects no complete hard-link snapshot's index names
    // (nothing when an index cannot be read); returns how many.
    std::uint64_t collect_garbage();
    // remove() without the objects: snapshot.json first, then the dir; false when there is none.
    bool remove_dir(const std::string& id, bool later = false);

    std::filesystem::path snapshots_dir_;
};

}  // namespace stackup::snapshot

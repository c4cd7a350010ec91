// Store::restore: the one path back from a broken venv. Its phases:
//   load      the snapshot's info and index (refused when they disagree)
//   stage     copies: copy the snapshot tree to a hidden sibling of the venv,
//             hashing as it copies; reflinks: check each clone's integrity
//             record, then clone the tree to the sibling; hard links: bring
//             the snapshot's ready tree up to date (ready.hpp), judging every
//             file it keeps or links. A snapshot that differs from its index
//             is refused here, before the venv is touched
//             With `unless_drifted`, the venv's drift from the generation it is taken to be is
//             walked too: first for hard links, whose ready tree's walk then takes every file
//             the two trees share from that walk's records (FileRecords), beside the staging
//             for the others; a drifted venv is refused (VenvDrifted), before a damaged target
//             too, since the caller then chooses another target
//   sync      one syncfs: the staged tree is on disk before it becomes the venv
//             (skipped when a ready tree needed no change: prepare() synced it)
//   swap      exchange the staged tree and the venv in one rename; fsync the parent
//   check     copies and reflinks: re-index the venv and compare it with the snapshot's
//             index (a hard-link ready tree exchanged in one rename is not walked again: it
//             was judged entry by entry while it was staged, and the exchange moved it whole)
//   clean up  meanwhile, on a second thread: remove the old tree (hard links:
//             leave it as the next ready tree, which prepare() brings up to date)
// Every failure up to the swap leaves the venv untouched; every failure is
// Error(rollback_failed) saying which path holds what.

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "snapshot/copy.hpp"
#include "snapshot/ready.hpp"
#include "snapshot/reflink.hpp"
#include "snapshot/store.hpp"
#include "snapshot/store_internal.hpp"
#include "snapshot/swap.hpp"

namespace stackup::snapshot {

namespace {

using detail::restore_failed;

constexpr std::size_t kMaxListed = 20;

std::string join(const std::vector<std::string>& lines) {
    std::string out;
    for (std::size_t i = 0; i < lines.size() && i < kMaxListed; ++i) {
        out += (i == 0 ? "" : "; ") + lines[i];
    }
    if (lines.size() > kMaxListed) {
        out += "; ... and " + std::to_string(lines.size() - kMaxListed) + " more";
    }
    return out;
}

// Records how long each phase took, one lap at a time.
class PhaseClock {
public:
    void lap(const char* name) {
        const auto now = std::chrono::steady_clock::now();
        phases_.push_back({name, std::chrono::duration<double>(now - last_).count()});
        last_ = now;
    }
    std::vector<RestorePhase> take() { return std::move(phases_); }

private:
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
    std::vector<RestorePhase> phases_;
};

bool exists_nofollow(const std::filesystem::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        return true;
    }
    if (errno != ENOENT) {
        restore_failed("cannot stat " + path.string() + ": " + std::strerror(errno) + "; nothing was changed");
    }
    return false;
}

[[noreturn]] void refuse_damaged(const SnapshotInfo& info, const std::filesystem::path& venv,
                                const std::vector<std::string>& differences) {
    const auto tree = info.strategy == Strategy::hardlink ? detail::objects_of(info.dir) : info.dir / detail::kTreeDir;
    restore_failed("snapshot " + info.id + " is damaged, refusing to restore it: its files in " + tree.string() +
         " differ from its index: " + join(differences) + "; " +
         venv.string() + " was not touched");
}

[[noreturn]] void cannot_stage(const SnapshotInfo& info, const std::filesystem::path& venv, const std::string& why) {
    restore_failed("cannot restore snapshot " + info.id + ": " + why + "; " + venv.string() +
         " was not touched; the snapshot is at " + info.dir.string());
}

// A tree ready to be swapped in, and whether it must be synced first.
struct Staged {
    std::filesystem::path tree;
    bool unsynced = true;  // false: prepare() left it exactly so, and on disk
};

// Hard links: the ready tree, checked and brought up to date; it is staged where it lies.
Staged stage_ready(const SnapshotInfo& info, const TreeIndex& expected, const std::filesystem::path& venv,
                   const FileRecords* known = nullptr) {
    const auto ready = info.dir / detail::kReadyDir;
    Convergence converged;
    try {
        converged = converge_links(expected, detail::objects_of(info.dir), ready, known);
    } catch (const std::exception& e) {
        cannot_stage(info, venv, e.what());
    }
    if (!converged.damage.empty()) {
        refuse_damaged(info, venv, converged.damage);
    }
    return {ready, converged.changes != 0};
}

// Copies and clones: a copy of the snapshot tree beside the venv. A sibling:
// same filesystem, so the swap is a rename, and the same parent, so the rename
// does not touch the tree's own ".." (nor, on XFS, its mtime).
Staged stage_copy(const SnapshotInfo& info, const TreeIndex& expected, const std::filesystem::path& venv) {
    const auto tree = info.dir / detail::kTreeDir;
    const auto staged = venv.parent_path() / ("." + venv.filename().string() + ".stackup-restore-" + info.id +
                                              "-" + detail::random_hex4());
    CopyOptions options;
    if (info.strategy == Strategy::reflink) {
        // The records are checked first, so the clones need no hashing.
        std::vector<std::string> differences;
        try {
            differences = check_clones(expected, tree);
        } catch (const std::exception& e) {
            cannot_stage(info, venv, e.what());
        }
        if (!differences.empty()) {
            refuse_damaged(info, venv, differences);
        }
        options.contents = Contents::metadata_only;
        options.data = FileData::clone_or_copy;
    }
    TreeIndex copied;
    try {
        copied = copy_tree(tree, staged, options);
    } catch (const std::exception& e) {
        cannot_stage(info, venv, e.what());
    }
    const auto differences = diff(expected, copied);
    if (!differences.empty()) {
        discard_after_failure(staged);
        refuse_damaged(info, venv, differences);
    }
    return {staged};
}

VenvDrifted drifted_since(const std::filesystem::path& venv, const SnapshotInfo& believed) {
    return VenvDrifted(venv.string() + " changed since generation " + believed.id + "; nothing was changed");
}

// The target staged, and with `believed` (the generation the venv is taken to be) the venv's drift
// from it walked too: first for a hard-link target, whose walk then reuses the venv's file
// records; side by side for the others. A drifted venv is refused (VenvDrifted),
// also ahead of a damaged target: the caller, told, chooses another target for such a venv.
Staged stage_unless_drifted(const Store& store, const SnapshotInfo& info, const TreeIndex& expected,
                            const std::filesystem::path& venv, const std::optional<SnapshotInfo>& believed) {
    if (believed && info.strategy == Strategy::hardlink) {
        // One tree's worth of lstat, not two: the venv's walk learns its files' records, and
        // the ready tree's walk takes every file the two share from them.
        FileRecords venv_files;
        if (store.drifted(*believed, venv, &venv_files)) {
            throw drifted_since(venv, *believed);
        }
        return stage_ready(info, expected, venv, &venv_files);
    }
    auto drifted = believed ? std::async(std::launch::async, [&] { return store.drifted(*believed, venv); })
                            : std::future<bool>();
    auto refuse_if_drifted = [&](const Staged* staged) {
        if (drifted.valid() && drifted.get()) {
            if (staged && info.strategy != Strategy::hardlink) {
                discard_after_failure(staged->tree);
            }
            throw drifted_since(venv, *believed);
        }
    };
    Staged staged;
    try {
        staged = info.strategy == Strategy::hardlink ? stage_ready(info, expected, venv)
                                                     : stage_copy(info, expected, venv);
    } catch (const Error&) {
        refuse_if_drifted(nullptr);
        throw;
    }
    refuse_if_drifted(&staged);
    return staged;
}

void sync_staged(const SnapshotInfo& info, const std::filesystem::path& staged, const std::filesystem::path& venv) {
    try {
        base::sync_filesystem(staged);
    } catch (const std::exception& e) {
        if (info.strategy != Strategy::hardlink) {
            discard_after_failure(staged);
        }
        cannot_stage(info, venv, e.what());
    }
}

// Moving a directory to another parent sets its mtime on some filesystems (XFS): the root's is put back.
void put_back_root_mtime(const TreeIndex& expected, const std::filesystem::path& venv, RestoreResult& result) {
    const TreeEntry& root = expected.entries.front();
    struct stat st {};
    if (::lstat(venv.c_str(), &st) != 0 || base::to_ns(st.st_mtim) == root.mtime_ns) {
        return;
    }
    const struct timespec times[2] = {{0, UTIME_OMIT}, base::from_ns(root.mtime_ns)};
    if (::utimensat(AT_FDCWD, venv.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
        result.warnings.push_back("cannot set the mtime of " + venv.string() + ": " + std::strerror(errno));
    }
}

void make_swap_durable(const std::filesystem::path& venv, RestoreResult& result) {
    try {
        base::fsync_dir(venv.parent_path());
    } catch (const std::exception& e) {
        result.warnings.push_back(e.what());
    }
}

// Every file's bytes were judged on the way in (hashed while copied, or their
// integrity record checked), so metadata suffices: reading them back from the
// page cache would prove nothing more. For hard links, less suffices: the stage
// judged each file's inode and gave it its recorded mode and mtime, so a file
// is checked by the inode its directory names (no lstat), dirs and symlinks in full.
void check_restored(const SnapshotInfo& info, const TreeIndex& expected, const std::filesystem::path& venv,
                    RestoreResult& result) {
    const bool links = info.strategy == Strategy::hardlink;
    TreeIndex now;
    try {
        now = index_tree(venv, links ? Contents::identity : Contents::metadata_only);
    } catch (const std::exception& e) {
        restore_failed("restored snapshot " + info.id + " into " + venv.string() + ", but cannot re-index it: " +
             e.what() + "; the snapshot is intact at " + info.dir.string());
    }
    const auto differences = links ? diff_identity(expected, now) : diff(expected, now);
    if (!differences.empty()) {
        restore_failed("restored snapshot " + info.id + " into " + venv.string() +
             ", but the venv differs from the snapshot: " + join(differences) +
             "; the snapshot is intact at " + info.dir.string());
    }
    result.tree_digest = info.tree_digest;
}

// Hard links: the replaced venv becomes the next ready tree as it is (mostly
// the same directories and inodes: cheaper than removing it, and no freed
// inodes left to slow the next mkdir). The next prepare() or restore brings it
// up to date; a cache, it is never trusted, only compared. When it cannot be
// put there, it goes.
void recycle(const SnapshotInfo& info, const std::filesystem::path& old_tree) {
    const auto ready = info.dir / detail::kReadyDir;
    if (old_tree == ready) {
        return;
    }
    if (std::filesystem::exists(std::filesystem::symlink_status(ready))) {
        remove_tree(ready);  // a stale one: the replaced tree is this generation itself
    }
    try {
        std::filesystem::rename(old_tree, ready);
        return;
    } catch (const std::exception&) {  // removed below
    }
    remove_tree(old_tree);
}

// Never throws: it runs on its own thread, and what fails here is a warning.
// `keeper`: the generation the replaced tree is, which keeps it as its ready tree.
void clean_up(const SnapshotInfo& info, const std::optional<SnapshotInfo>& keeper, const detail::Swap& swap,
              std::vector<std::string>& warnings) noexcept {
    if (!swap.old_tree) {
        return;
    }
    try {
        if (keeper) {
            recycle(*keeper, *swap.old_tree);
        } else if (info.strategy == Strategy::hardlink) {
            recycle(info, *swap.old_tree);
        } else {
            remove_tree(*swap.old_tree);
        }
    } catch (const std::exception& e) {
        warnings.push_back(std::string("could not remove the replaced tree: ") + e.what());
    } catch (...) {
        warnings.push_back("could not remove the replaced tree " + swap.old_tree->string());
    }
}

// The venv is this generation again, under the root directory the restore swapped in:
// recorded, so that Store::live() knows it.
void remember_root(const Store& store, SnapshotInfo info, const std::filesystem::path& venv,
                   RestoreResult& result) noexcept {
    struct stat st {};
    if (::lstat(venv.c_str(), &st) != 0 || (info.root_inode == static_cast<std::uint64_t>(st.st_ino) &&
                                             info.root_device == static_cast<std::uint64_t>(st.st_dev))) {
        return;
    }
    info.root_device = static_cast<std::uint64_t>(st.st_dev);
    info.root_inode = static_cast<std::uint64_t>(st.st_ino);
    try {
        store.update(info);
    } catch (const std::exception& e) {
        result.warnings.push_back(std::string("cannot record which tree is live: ") + e.what());
    }
}

std::filesystem::path resolve_target(const std::filesystem::path& venv) {
    try {
        return std::filesystem::weakly_canonical(std::filesystem::absolute(venv));
    } catch (const std::exception& e) {
        restore_failed(std::string("cannot resolve the venv path: ") + e.what() + "; nothing was changed");
    }
}

}  // namespace

RestoreResult Store::restore(const std::string& id, const std::filesystem::path& venv_path,
                             const std::string& keep_replaced_as,
                             const std::optional<SnapshotInfo>& unless_drifted) const {
    PhaseClock clock;
    const auto info = find(id);
    if (!info) {
        restore_failed("no snapshot " + id + " in " + snapshots_dir_.string() + "; nothing was changed");
    }
    std::optional<SnapshotInfo> keeper;
    if (!keep_replaced_as.empty() && keep_replaced_as != id) {
        keeper = find(keep_replaced_as);
    }
    const TreeIndex expected = index(*info);
    const auto venv = resolve_target(venv_path);
    if (venv != info->venv) {
        restore_failed("snapshot " + id + " was taken of " + info->venv.string() + ", not of " + venv.string() +
             "; nothing was changed");
    }
    const bool venv_exists = exists_nofollow(venv);
    clock.lap("load");
    const Staged staged = stage_unless_drifted(*this, *info, expected, venv, unless_drifted);
    clock.lap("stage");
    if (staged.unsynced) {
        sync_staged(*info, staged.tree, venv);
    }
    clock.lap("sync");
    const detail::Swap swap = detail::swap_into_place(staged.tree, venv, venv_exists);
    RestoreResult result{id, venv, "", swap.atomic, {}, {}};
    put_back_root_mtime(expected, venv, result);
    make_swap_durable(venv, result);
    clock.lap("swap");
    {
        // The old tree is no part of the venv now: it is disposed of while the venv is checked.
        std::vector<std::string> cleanup_warnings;
        std::jthread cleaner([&] { clean_up(*info, keeper, swap, cleanup_warnings); });
        // A hard-link ready tree was judged entry by entry as it was brought up to date, and the
        // exchange moved that very directory: walking it again would prove nothing more.
        if (info->strategy == Strategy::hardlink && swap.atomic) {
            result.tree_digest = info->tree_digest;
        } else {
            check_restored(*info, expected, venv, result);
        }
        remember_root(*this, *info, venv, result);
        clock.lap("check");
        cleaner.join();
        clock.lap("clean up");
        result.warnings.insert(result.warnings.end(), cleanup_warnings.begin(), cleanup_warnings.end());
    }
    result.phases = clock.take();
    return result;
}

std::uint64_t Store::prepare(const std::string& id, bool durable) const {
    const auto info = find(id);
    if (!info) {
        restore_failed("no snapshot " + id + " in " + snapshots_dir_.string());
    }
    if (info->strategy != Strategy::hardlink) {
        return 0;
    }
    const TreeIndex expected = index(*info);
    const Convergence converged = converge_links(expected, detail::objects_of(info->dir),
                                                 info->dir / detail::kReadyDir);
    if (!converged.damage.empty()) {
        restore_failed("snapshot " + id + " is damaged: " + join(converged.damage));
    }
    if (durable && converged.changes != 0) {
        base::sync_filesystem(info->dir / detail::kReadyDir);  // so a restore that finds it ready need not
    }
    return converged.changes;
}

}  // namespace stackup::snapshot

// Store::restore: the one path back from a broken venv. Its phases:
//   load     the snapshot's info and index (refused when they disagree)
//   stage    copy the snapshot tree to a hidden sibling of the venv, hashing as
//            it copies (hard links: check each file's integrity record first,
//            then link the files into the sibling, modes and mtimes from the
//            index); a tree that differs from its index is refused here,
//            before the venv is touched
//   swap     exchange the staged tree and the venv in one rename
//   settle   fsync the parent, remove the old tree (now at the staged path)
//   check    re-index the venv and compare it with the snapshot's index
// Every failure is Error(rollback_failed) saying which path holds what.

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "snapshot/copy.hpp"
#include "snapshot/store.hpp"
#include "snapshot/store_internal.hpp"

namespace stackup::snapshot {

namespace {

constexpr std::size_t kMaxListed = 20;

[[noreturn]] void fail(const std::string& message) {
    throw Error(ExitCode::rollback_failed, message);
}

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

void remove_quietly(const std::filesystem::path& path) {
    try {
        remove_tree(path);
    } catch (...) {  // best effort: the error being reported matters more
    }
}

bool exists_nofollow(const std::filesystem::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        return true;
    }
    if (errno != ENOENT) {
        fail("cannot stat " + path.string() + ": " + std::strerror(errno) + "; nothing was changed");
    }
    return false;
}

[[noreturn]] void refuse_damaged(const SnapshotInfo& info, const std::filesystem::path& venv,
                                const std::vector<std::string>& differences) {
    fail("snapshot " + info.id + " is damaged, refusing to restore it: its tree " +
         (info.dir / detail::kTreeDir).string() + " differs from its index: " + join(differences) + "; " +
         venv.string() + " was not touched");
}

// Hard links: the integrity check comes first, as linking cannot hash on the way.
void stage_linked(const SnapshotInfo& info, const TreeIndex& expected, const std::filesystem::path& venv,
                  const std::filesystem::path& staged) {
    const auto tree = info.dir / detail::kTreeDir;
    std::vector<std::string> differences;
    try {
        differences = check_links(expected, tree, detail::load_hashes(info.dir));
        if (differences.empty()) {
            stage_links(expected, tree, staged);
        }
    } catch (const std::exception& e) {
        fail("cannot restore snapshot " + info.id + ": " + e.what() + "; " + venv.string() +
             " was not touched; the snapshot is at " + info.dir.string());
    }
    if (!differences.empty()) {
        refuse_damaged(info, venv, differences);
    }
}

// Copies (or links) the snapshot tree next to the venv and checks it against
// the index; returns the staged path.
std::filesystem::path stage(const SnapshotInfo& info, const TreeIndex& expected,
                            const std::filesystem::path& venv) {
    const auto tree = info.dir / detail::kTreeDir;
    // A sibling: same filesystem, so the swap is a rename, and the same parent,
    // so the rename does not touch the tree's own ".." (or its mtime).
    const auto staged = venv.parent_path() / ("." + venv.filename().string() + ".stackup-restore-" +
                                              info.id + "-" + detail::random_hex4());
    if (info.strategy == Strategy::hardlink) {
        stage_linked(info, expected, venv, staged);
        return staged;
    }
    TreeIndex copied;
    try {
        copied = copy_tree(tree, staged, Contents::hash);
    } catch (const std::exception& e) {
        fail("cannot restore snapshot " + info.id + ": " + e.what() + "; " + venv.string() +
             " was not touched; the snapshot is at " + info.dir.string());
    }
    const auto differences = diff(expected, copied);
    if (!differences.empty()) {
        remove_quietly(staged);
        refuse_damaged(info, venv, differences);
    }
    return staged;
}

struct Swap {
    bool atomic = true;
    std::optional<std::filesystem::path> old_tree;  // where the replaced venv now is
};

bool lacks_exchange(int err) {
    return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP;
}

// Without RENAME_EXCHANGE (some filesystems, old kernels) the venv moves aside
// first, so for a moment its path is empty; each failure says where both trees are.
Swap swap_by_two_renames(const std::filesystem::path& staged, const std::filesystem::path& venv) {
    const auto aside = std::filesystem::path(staged.string() + "-old");
    if (::rename(venv.c_str(), aside.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        remove_quietly(staged);
        fail("cannot move " + venv.string() + " aside to " + aside.string() + ": " + why + "; " +
             venv.string() + " was not touched");
    }
    if (::rename(staged.c_str(), venv.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        if (::rename(aside.c_str(), venv.c_str()) == 0) {
            remove_quietly(staged);
            fail("cannot move the restored tree " + staged.string() + " to " + venv.string() + ": " + why +
                 "; " + venv.string() + " holds its old tree again");
        }
        fail("cannot move the restored tree " + staged.string() + " to " + venv.string() + ": " + why +
             "; " + venv.string() + " does NOT exist now: its old tree is at " + aside.string() +
             " and the restored tree at " + staged.string());
    }
    return Swap{false, aside};
}

Swap swap_into_place(const std::filesystem::path& staged, const std::filesystem::path& venv, bool venv_exists) {
    if (!venv_exists) {
        if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, venv.c_str(), RENAME_NOREPLACE) == 0 ||
            (lacks_exchange(errno) && ::rename(staged.c_str(), venv.c_str()) == 0)) {
            return Swap{true, std::nullopt};
        }
        const std::string why = std::strerror(errno);
        remove_quietly(staged);
        fail("cannot move the restored tree to " + venv.string() + ": " + why + "; " + venv.string() +
             " still does not exist");
    }
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, venv.c_str(), RENAME_EXCHANGE) == 0) {
        return Swap{true, staged};
    }
    if (lacks_exchange(errno)) {
        return swap_by_two_renames(staged, venv);
    }
    const std::string why = std::strerror(errno);
    remove_quietly(staged);
    fail("cannot swap the restored tree into " + venv.string() + ": " + why + "; " + venv.string() +
         " was not touched");
}

// After the swap the venv holds the restored tree: what goes wrong here is
// worth a warning, not a failed rollback.
void settle(const Swap& swap, const std::filesystem::path& venv, RestoreResult& result) {
    try {
        base::fsync_dir(venv.parent_path());  // make the swap itself durable
    } catch (const std::exception& e) {
        result.warnings.push_back(e.what());
    }
    try {
        if (swap.old_tree) {
            remove_tree(*swap.old_tree);
        }
    } catch (const std::exception& e) {
        result.warnings.push_back(std::string("could not remove the replaced tree: ") + e.what());
    }
}

void check_restored(const SnapshotInfo& info, const TreeIndex& expected, const std::filesystem::path& venv,
                    RestoreResult& result) {
    TreeIndex now;
    // Linked files are the snapshot's own inodes, just checked: metadata suffices.
    const Contents contents = info.strategy == Strategy::hardlink ? Contents::metadata_only : Contents::hash;
    try {
        now = index_tree(venv, contents);
    } catch (const std::exception& e) {
        fail("restored snapshot " + info.id + " into " + venv.string() + ", but cannot re-index it: " +
             e.what() + "; the snapshot is intact at " + info.dir.string());
    }
    const auto differences = diff(expected, now);
    if (!differences.empty()) {
        fail("restored snapshot " + info.id + " into " + venv.string() +
             ", but the venv differs from the snapshot: " + join(differences) +
             "; the snapshot is intact at " + info.dir.string());
    }
    result.tree_digest = tree_digest(now);
}

std::filesystem::path resolve_target(const std::filesystem::path& venv) {
    try {
        return std::filesystem::weakly_canonical(std::filesystem::absolute(venv));
    } catch (const std::exception& e) {
        fail(std::string("cannot resolve the venv path: ") + e.what() + "; nothing was changed");
    }
}

}  // namespace

RestoreResult Store::restore(const std::string& id, const std::filesystem::path& venv_path) const {
    const auto info = find(id);
    if (!info) {
        fail("no snapshot " + id + " in " + snapshots_dir_.string() + "; nothing was changed");
    }
    const TreeIndex expected = index(*info);
    const auto venv = resolve_target(venv_path);
    if (venv != info->venv) {
        fail("snapshot " + id + " was taken of " + info->venv.string() + ", not of " + venv.string() +
             "; nothing was changed");
    }
    const bool venv_exists = exists_nofollow(venv);
    const auto staged = stage(*info, expected, venv);
    const Swap swap = swap_into_place(staged, venv, venv_exists);
    RestoreResult result{id, venv, "", swap.atomic, {}};
    settle(swap, venv, result);
    check_restored(*info, expected, venv, result);
    return result;
}

}  // namespace stackup::snapshot

// Generations: which snapshot the live venv is, and the switch between trees.
// A hard-link snapshot's tree is either the venv (while the venv's root
// directory is the inode the snapshot records) or its `ready` folder; a switch
// is one RENAME_EXCHANGE of the two, so the venv's path only ever holds a whole tree.

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <system_error>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "snapshot/store.hpp"
#include "snapshot/store_internal.hpp"
#include "snapshot/store_json.hpp"
#include "snapshot/swap.hpp"

namespace stackup::snapshot {

namespace {

std::optional<struct stat> lstat_of(const std::filesystem::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        return std::nullopt;
    }
    return st;
}

// Two empty directories exchanged and removed: whether this filesystem has RENAME_EXCHANGE.
std::optional<std::string> probe_exchange(const std::filesystem::path& dir) {
    const auto a = dir / (".exchange-probe-" + detail::random_hex4() + "-a");
    const auto b = std::filesystem::path(a.string() + "b");
    if (::mkdir(a.c_str(), 0700) != 0) {
        return "cannot create " + a.string() + ": " + std::strerror(errno);
    }
    std::optional<std::string> why;
    if (::mkdir(b.c_str(), 0700) != 0) {
        why = "cannot create " + b.string() + ": " + std::strerror(errno);
    } else if (const int err = detail::exchange_paths(a, b); err != 0) {
        why = detail::lacks_exchange(err) ? "the filesystem of " + dir.string() + " cannot exchange two directories"
                                          : "exchanging two directories in " + dir.string() + " failed: " + std::strerror(err);
    }
    ::rmdir(b.c_str());
    ::rmdir(a.c_str());
    return why;
}

}  // namespace

std::filesystem::path Store::tree_of(const SnapshotInfo& info) const {
    return info.dir / detail::kReadyDir;
}

std::optional<std::string> Store::exchange_blocker(const std::filesystem::path& venv) const {
    const auto root = lstat_of(venv);
    const auto parent = lstat_of(venv.parent_path());
    std::error_code ec;
    std::filesystem::create_directories(snapshots_dir_, ec);
    const auto store = lstat_of(snapshots_dir_);
    if (!root || !parent || !store) {
        return "cannot stat " + venv.string() + " or " + snapshots_dir_.string();
    }
    struct statx sx {};
    const bool mount_root = ::statx(AT_FDCWD, venv.c_str(), AT_SYMLINK_NOFOLLOW, 0, &sx) == 0 &&
                            (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
                            (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
    if (mount_root || root->st_dev != parent->st_dev || root->st_ino == parent->st_ino) {
        return venv.string() + " is a mount point: a rename cannot replace it";
    }
    if (root->st_dev != store->st_dev) {
        return "the state dir " + snapshots_dir_.parent_path().string() + " is on another filesystem than " +
               venv.string();
    }
    return probe_exchange(snapshots_dir_);
}

std::vector<std::string> Store::drift(const SnapshotInfo& info, const std::filesystem::path& tree,
                                      FileRecords* learn) const {
    // The recorded index is read and checked while the tree is walked: two costs of one size.
    auto recorded = std::async(std::launch::async, [&] { return index(info); });
    TreeIndex now = index_tree(tree, Contents::records, learn);
    return diff_drift(recorded.get(), now);
}

std::optional<SnapshotInfo> Store::candidate(const std::filesystem::path& path) const {
    std::error_code ec;
    const auto venv = std::filesystem::weakly_canonical(std::filesystem::absolute(path), ec);
    const auto root = lstat_of(venv);
    if (!root) {
        return std::nullopt;
    }
    for (const auto& info : list()) {  // newest first: in place, several share one root
        if (info.strategy == Strategy::hardlink && info.root_inode == static_cast<std::uint64_t>(root->st_ino) &&
            info.root_device == static_cast<std::uint64_t>(root->st_dev) && info.venv == venv) {
            return info;
        }
    }
    return std::nullopt;
}

bool Store::drifted(const SnapshotInfo& info, const std::filesystem::path& venv, FileRecords* learn) const {
    try {
        return !drift(info, venv, learn).empty();
    } catch (const std::exception&) {  // unreadable: not the venv's generation
        return true;
    }
}

std::optional<SnapshotInfo> Store::live(const std::filesystem::path& venv) const {
    auto info = candidate(venv);
    if (info && drifted(*info, venv)) {
        return std::nullopt;
    }
    return info;
}

void Store::exchange(const SnapshotInfo& holder, const std::filesystem::path& venv) const {
    const auto tree = tree_of(holder);
    if (const int err = detail::exchange_paths(tree, venv); err != 0) {
        throw base::errno_error(err, "cannot exchange " + tree.string() + " with " + venv.string());
    }
    // Durable before anything is recorded of it; a failure here changes nothing that happened.
    try {
        base::fsync_dir(venv.parent_path());
        base::fsync_dir(holder.dir);
    } catch (const std::exception&) {
    }
}

void Store::update(const SnapshotInfo& info) const {
    base::write_file_atomic(info.dir / detail::kInfoFile, json_format::info_to_json(info));
}

}  // namespace stackup::snapshot

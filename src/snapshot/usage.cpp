// Store::usage(): what the snapshots really cost on disk, shared inodes counted once.
#include <sys/stat.h>

#include <map>
#include <set>
#include <utility>

#include "snapshot/store.hpp"

namespace stackup::snapshot {
namespace {

using InodeKey = std::pair<dev_t, ino_t>;

struct Inode {
    struct stat st {};
    std::uint64_t links_seen = 0;  // paths to it under the walked dir
};

std::uint64_t disk_bytes_of(const struct stat& st) {
    return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

// Every inode under `dir` (itself included), without following symlinks.
std::map<InodeKey, Inode> inodes_under(const std::filesystem::path& dir) {
    std::map<InodeKey, Inode> out;
    auto add = [&out](const std::filesystem::path& path) {
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0) {
            auto& inode = out[{st.st_dev, st.st_ino}];
            inode.st = st;
            ++inode.links_seen;
        }
    };
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        return out;
    }
    add(dir);
    for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        add(it->path());
    }
    return out;
}

SnapshotUsage usage_of(const SnapshotInfo& info) {
    SnapshotUsage usage{info.id, 0, 0};
    for (const auto& [key, inode] : inodes_under(info.dir)) {
        const auto& st = inode.st;
        if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
            // Once: the ready tree links the flat tree's inodes again.
            usage.apparent_bytes += static_cast<std::uint64_t>(st.st_size);
        }
        // A directory is never hard-linked; any other inode is ours alone when all its links are here.
        if (S_ISDIR(st.st_mode) || inode.links_seen >= static_cast<std::uint64_t>(st.st_nlink)) {
            usage.own_bytes += disk_bytes_of(st);
        }
    }
    return usage;
}

}  // namespace

StoreUsage Store::usage() const {
    StoreUsage out;
    for (const auto& info : list()) {
        out.snapshots.push_back(usage_of(info));
    }
    for (const auto& [key, inode] : inodes_under(snapshots_dir_)) {
        out.disk_bytes += disk_bytes_of(inode.st);
    }
    return out;
}

}  // namespace stackup::snapshot

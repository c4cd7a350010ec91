// Store::usage(): what the snapshots really cost on disk, shared inodes counted once;
// a hard-link snapshot's files are the objects its index names (link.hpp).
#include <sys/stat.h>

#include <map>
#include <set>
#include <utility>

#include "snapshot/link.hpp"
#include "snapshot/store.hpp"
#include "snapshot/store_internal.hpp"

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

// The inodes each hard-link snapshot's index names, and how many snapshots name each.
struct References {
    std::map<std::string, std::set<std::uint64_t>> by_snapshot;  // id -> inodes
    std::map<std::uint64_t, unsigned> count;                     // inode -> snapshots naming it
};

References references_of(const Store& store, const std::vector<SnapshotInfo>& infos) {
    References out;
    for (const auto& info : infos) {
        if (info.strategy != Strategy::hardlink) {
            continue;
        }
        std::set<std::uint64_t> inodes;
        try {
            add_referenced(store.index(info), inodes);
        } catch (const std::exception&) {
            // Unreadable: it is counted by what lies in its own dir.
        }
        for (auto inode : inodes) {
            ++out.count[inode];
        }
        out.by_snapshot[info.id] = std::move(inodes);
    }
    return out;
}

SnapshotUsage usage_of(const SnapshotInfo& info, const References& refs) {
    SnapshotUsage usage{info.id, 0, 0};
    auto inodes = inodes_under(info.dir);
    // Its objects: one more link each, shared when another snapshot names them too.
    std::set<InodeKey> shared;
    const auto mine = refs.by_snapshot.find(info.id);
    if (mine != refs.by_snapshot.end()) {
        const auto objects = detail::objects_of(info.dir);
        for (const auto inode : mine->second) {
            struct stat st {};
            if (::lstat(object_file(objects, inode).c_str(), &st) != 0 || st.st_ino != inode) {
                continue;
            }
            auto& seen = inodes[{st.st_dev, st.st_ino}];
            seen.st = st;
            ++seen.links_seen;
            if (refs.count.at(inode) > 1) {
                shared.insert({st.st_dev, st.st_ino});
            }
        }
    }
    for (const auto& [key, inode] : inodes) {
        const auto& st = inode.st;
        if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
            // Once: the ready tree links the objects' inodes again.
            usage.apparent_bytes += static_cast<std::uint64_t>(st.st_size);
        }
        // A directory is never hard-linked; any other inode is ours alone when
        // all its links are here and no other snapshot needs its object.
        if (S_ISDIR(st.st_mode) ||
            (inode.links_seen >= static_cast<std::uint64_t>(st.st_nlink) && shared.count(key) == 0)) {
            usage.own_bytes += disk_bytes_of(st);
        }
    }
    return usage;
}

}  // namespace

StoreUsage Store::usage() const {
    StoreUsage out;
    const auto infos = list();
    const References refs = references_of(*this, infos);
    for (const auto& info : infos) {
        out.snapshots.push_back(usage_of(info, refs));
    }
    for (const auto& [key, inode] : inodes_under(snapshots_dir_)) {
        out.disk_bytes += disk_bytes_of(inode.st);
    }
    return out;
}

}  // namespace stackup::snapshot

// Store::usage(): what the snapshots really cost on disk, shared inodes counted once;
// a hard-link snapshot's files are the objects its index names (link.hpp).
//
// One walk of the whole store. Generations share most inodes (each one's ready tree links
// the same objects), so a directory entry whose inode was already seen is not stat'ed again:
// its number comes with the directory listing (d_ino), and one lstat per inode suffices.
// Where a filesystem's d_ino is not its st_ino the lookup misses and the entry is stat'ed,
// which is slower but counts the same.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>

#include "base/fs.hpp"
#include "snapshot/link.hpp"
#include "snapshot/store.hpp"
#include "snapshot/store_internal.hpp"

namespace stackup::snapshot {
namespace {

// Who a path under the store belongs to: a snapshot (its index in the list), the objects, or nothing.
constexpr int kObjects = -1;
constexpr int kNobody = -2;

struct Inode {
    struct stat st {};
    std::uint32_t object_links = 0;                              // paths to it under .objects
    std::vector<std::pair<int, std::uint32_t>> snapshot_links;  // (snapshot, paths to it under its dir)
};

class StoreWalk {
public:
    std::unordered_map<InodeKey, Inode, InodeKeyHash> inodes;
    std::vector<std::vector<InodeKey>> under;  // per snapshot: the inodes its dir holds, each once

    explicit StoreWalk(std::size_t snapshots) : under(snapshots) {}

    // `fd`: the open directory `owner` holds at this level; `st`: its own stat.
    void directory(int fd, const struct stat& st, int owner, const std::vector<std::string>* ids) {
        count({st.st_dev, st.st_ino}, st, owner);
        std::vector<base::DirEntry> entries;
        try {
            entries = base::list_dir(fd, {});
        } catch (const std::exception&) {  // unreadable: what it holds is not counted
            return;
        }
        for (const auto& entry : entries) {
            const int child_owner = ids ? owner_of(entry.name, *ids) : owner;
            this->entry(fd, st.st_dev, entry, child_owner);
        }
    }

private:
    static int owner_of(const std::string& name, const std::vector<std::string>& ids) {
        if (name == detail::kObjectsDir) {
            return kObjects;
        }
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (ids[i] == name) {
                return static_cast<int>(i);
            }
        }
        return kNobody;  // an incomplete snapshot, the trash, a stray file: on disk all the same
    }

    void entry(int parent, dev_t dev, const base::DirEntry& e, int owner) {
        if (e.type == DT_DIR) {
            base::UniqueFd fd(::openat(parent, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            struct stat st {};
            if (fd && ::fstat(fd.get(), &st) == 0) {
                directory(fd.get(), st, owner, nullptr);
            }
            return;
        }
        if (e.type != DT_UNKNOWN && e.inode != 0) {
            if (const auto known = inodes.find({static_cast<std::uint64_t>(dev), e.inode}); known != inodes.end()) {
                count(known->first, known->second.st, owner);
                return;
            }
        }
        struct stat st {};
        if (::fstatat(parent, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            return;
        }
        if (S_ISDIR(st.st_mode)) {  // DT_UNKNOWN that is a directory
            base::UniqueFd fd(::openat(parent, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (fd) {
                directory(fd.get(), st, owner, nullptr);
            }
            return;
        }
        count({st.st_dev, st.st_ino}, st, owner);
    }

    void count(const InodeKey& key, const struct stat& st, int owner) {
        auto [it, fresh] = inodes.try_emplace(key);
        Inode& inode = it->second;
        if (fresh) {
            inode.st = st;
        }
        if (owner == kObjects) {
            ++inode.object_links;
        } else if (owner >= 0) {
            for (auto& [snapshot, links] : inode.snapshot_links) {
                if (snapshot == owner) {
                    ++links;
                    return;
                }
            }
            inode.snapshot_links.emplace_back(owner, 1);
            under[static_cast<std::size_t>(owner)].push_back(key);
        }
    }
};

std::uint64_t disk_bytes_of(const struct stat& st) {
    return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

// The inodes each hard-link snapshot's index names, and how many snapshots name each.
struct References {
    std::vector<std::set<std::uint64_t>> by_snapshot;  // per snapshot (the list's order): inodes
    std::unordered_map<std::uint64_t, unsigned> count;  // inode -> snapshots naming it
};

References references_of(const Store& store, const std::vector<SnapshotInfo>& infos) {
    References out;
    out.by_snapshot.resize(infos.size());
    for (std::size_t i = 0; i < infos.size(); ++i) {
        if (infos[i].strategy != Strategy::hardlink) {
            continue;
        }
        try {
            add_referenced(store.index(infos[i]), out.by_snapshot[i]);
        } catch (const std::exception&) {
            // Unreadable: it is counted by what lies in its own dir.
        }
        for (auto inode : out.by_snapshot[i]) {
            ++out.count[inode];
        }
    }
    return out;
}

std::uint32_t links_under(const Inode& inode, int snapshot) {
    for (const auto& [owner, links] : inode.snapshot_links) {
        if (owner == snapshot) {
            return links;
        }
    }
    return 0;
}

// A snapshot's inodes: those under its dir, and the objects its index names (one more link
// each, shared when another snapshot names them too).
SnapshotUsage usage_of(const SnapshotInfo& info, int i, const StoreWalk& walk, const References& refs, dev_t dev) {
    SnapshotUsage usage{info.id, 0, 0};
    auto add = [&](const Inode& inode, std::uint64_t links, bool shared) {
        const auto& st = inode.st;
        if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
            usage.apparent_bytes += static_cast<std::uint64_t>(st.st_size);  // once: the ready tree links objects again
        }
        // A directory is never hard-linked; any other inode is ours alone when all its links
        // are here and no other snapshot needs its object.
        if (S_ISDIR(st.st_mode) || (links >= static_cast<std::uint64_t>(st.st_nlink) && !shared)) {
            usage.own_bytes += disk_bytes_of(st);
        }
    };
    const auto& referenced = refs.by_snapshot[static_cast<std::size_t>(i)];
    auto object_of = [&](std::uint64_t ino) -> const Inode* {
        const auto it = walk.inodes.find({static_cast<std::uint64_t>(dev), ino});
        return it != walk.inodes.end() && it->second.object_links > 0 ? &it->second : nullptr;
    };
    for (const auto& key : walk.under[static_cast<std::size_t>(i)]) {
        const Inode& inode = walk.inodes.at(key);
        const bool mine = key.dev == static_cast<std::uint64_t>(dev) && referenced.count(key.ino) != 0 &&
                          object_of(key.ino) != nullptr;
        add(inode, links_under(inode, i) + (mine ? 1 : 0), mine && refs.count.at(key.ino) > 1);
    }
    for (const auto ino : referenced) {
        const Inode* inode = object_of(ino);
        if (inode && links_under(*inode, i) == 0) {  // an object its dir does not link (no ready tree)
            add(*inode, 1, refs.count.at(ino) > 1);
        }
    }
    return usage;
}

}  // namespace

StoreUsage Store::usage() const {
    StoreUsage out;
    const auto infos = list();
    base::UniqueFd fd(::open(snapshots_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0) {
        return out;  // an absent store is empty
    }
    const References refs = references_of(*this, infos);
    std::vector<std::string> ids;
    for (const auto& info : infos) {
        ids.push_back(info.id);
    }
    StoreWalk walk(infos.size());
    walk.directory(fd.get(), st, kNobody, &ids);
    for (std::size_t i = 0; i < infos.size(); ++i) {
        out.snapshots.push_back(usage_of(infos[i], static_cast<int>(i), walk, refs, st.st_dev));
    }
    for (const auto& [key, inode] : walk.inodes) {
        out.disk_bytes += disk_bytes_of(inode.st);
    }
    return out;
}

}  // namespace stackup::snapshot

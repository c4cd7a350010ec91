#include "snapshot/link.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/fs.hpp"
#include "snapshot/copy.hpp"
#include "snapshot/integrity.hpp"
#include "snapshot/parallel.hpp"

namespace stackup::snapshot {

namespace {


// The inode number an entry's name says, or 0 for a name that is none.
std::uint64_t named_inode(const std::string& name) {
    std::uint64_t inode = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), inode);
    return ec == std::errc() && end == name.data() + name.size() && object_name(inode) == name ? inode : 0;
}

// The inodes the store holds: entries whose name is the inode they link.
std::unordered_set<std::uint64_t> held_inodes(int objects_fd, const std::filesystem::path& objects) {
    std::unordered_set<std::uint64_t> out;
    for (const auto& entry : base::list_dir(objects_fd, objects)) {
        if (entry.inode != 0 && named_inode(entry.name) == entry.inode) {
            out.insert(entry.inode);
        }
    }
    return out;
}

// Links the file `e` of `src` into the store open as `objects_fd` and records
// its inode as it is after the link (linking moves the ctime). An entry of
// that name holding another inode is stale (its inode is gone, or the store
// was copied): it is replaced.
void link_one(TreeEntry& e, const std::filesystem::path& src, int objects_fd, const std::filesystem::path& objects) {
    const auto from = src / e.path;
    const std::string name = object_name(e.inode);
    if (::linkat(AT_FDCWD, from.c_str(), objects_fd, name.c_str(), 0) != 0) {
        if (errno != EEXIST || ::unlinkat(objects_fd, name.c_str(), 0) != 0 ||
            ::linkat(AT_FDCWD, from.c_str(), objects_fd, name.c_str(), 0) != 0) {
            throw base::errno_error(errno, "cannot hard-link " + from.string() + " to " + (objects / name).string());
        }
    }
    struct stat st {};
    if (::fstatat(objects_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        throw base::errno_error(errno, "cannot stat " + (objects / name).string());
    }
    if (!S_ISREG(st.st_mode) || st.st_ino != e.inode) {
        throw std::runtime_error("changed while being linked: " + from.string());
    }
    e.size = static_cast<std::uint64_t>(st.st_size);
    e.mode = st.st_mode & 07777;
    e.mtime_ns = base::to_ns(st.st_mtim);
    e.ctime_ns = base::to_ns(st.st_ctim);
}

// Best effort, after a failure: what this call linked goes again.
void unlink_new(int objects_fd, const std::vector<TreeEntry*>& linked) {
    for (const TreeEntry* e : linked) {
        ::unlinkat(objects_fd, object_name(e->inode).c_str(), 0);
    }
}

}  // namespace

std::string object_name(std::uint64_t inode) {
    return std::to_string(inode);
}

std::filesystem::path object_file(const std::filesystem::path& objects, std::uint64_t inode) {
    return objects / object_name(inode);
}

Linked link_tree(const std::filesystem::path& src, const std::filesystem::path& objects) {
    Linked out{index_tree(src, Contents::records), 0};
    if (::mkdir(objects.c_str(), 0700) != 0 && errno != EEXIST) {
        throw base::errno_error(errno, "cannot create directory " + objects.string());
    }
    const base::UniqueFd objects_fd = base::open_file(objects, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    const auto held = held_inodes(objects_fd.get(), objects);
    // By inode: two paths of the venv may be links of one inode (uv links from its cache).
    std::unordered_map<std::uint64_t, std::vector<TreeEntry*>> missing_by_inode;
    std::vector<TreeEntry*> missing;
    for (TreeEntry& e : out.index.entries) {
        if (e.type == EntryType::file && held.count(e.inode) == 0) {
            auto& same = missing_by_inode[e.inode];
            if (same.empty()) {
                missing.push_back(&e);
            }
            same.push_back(&e);
        }
    }
    std::vector<TreeEntry*> linked;
    std::mutex linked_mutex;
    struct NoState {};
    try {
        detail::for_each_parallel<NoState>(missing, [&](TreeEntry* e, NoState&) {
            link_one(*e, src, objects_fd.get(), objects);
            std::lock_guard<std::mutex> lock(linked_mutex);
            linked.push_back(e);
        });
        if (!missing.empty()) {
            base::fsync_dir(objects);  // the new names; the index that needs them is written after
        }
    } catch (...) {
        unlink_new(objects_fd.get(), linked);
        throw;
    }
    for (const TreeEntry* first : missing) {
        for (TreeEntry* other : missing_by_inode[first->inode]) {
            other->size = first->size;
            other->mode = first->mode;
            other->mtime_ns = first->mtime_ns;
            other->ctime_ns = first->ctime_ns;
        }
    }
    out.linked = missing.size();
    return out;
}

std::vector<std::string> check_links(const TreeIndex& expected, const std::filesystem::path& objects) {
    std::vector<std::string> out;
    for (const TreeEntry& e : expected.entries) {
        if (e.type != EntryType::file) {
            continue;  // dirs and symlinks live only in the index, which snapshot.json's digest protects
        }
        const auto object = object_file(objects, e.inode);
        const auto seen = lstat_record(object);
        if (!seen) {
            out.push_back("missing: " + e.path + " (" + object.string() + ")");
        } else if (seen->type != EntryType::file || seen->inode != e.inode) {
            out.push_back("content differs: " + e.path + " (" + object.string() + " is another file)");
        } else if (auto problem = judge_file(e, *seen, object, e.sha256)) {
            out.push_back(std::move(*problem));
        }
    }
    return out;
}

void add_referenced(const TreeIndex& index, std::set<std::uint64_t>& referenced) {
    for (const TreeEntry& e : index.entries) {
        if (e.type == EntryType::file && e.inode != 0) {
            referenced.insert(e.inode);
        }
    }
}

std::uint64_t drop_unreferenced(const std::filesystem::path& objects, const std::set<std::uint64_t>& referenced) {
    struct stat st {};
    if (::lstat(objects.c_str(), &st) != 0 && errno == ENOENT) {
        return 0;
    }
    const base::UniqueFd objects_fd = base::open_file(objects, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    std::uint64_t dropped = 0;
    for (const auto& [name, type, inode] : base::list_dir(objects_fd.get(), objects)) {
        if (referenced.count(inode) != 0 && named_inode(name) == inode) {
            continue;
        }
        if (::unlinkat(objects_fd.get(), name.c_str(), 0) != 0) {
            if (errno != EISDIR) {
                throw base::errno_error(errno, "cannot remove " + (objects / name).string());
            }
            remove_tree(objects / name);
        }
        ++dropped;
    }
    return dropped;
}

}  // namespace stackup::snapshot

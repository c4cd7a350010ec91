#include "snapshot/link.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <stdexcept>

#include "base/fs.hpp"
#include "base/sha256.hpp"
#include "snapshot/copy.hpp"

namespace stackup::snapshot {

namespace {

std::int64_t to_ns(const struct timespec& ts) {
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct timespec from_ns(std::int64_t ns) {
    return {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

struct stat lstat_or_throw(const std::filesystem::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        throw base::errno_error(errno, "cannot stat " + path.string());
    }
    return st;
}

void set_mtime(const std::filesystem::path& path, std::int64_t mtime_ns) {
    const struct timespec times[2] = {{0, UTIME_OMIT}, from_ns(mtime_ns)};
    if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
        throw base::errno_error(errno, "cannot set times of " + path.string());
    }
}

void set_mode(const std::filesystem::path& path, std::uint32_t mode) {
    if (::chmod(path.c_str(), mode) != 0) {
        throw base::errno_error(errno, "cannot chmod " + path.string());
    }
}

// Builds a restore's staging tree from the index: directories and symlinks
// recreated from it, files linked from the flat snapshot tree, then
// directory metadata children first, as the copy strategy does.
class Linker {
public:
    Linker(std::filesystem::path flat, std::filesystem::path dst) : flat_(std::move(flat)), dst_(std::move(dst)) {}

    void run(const TreeIndex& plan) {
        try {
            for (std::size_t i = 0; i < plan.entries.size(); ++i) {
                create(plan.entries[i], i);
            }
            for (auto it = plan.entries.rbegin(); it != plan.entries.rend(); ++it) {
                if (it->type == EntryType::dir) {
                    set_mode(to(*it), it->mode);
                    set_mtime(to(*it), it->mtime_ns);
                }
            }
        } catch (...) {
            if (created_root_) {
                discard_after_failure(dst_);
            }
            throw;
        }
    }

private:
    std::filesystem::path to(const TreeEntry& e) const { return e.path == "." ? dst_ : dst_ / e.path; }

    void create(const TreeEntry& e, std::size_t position) {
        switch (e.type) {
            case EntryType::dir:
                // Owner-writable until the second pass, whatever its final mode.
                if (::mkdir(to(e).c_str(), 0700) != 0) {
                    throw base::errno_error(errno, "cannot create directory " + to(e).string());
                }
                created_root_ = created_root_ || e.path == ".";
                break;
            case EntryType::file:
                link_file(e, linked_file(flat_, position));
                break;
            case EntryType::symlink:
                if (::symlink(e.target.c_str(), to(e).c_str()) != 0) {
                    throw base::errno_error(errno, "cannot create symlink " + to(e).string());
                }
                set_mtime(to(e), e.mtime_ns);
                break;
        }
    }

    void link_file(const TreeEntry& e, const std::filesystem::path& from) {
        if (::link(from.c_str(), to(e).c_str()) != 0) {
            throw base::errno_error(errno, "cannot hard-link " + from.string() + " to " + to(e).string());
        }
        const struct stat st = lstat_or_throw(to(e));
        // Only where they differ: an unneeded chmod would move the ctime for nothing.
        if ((st.st_mode & 07777) != e.mode) {
            set_mode(to(e), e.mode);
        }
        if (to_ns(st.st_mtim) != e.mtime_ns) {
            set_mtime(to(e), e.mtime_ns);
        }
    }

    std::filesystem::path flat_;
    std::filesystem::path dst_;
    bool created_root_ = false;
};

// Links each file of `index` (entries of `src`) into the flat `dst` and records its inode.
void link_flat(TreeIndex& index, const std::filesystem::path& src, const std::filesystem::path& dst) {
    for (std::size_t i = 0; i < index.entries.size(); ++i) {
        TreeEntry& e = index.entries[i];
        if (e.type != EntryType::file) {
            continue;
        }
        const auto from = src / e.path;
        const auto to = linked_file(dst, i);
        if (::link(from.c_str(), to.c_str()) != 0) {
            throw base::errno_error(errno, "cannot hard-link " + from.string() + " to " + to.string());
        }
        // After the link: linking itself moves the inode's ctime.
        const struct stat st = lstat_or_throw(to);
        if (!S_ISREG(st.st_mode)) {
            throw std::runtime_error("changed type while being linked: " + from.string());
        }
        e.size = static_cast<std::uint64_t>(st.st_size);
        e.mode = st.st_mode & 07777;
        e.mtime_ns = to_ns(st.st_mtim);
        e.inode = st.st_ino;
        e.ctime_ns = to_ns(st.st_ctim);
    }
}

std::string describe_change(const TreeEntry& e, const struct stat& st) {
    std::string out;
    if (st.st_ino != e.inode) {
        out += "inode " + std::to_string(e.inode) + " -> " + std::to_string(st.st_ino) + ", ";
    }
    if (static_cast<std::uint64_t>(st.st_size) != e.size) {
        out += "size " + std::to_string(e.size) + " -> " + std::to_string(st.st_size) + ", ";
    }
    if (to_ns(st.st_mtim) != e.mtime_ns) {
        out += "mtime " + format_time_ns(e.mtime_ns) + " -> " + format_time_ns(to_ns(st.st_mtim)) + ", ";
    }
    return out;
}

// One file of a hard-link snapshot; appends its problem, if any.
void check_file(const TreeEntry& e, const std::filesystem::path& path, const FileHashes& hashes,
                std::vector<std::string>& out) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        out.push_back(errno == ENOENT ? "missing: " + e.path : "unreadable: " + e.path);
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        out.push_back("type differs: " + e.path + ": file -> not a file");
        return;
    }
    const bool same = st.st_ino == e.inode && static_cast<std::uint64_t>(st.st_size) == e.size &&
                      to_ns(st.st_mtim) == e.mtime_ns;
    const bool ctime_moved = to_ns(st.st_ctim) != e.ctime_ns;
    if (same && !ctime_moved) {
        return;
    }
    const auto hash = hashes.find(e.path);
    if (hash != hashes.end()) {
        if (base::sha256_file(path) != hash->second) {
            out.push_back("content differs: " + e.path);
        }
        return;
    }
    if (!same) {
        out.push_back("content may differ: " + e.path + " (" + describe_change(e, st) +
                      "no sha256 recorded to tell a touch from a write)");
    }
    // same, only ctime moved, no hash: a chmod or a link count change (uv's unlink); see store.hpp.
}

}  // namespace

std::filesystem::path linked_file(const std::filesystem::path& tree, std::size_t position) {
    return tree / std::to_string(position);
}

TreeIndex link_tree(const std::filesystem::path& src, const std::filesystem::path& dst) {
    TreeIndex index = index_tree(src, Contents::metadata_only);
    if (::mkdir(dst.c_str(), 0700) != 0) {
        throw base::errno_error(errno, "cannot create directory " + dst.string());
    }
    try {
        link_flat(index, src, dst);
        base::sync_filesystem(dst);
    } catch (...) {
        try {
            remove_tree(dst);
        } catch (...) {  // the first error is the one worth reporting
        }
        throw;
    }
    return index;
}

bool record_holds(const TreeEntry& e, const std::filesystem::path& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == e.inode &&
           static_cast<std::uint64_t>(st.st_size) == e.size && to_ns(st.st_mtim) == e.mtime_ns &&
           to_ns(st.st_ctim) == e.ctime_ns;
}

std::vector<std::string> check_links(const TreeIndex& expected, const std::filesystem::path& tree,
                                     const FileHashes& hashes) {
    std::vector<std::string> out;
    std::set<std::string> names;  // what the flat tree should hold
    for (std::size_t i = 0; i < expected.entries.size(); ++i) {
        const TreeEntry& e = expected.entries[i];
        if (e.type == EntryType::file) {
            names.insert(std::to_string(i));
            check_file(e, linked_file(tree, i), hashes, out);
        }
    }
    // Dirs and symlinks live only in the index, which snapshot.json's digest protects.
    for (const auto& entry : std::filesystem::directory_iterator(tree)) {
        if (names.count(entry.path().filename().string()) == 0) {
            out.push_back("extra: " + entry.path().string());
        }
    }
    return out;
}

void stage_links(const TreeIndex& expected, const std::filesystem::path& tree,
                 const std::filesystem::path& staged) {
    Linker(tree, staged).run(expected);
    base::sync_filesystem(staged);
}

}  // namespace stackup::snapshot

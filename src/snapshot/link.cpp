#include "snapshot/link.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <stdexcept>

#include "base/fs.hpp"
#include "snapshot/copy.hpp"
#include "snapshot/integrity.hpp"
#include "snapshot/parallel.hpp"

namespace stackup::snapshot {

namespace {

std::int64_t to_ns(const struct timespec& ts) {
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Links the file at `position` of `index` (an entry of `src`) into the flat
// tree open as `flat` and records its inode.
void link_one(TreeIndex& index, std::size_t position, const std::filesystem::path& src, int flat,
              const std::filesystem::path& dst) {
    TreeEntry& e = index.entries[position];
    const auto from = src / e.path;
    const std::string name = std::to_string(position);
    if (::linkat(AT_FDCWD, from.c_str(), flat, name.c_str(), 0) != 0) {
        throw base::errno_error(errno, "cannot hard-link " + from.string() + " to " + (dst / name).string());
    }
    // After the link: linking itself moves the inode's ctime.
    struct stat st {};
    if (::fstatat(flat, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        throw base::errno_error(errno, "cannot stat " + (dst / name).string());
    }
    if (!S_ISREG(st.st_mode)) {
        throw std::runtime_error("changed type while being linked: " + from.string());
    }
    e.size = static_cast<std::uint64_t>(st.st_size);
    e.mode = st.st_mode & 07777;
    e.mtime_ns = to_ns(st.st_mtim);
    e.inode = st.st_ino;
    e.ctime_ns = to_ns(st.st_ctim);
}

// Links every file of `index` into the flat `dst`, two threads at a time (the
// kernel's share of a link, the lookups, runs in parallel; the entry itself is
// added under the directory's lock).
void link_flat(TreeIndex& index, const std::filesystem::path& src, const std::filesystem::path& dst) {
    const base::UniqueFd flat = base::open_file(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    std::vector<std::size_t> files;
    for (std::size_t i = 0; i < index.entries.size(); ++i) {
        if (index.entries[i].type == EntryType::file) {
            files.push_back(i);
        }
    }
    struct NoState {};
    detail::for_each_parallel<NoState>(files,
                                       [&](std::size_t i, NoState&) { link_one(index, i, src, flat.get(), dst); });
}

}  // namespace

const std::string& hash_of(const FileHashes& hashes, const std::string& path) {
    static const std::string none;
    const auto it = hashes.find(path);
    return it != hashes.end() ? it->second : none;
}

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
        discard_after_failure(dst);
        throw;
    }
    return index;
}

bool record_holds(const TreeEntry& e, const std::filesystem::path& path) {
    const auto seen = lstat_record(path);
    return seen && seen->type == EntryType::file && seen->inode == e.inode && seen->size == e.size &&
           seen->mtime_ns == e.mtime_ns && seen->ctime_ns == e.ctime_ns;
}

std::vector<std::string> check_links(const TreeIndex& expected, const std::filesystem::path& tree,
                                     const FileHashes& hashes) {
    std::vector<std::string> out;
    std::set<std::string> names;  // what the flat tree should hold
    for (std::size_t i = 0; i < expected.entries.size(); ++i) {
        const TreeEntry& e = expected.entries[i];
        if (e.type == EntryType::file) {
            names.insert(std::to_string(i));
            if (auto problem = judge_path(e, linked_file(tree, i), hash_of(hashes, e.path))) {
                out.push_back(std::move(*problem));
            }
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

}  // namespace stackup::snapshot

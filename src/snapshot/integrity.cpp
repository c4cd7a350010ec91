#include "snapshot/integrity.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "base/fs.hpp"
#include "base/sha256.hpp"

namespace stackup::snapshot {

namespace {


std::string describe_change(const TreeEntry& want, const TreeEntry& seen) {
    std::string out;
    if (seen.inode != want.inode) {
        out += "inode " + std::to_string(want.inode) + " -> " + std::to_string(seen.inode) + ", ";
    }
    if (seen.size != want.size) {
        out += "size " + std::to_string(want.size) + " -> " + std::to_string(seen.size) + ", ";
    }
    if (seen.mtime_ns != want.mtime_ns) {
        out += "mtime " + format_time_ns(want.mtime_ns) + " -> " + format_time_ns(seen.mtime_ns) + ", ";
    }
    return out;
}

}  // namespace

std::optional<TreeEntry> lstat_record_at(int dirfd, const char* name, const std::filesystem::path& path) {
    struct stat st {};
    if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) {
            return std::nullopt;
        }
        throw base::errno_error(errno, "cannot stat " + path.string());
    }
    TreeEntry e;
    // Other types (fifos, sockets) read as symlinks: callers only ask whether it is a file.
    e.type = S_ISREG(st.st_mode) ? EntryType::file : S_ISDIR(st.st_mode) ? EntryType::dir : EntryType::symlink;
    e.mode = st.st_mode & 07777;
    e.size = static_cast<std::uint64_t>(st.st_size);
    e.mtime_ns = base::to_ns(st.st_mtim);
    e.inode = static_cast<std::uint64_t>(st.st_ino);
    e.ctime_ns = base::to_ns(st.st_ctim);
    return e;
}

std::optional<TreeEntry> lstat_record(const std::filesystem::path& path) {
    return lstat_record_at(AT_FDCWD, path.c_str(), path);
}

bool record_intact(const TreeEntry& want, const TreeEntry& seen) {
    return seen.inode == want.inode && seen.size == want.size && seen.mtime_ns == want.mtime_ns &&
           seen.ctime_ns == want.ctime_ns;
}

bool only_ctime_moved(const TreeEntry& want, const TreeEntry& seen) {
    return seen.inode == want.inode && seen.size == want.size && seen.mtime_ns == want.mtime_ns;
}

std::optional<std::string> judge_file(const TreeEntry& want, const TreeEntry& seen, const std::filesystem::path& path,
                                      const std::string& sha256) {
    if (record_intact(want, seen)) {
        return std::nullopt;
    }
    const bool same = only_ctime_moved(want, seen);
    if (!sha256.empty()) {
        if (base::sha256_file(path) != sha256) {
            return "content differs: " + want.path;
        }
        return std::nullopt;
    }
    if (!same) {
        return "content may differ: " + want.path + " (" + describe_change(want, seen) +
               "no sha256 recorded to tell a touch from a write)";
    }
    return std::nullopt;  // only ctime moved, no hash: a chmod or a link count change (uv's unlink)
}

}  // namespace stackup::snapshot

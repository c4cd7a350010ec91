#include "snapshot/copy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/fs.hpp"
#include "base/sha256.hpp"

namespace stackup::snapshot {

namespace {

constexpr std::size_t kBufferSize = 1 << 20;
// Symlinks whose target fits in the inode (ext4: under 60 bytes) take no data block.
constexpr std::size_t kInlineSymlinkMax = 59;

std::int64_t to_ns(const struct timespec& ts) {
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string format_bytes(std::uint64_t bytes) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f GiB (%llu bytes)", static_cast<double>(bytes) / (1ull << 30),
                  static_cast<unsigned long long>(bytes));
    return buf;
}

struct stat lstat_or_throw(const std::filesystem::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        throw base::errno_error(errno, "cannot stat " + path.string());
    }
    return st;
}

// Copies one tree; the source is walked once for metadata (sizes for the
// space check, the order of creation), then each entry is copied.
class TreeCopier {
public:
    TreeCopier(std::filesystem::path src, std::filesystem::path dst, Contents contents)
        : src_(std::move(src)), dst_(std::move(dst)), contents_(contents), as_root_(::geteuid() == 0) {}

    // On failure removes what it created (never a `dst` it did not create) and rethrows.
    TreeIndex run() {
        try {
            return copy();
        } catch (...) {
            if (created_root_) {
                discard_after_failure(dst_);
            }
            throw;
        }
    }

private:
    TreeIndex copy() {
        TreeIndex index = index_tree(src_, Contents::metadata_only);
        require_free_space(dst_.parent_path(), index, src_);
        // Parents come before children in path order, so each entry's directory exists.
        for (auto& entry : index.entries) {
            create(entry);
        }
        // Directory metadata last and children first (post-order): creating
        // entries inside a directory would change its mtime again.
        for (auto it = index.entries.rbegin(); it != index.entries.rend(); ++it) {
            if (it->type == EntryType::dir) {
                finish_dir(*it);
            }
        }
        base::sync_filesystem(dst_);
        return index;
    }

    std::filesystem::path from(const TreeEntry& e) const { return e.path == "." ? src_ : src_ / e.path; }
    std::filesystem::path to(const TreeEntry& e) const { return e.path == "." ? dst_ : dst_ / e.path; }

    void create(TreeEntry& e) {
        switch (e.type) {
            case EntryType::dir:
                // Owner-writable until finish_dir, whatever its final mode.
                if (::mkdir(to(e).c_str(), 0700) != 0) {
                    throw base::errno_error(errno, "cannot create directory " + to(e).string());
                }
                created_root_ = created_root_ || e.path == ".";
                break;
            case EntryType::file:
                copy_file(e);
                break;
            case EntryType::symlink:
                copy_symlink(e);
                break;
        }
    }

    void copy_file(TreeEntry& e) {
        const auto src = from(e);
        const auto dst = to(e);
        base::UniqueFd in = base::open_file(src, O_RDONLY | O_NOFOLLOW);
        struct stat st {};
        if (::fstat(in.get(), &st) != 0) {
            throw base::errno_error(errno, "cannot stat " + src.string());
        }
        if (!S_ISREG(st.st_mode)) {
            throw std::runtime_error("changed type while being copied: " + src.string());
        }
        ::posix_fadvise(in.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
        base::UniqueFd out = base::open_file(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
        if (contents_ == Contents::hash) {
            base::Sha256 hash;
            e.size = pump(in.get(), out.get(), &hash, src, dst);
            e.sha256 = hash.hex_digest();
        } else {
            e.size = copy_in_kernel(in.get(), out.get(), src, dst);
        }
        if (as_root_ && ::fchown(out.get(), st.st_uid, st.st_gid) != 0 && errno != EPERM) {
            throw base::errno_error(errno, "cannot chown " + dst.string());
        }
        // After chown, which clears setuid/setgid.
        if (::fchmod(out.get(), st.st_mode & 07777) != 0) {
            throw base::errno_error(errno, "cannot chmod " + dst.string());
        }
        const struct timespec times[2] = {st.st_atim, st.st_mtim};
        if (::futimens(out.get(), times) != 0) {
            throw base::errno_error(errno, "cannot set times of " + dst.string());
        }
        e.mode = st.st_mode & 07777;
        e.mtime_ns = to_ns(st.st_mtim);
    }

    // read/write through one buffer, hashing what passes; returns the bytes copied.
    std::uint64_t pump(int in, int out, base::Sha256* hash, const std::filesystem::path& src,
                       const std::filesystem::path& dst) {
        buffer_.resize(kBufferSize);
        std::uint64_t total = 0;
        for (;;) {
            ssize_t n = ::read(in, buffer_.data(), buffer_.size());
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                throw base::errno_error(errno, "cannot read " + src.string());
            }
            if (n == 0) {
                return total;
            }
            if (hash != nullptr) {
                hash->update(buffer_.data(), static_cast<std::size_t>(n));
            }
            base::write_all(out, buffer_.data(), static_cast<std::size_t>(n), dst);
            total += static_cast<std::uint64_t>(n);
        }
    }

    // copy_file_range where the kernel and filesystems allow it, read/write for the rest.
    std::uint64_t copy_in_kernel(int in, int out, const std::filesystem::path& src,
                                 const std::filesystem::path& dst) {
        std::uint64_t total = 0;
        for (;;) {
            ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, 1 << 30, 0);
            if (n > 0) {
                total += static_cast<std::uint64_t>(n);
                continue;
            }
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0 && errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
                throw base::errno_error(errno, "cannot copy " + src.string() + " to " + dst.string());
            }
            break;  // EOF, or unsupported here: pump finishes (or finds EOF at once)
        }
        return total + pump(in, out, nullptr, src, dst);
    }

    void copy_symlink(TreeEntry& e) {
        const auto src = from(e);
        const auto dst = to(e);
        const struct stat st = lstat_or_throw(src);
        if (!S_ISLNK(st.st_mode)) {
            throw std::runtime_error("changed type while being copied: " + src.string());
        }
        e.target = base::read_symlink(src);
        e.size = e.target.size();
        if (::symlink(e.target.c_str(), dst.c_str()) != 0) {
            throw base::errno_error(errno, "cannot create symlink " + dst.string());
        }
        set_owner(dst, st);
        set_times(dst, st);
        e.mode = st.st_mode & 07777;
        e.mtime_ns = to_ns(st.st_mtim);
    }

    void finish_dir(TreeEntry& e) {
        const auto src = from(e);
        const auto dst = to(e);
        const struct stat st = lstat_or_throw(src);
        if (!S_ISDIR(st.st_mode)) {
            throw std::runtime_error("changed type while being copied: " + src.string());
        }
        set_owner(dst, st);
        // After chown, which clears setuid/setgid.
        if (::chmod(dst.c_str(), st.st_mode & 07777) != 0) {
            throw base::errno_error(errno, "cannot chmod " + dst.string());
        }
        set_times(dst, st);
        e.mode = st.st_mode & 07777;
        e.mtime_ns = to_ns(st.st_mtim);
    }

    // lchown/utimensat never follow: the same code serves links and directories.
    void set_owner(const std::filesystem::path& dst, const struct stat& st) const {
        if (as_root_ && ::lchown(dst.c_str(), st.st_uid, st.st_gid) != 0 && errno != EPERM) {
            throw base::errno_error(errno, "cannot chown " + dst.string());
        }
    }

    void set_times(const std::filesystem::path& dst, const struct stat& st) const {
        const struct timespec times[2] = {st.st_atim, st.st_mtim};
        if (::utimensat(AT_FDCWD, dst.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
            throw base::errno_error(errno, "cannot set times of " + dst.string());
        }
    }

    std::filesystem::path src_;
    std::filesystem::path dst_;
    Contents contents_;
    bool as_root_;
    bool created_root_ = false;
    std::vector<char> buffer_;
};

}  // namespace

SpaceNeeded space_needed(const TreeIndex& plan, std::uint64_t block_size) {
    SpaceNeeded need;
    for (const auto& e : plan.entries) {
        need.inodes += 1;
        if (e.type == EntryType::file) {
            need.bytes += (e.size + block_size - 1) / block_size * block_size;
        } else if (e.type == EntryType::dir || e.size > kInlineSymlinkMax) {
            need.bytes += block_size;
        }
    }
    return need;
}

void require_free_space(const std::filesystem::path& dir, const TreeIndex& plan,
                        const std::filesystem::path& source) {
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) != 0) {
        throw base::errno_error(errno, "cannot check free space in " + dir.string());
    }
    const SpaceNeeded need = space_needed(plan, vfs.f_bsize != 0 ? vfs.f_bsize : 4096);
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    if (need.bytes > free_bytes) {
        throw base::errno_error(ENOSPC, "not enough free space in " + dir.string() + " for a copy of " +
                                            source.string() + ": it needs " + format_bytes(need.bytes) +
                                            ", " + format_bytes(free_bytes) + " free");
    }
    // Filesystems without an inode limit report f_files == 0.
    if (vfs.f_files != 0 && need.inodes > vfs.f_favail) {
        throw base::errno_error(ENOSPC, "not enough free inodes in " + dir.string() + " for a copy of " +
                                            source.string() + ": it needs " + std::to_string(need.inodes) +
                                            ", " + std::to_string(vfs.f_favail) + " free");
    }
}

TreeIndex copy_tree(const std::filesystem::path& src, const std::filesystem::path& dst, Contents contents) {
    struct stat st {};
    if (::lstat(dst.c_str(), &st) == 0) {
        throw base::errno_error(EEXIST, "cannot copy " + src.string() + " to " + dst.string());
    }
    return TreeCopier(src, dst, contents).run();
}

void discard_after_failure(const std::filesystem::path& path) noexcept {
    try {
        remove_tree(path);
    } catch (...) {
    }
}

bool remove_tree(const std::filesystem::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) {
            return false;
        }
        throw base::errno_error(errno, "cannot stat " + path.string());
    }
    if (S_ISDIR(st.st_mode)) {
        // A read-only directory's entries cannot be unlinked until it is writable again.
        if ((st.st_mode & 0700) != 0700 && ::chmod(path.c_str(), (st.st_mode & 07777) | 0700) != 0) {
            throw base::errno_error(errno, "cannot make writable " + path.string());
        }
        std::vector<std::filesystem::path> children;
        for (const auto& entry : std::filesystem::directory_iterator(path)) {
            children.push_back(entry.path());
        }
        for (const auto& child : children) {
            remove_tree(child);
        }
        if (::rmdir(path.c_str()) != 0) {
            throw base::errno_error(errno, "cannot remove directory " + path.string());
        }
    } else if (::unlink(path.c_str()) != 0) {
        throw base::errno_error(errno, "cannot remove " + path.string());
    }
    return true;
}

}  // namespace stackup::snapshot

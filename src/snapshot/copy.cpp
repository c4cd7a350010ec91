#include "snapshot/copy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/fs.hpp"
#include "base/sha256.hpp"
#include "snapshot/file_data.hpp"
#include "snapshot/parallel.hpp"

namespace stackup::snapshot {

namespace {

// Symlinks whose target fits in the inode (ext4: under 60 bytes) take no data block.
constexpr std::size_t kInlineSymlinkMax = 59;


std::string format_bytes(std::uint64_t bytes) {
    return fmt::format("{:.1f} GiB ({} bytes)", static_cast<double>(bytes) / (1ull << 30), bytes);
}

struct stat lstat_or_throw(const std::filesystem::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        throw base::errno_error(errno, "cannot stat " + path.string());
    }
    return st;
}

struct stat fstat_or_throw(int fd, const std::filesystem::path& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        throw base::errno_error(errno, "cannot stat " + path.string());
    }
    return st;
}

// Copies one tree: the source is walked once for metadata (sizes for the
// space check, the order of creation), then directories and symlinks are
// made in path order, files by work_threads() threads, directory metadata last.
class TreeCopier {
public:
    TreeCopier(std::filesystem::path src, std::filesystem::path dst, const CopyOptions& options)
        : src_(std::move(src)), dst_(std::move(dst)), options_(options), as_root_(::geteuid() == 0) {}

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
        require_free_space(dst_.parent_path(), index, src_,
                           options_.data == FileData::copy ? Blocks::own : Blocks::shared);
        // Parents come before children in path order, so each entry's directory exists.
        std::vector<std::size_t> files;
        for (std::size_t i = 0; i < index.entries.size(); ++i) {
            TreeEntry& e = index.entries[i];
            if (e.type == EntryType::dir) {
                make_dir(e);
            } else if (e.type == EntryType::symlink) {
                copy_symlink(e);
            } else {
                files.push_back(i);
            }
        }
        // Biggest first, so that no thread is left with one big file at the end.
        std::stable_sort(files.begin(), files.end(), [&](std::size_t a, std::size_t b) {
            return index.entries[a].size > index.entries[b].size;
        });
        detail::for_each_parallel<DataMover>(
            files, [&](std::size_t i, DataMover& mover) { copy_file(index.entries[i], mover); });
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

    void make_dir(const TreeEntry& e) {
        // Owner-writable until finish_dir, whatever its final mode.
        if (::mkdir(to(e).c_str(), 0700) != 0) {
            throw base::errno_error(errno, "cannot create directory " + to(e).string());
        }
        created_root_ = created_root_ || e.path == ".";
    }

    void copy_file(TreeEntry& e, DataMover& mover) const {
        const auto src = from(e);
        const auto dst = to(e);
        base::UniqueFd in = base::open_file(src, O_RDONLY | O_NOFOLLOW);
        const struct stat st = fstat_or_throw(in.get(), src);
        if (!S_ISREG(st.st_mode)) {
            throw std::runtime_error("changed type while being copied: " + src.string());
        }
        // Read and write: a clone is hashed by reading the copy itself.
        base::UniqueFd out = base::open_file(dst, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
        e.size = fill(e, in.get(), out.get(), st, mover, src, dst);
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
        e.mtime_ns = base::to_ns(st.st_mtim);
        if (options_.record_copies) {
            const struct stat copied = fstat_or_throw(out.get(), dst);  // after the last change to its ctime
            e.inode = static_cast<std::uint64_t>(copied.st_ino);
            e.ctime_ns = base::to_ns(copied.st_ctim);
        }
    }

    // The bytes of one file, as options_ ask; returns how many.
    // `opened`: the source's fstat when it was opened, before any of its bytes moved.
    std::uint64_t fill(TreeEntry& e, int in, int out, const struct stat& opened, DataMover& mover,
                       const std::filesystem::path& src, const std::filesystem::path& dst) const {
        const bool hash = options_.contents == Contents::hash;
        if (options_.data != FileData::copy) {
            const int err = clone_file(in, out);
            if (err == 0) {
                if (hash) {
                    e.sha256 = hash_clone(in, out, opened, mover, src, dst);
                }
                return static_cast<std::uint64_t>(fstat_or_throw(out, dst).st_size);
            }
            if (options_.data == FileData::clone || !clone_unsupported(err)) {
                throw base::errno_error(err, "cannot clone " + src.string() + " to " + dst.string());
            }
        }
        ::posix_fadvise(in, 0, 0, POSIX_FADV_SEQUENTIAL);
        if (hash) {
            base::Sha256 sha;
            const std::uint64_t n = mover.pump(in, out, &sha, src, dst);
            e.sha256 = sha.hex_digest();
            return n;
        }
        return mover.copy_in_kernel(in, out, src, dst);
    }

    // The sha256 of a fresh clone, read from the source, whose pages are likely
    // cached (a clone has its own page cache, empty); when the source changed
    // since it was opened (so maybe since it was cloned), from the clone itself.
    static std::string hash_clone(int in, int out, const struct stat& before, DataMover& mover,
                                  const std::filesystem::path& src, const std::filesystem::path& dst) {
        std::string hex = mover.hash_fd(in, src);
        const struct stat after = fstat_or_throw(in, src);
        if (base::to_ns(before.st_ctim) != base::to_ns(after.st_ctim) || base::to_ns(before.st_mtim) != base::to_ns(after.st_mtim) ||
            before.st_size != after.st_size) {
            hex = mover.hash_fd(out, dst);
        }
        return hex;
    }

    void copy_symlink(TreeEntry& e) const {
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
        e.mtime_ns = base::to_ns(st.st_mtim);
    }

    void finish_dir(TreeEntry& e) const {
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
        e.mtime_ns = base::to_ns(st.st_mtim);
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
    CopyOptions options_;
    bool as_root_;
    bool created_root_ = false;
};

}  // namespace

SpaceNeeded space_needed(const TreeIndex& plan, std::uint64_t block_size, Blocks blocks) {
    SpaceNeeded need;
    for (const auto& e : plan.entries) {
        need.inodes += 1;
        if (e.type == EntryType::file) {
            if (blocks == Blocks::shared) {
                continue;
            }
            need.bytes += (e.size + block_size - 1) / block_size * block_size;
        } else if (e.type == EntryType::dir || e.size > kInlineSymlinkMax) {
            need.bytes += block_size;
        }
    }
    return need;
}

void require_free_space(const std::filesystem::path& dir, const TreeIndex& plan,
                        const std::filesystem::path& source, Blocks blocks) {
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) != 0) {
        throw base::errno_error(errno, "cannot check free space in " + dir.string());
    }
    const SpaceNeeded need = space_needed(plan, vfs.f_bsize != 0 ? vfs.f_bsize : 4096, blocks);
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

TreeIndex copy_tree(const std::filesystem::path& src, const std::filesystem::path& dst, const CopyOptions& options) {
    struct stat st {};
    if (::lstat(dst.c_str(), &st) == 0) {
        throw base::errno_error(EEXIST, "cannot copy " + src.string() + " to " + dst.string());
    }
    return TreeCopier(src, dst, options).run();
}

TreeIndex copy_tree(const std::filesystem::path& src, const std::filesystem::path& dst, Contents contents) {
    CopyOptions options;
    options.contents = contents;
    return copy_tree(src, dst, options);
}

}  // namespace stackup::snapshot

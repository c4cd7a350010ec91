#pragma once
// Small POSIX file helpers: an owning fd, whole-file read, durable atomic
// write, directory fsync, temp dirs. Every failure throws std::system_error
// whose message names the path; every fd is opened O_CLOEXEC so no child
// process inherits it.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>
#include <string_view>
#include <system_error>

namespace stackup::base {

// A stat time as nanoseconds since the epoch.
constexpr std::int64_t to_ns(const struct timespec& ts) {
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// And back, for utimensat: tv_nsec stays in [0, 1e9) before 1970 too.
constexpr struct timespec from_ns(std::int64_t ns) {
    std::int64_t sec = ns / 1'000'000'000;
    std::int64_t frac = ns % 1'000'000'000;
    if (frac < 0) {
        frac += 1'000'000'000;
        sec -= 1;
    }
    return {static_cast<time_t>(sec), static_cast<long>(frac)};
}

// Owns one file descriptor and closes it exactly once.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    ~UniqueFd() { reset(); }
    UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;

    [[nodiscard]] int get() const { return fd_; }
    [[nodiscard]] bool valid() const { return fd_ >= 0; }
    explicit operator bool() const { return valid(); }
    // Gives up ownership without closing.
    [[nodiscard]] int release();
    // Closes the owned fd (if any) and takes `fd`.
    void reset(int fd = -1);

private:
    int fd_ = -1;
};

// std::system_error for `err` (an errno value) with "what: <strerror>" as its message.
[[nodiscard]] std::system_error errno_error(int err, const std::string& what);

// open(2) with O_CLOEXEC added; throws naming the path.
[[nodiscard]] UniqueFd open_file(const std::filesystem::path& path, int flags, ::mode_t mode = 0666);

// An entry of a directory as readdir tells it, without a stat: its name, its
// type (DT_REG, DT_DIR, ... of <dirent.h>; DT_UNKNOWN where the filesystem does
// not say) and its inode.
struct DirEntry {
    std::string name;
    unsigned char type = 0;
    std::uint64_t inode = 0;
};

// The entries of the directory open as `dirfd` (not "." and ".."), read from its start with
// getdents64 (the fd's offset moves; *at calls do not mind); `dir` names it in errors.
[[nodiscard]] std::vector<DirEntry> list_dir(int dirfd, const std::filesystem::path& dir);

// Writes all `size` bytes, retrying short writes and EINTR; `path` names the file in errors.
void write_all(int fd, const void* data, std::size_t size, const std::filesystem::path& path);

[[nodiscard]] std::string read_file(const std::filesystem::path& path);
// At most `cap` bytes of `path`, in one pass (a pipe or `<(...)` reads as well as a file);
// nullopt when it holds more: the read stops after cap + 1 bytes, so an endless file
// (/dev/zero) costs no more memory or time than a file of the cap.
[[nodiscard]] std::optional<std::string> read_file_capped(const std::filesystem::path& path, std::size_t cap);
// A symlink's target, as stored (never followed); `size_hint` is lstat's st_size.
std::string read_symlink(const std::filesystem::path& path, std::size_t size_hint = 255);

// Replaces `path` with `bytes` so that readers (and a crash) see the old or
// the new content, never a mix: temp file in the same directory, write,
// fsync, rename over `path`, fsync the directory.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes, ::mode_t mode = 0644);

// Makes the directory's entries (creations, renames, removals) durable.
void fsync_dir(const std::filesystem::path& dir);

// Flushes everything dirty on the filesystem holding `path` (one syncfs(2)
// instead of an fsync per file, for trees of many files).
void sync_filesystem(const std::filesystem::path& path);

// Creates a fresh directory `parent/<prefix>XXXXXX` (mode 0700) and returns its path.
[[nodiscard]] std::filesystem::path make_temp_dir(const std::filesystem::path& parent,
                                                  std::string_view prefix);

// A fresh directory under $TMPDIR, removed with everything in it when this goes.
class ScratchDir {
public:
    explicit ScratchDir(std::string_view prefix);
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace stackup::base

#include "base/fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace stackup::base {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
        reset(other.release());
    }
    return *this;
}

int UniqueFd::release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
}

void UniqueFd::reset(int fd) {
    if (fd_ >= 0 && fd_ != fd) {
        // Linux closes the fd even when close() reports EINTR, so never retry.
        ::close(fd_);
    }
    fd_ = fd;
}

std::system_error errno_error(int err, const std::string& what) {
    return std::system_error(err, std::generic_category(), what);
}

UniqueFd open_file(const std::filesystem::path& path, int flags, ::mode_t mode) {
    int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) {
        throw errno_error(errno, "cannot open " + path.string());
    }
    return UniqueFd(fd);
}

void write_all(int fd, const void* data, std::size_t size, const std::filesystem::path& path) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            throw errno_error(errno, "cannot write " + path.string());
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

std::string read_symlink(const std::filesystem::path& path, std::size_t size_hint) {
    std::string target(size_hint + 1, '\0');
    for (;;) {
        ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
        if (n < 0) {
            throw errno_error(errno, "cannot read symlink " + path.string());
        }
        if (static_cast<std::size_t>(n) < target.size()) {
            target.resize(static_cast<std::size_t>(n));
            return target;
        }
        target.resize(target.size() * 2);  // the link grew since lstat
    }
}

std::optional<std::string> read_file_capped(const std::filesystem::path& path, std::size_t cap) {
    UniqueFd fd = open_file(path, O_RDONLY);
    std::string out;
    std::array<char, 1 << 16> buf{};
    for (;;) {
        std::size_t want = std::min(buf.size(), cap + 1 - out.size());
        ssize_t n = ::read(fd.get(), buf.data(), want);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            throw errno_error(errno, "cannot read " + path.string());
        }
        if (n == 0) {
            return out;
        }
        out.append(buf.data(), static_cast<std::size_t>(n));
        if (out.size() > cap) {
            return std::nullopt;
        }
    }
}

std::string read_file(const std::filesystem::path& path) {
    UniqueFd fd = open_file(path, O_RDONLY);
    std::string out;
    std::array<char, 1 << 16> buf{};
    for (;;) {
        ssize_t n = ::read(fd.get(), buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            throw errno_error(errno, "cannot read " + path.string());
        }
        if (n == 0) {
            return out;
        }
        out.append(buf.data(), static_cast<std::size_t>(n));
    }
}

namespace {

// Removes a temp file unless dismissed: a failed atomic write leaves no litter.
struct TempFileGuard {
    std::string path;
    bool armed = true;
    ~TempFileGuard() {
        if (armed) {
            ::unlink(path.c_str());
        }
    }
};

std::filesystem::path parent_or_dot(const std::filesystem::path& path) {
    auto parent = path.parent_path();
    return parent.empty() ? std::filesystem::path(".") : parent;
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes, ::mode_t mode) {
    const auto dir = parent_or_dot(path);
    TempFileGuard tmp{(dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string()};
    UniqueFd fd(::mkostemp(tmp.path.data(), O_CLOEXEC));
    if (!fd) {
        tmp.armed = false;
        throw errno_error(errno, "cannot create a temp file beside " + path.string());
    }
    if (::fchmod(fd.get(), mode) != 0) {
        throw errno_error(errno, "cannot chmod " + tmp.path);
    }
    write_all(fd.get(), bytes.data(), bytes.size(), tmp.path);
    if (::fsync(fd.get()) != 0) {
        throw errno_error(errno, "cannot fsync " + tmp.path);
    }
    fd.reset();
    if (::rename(tmp.path.c_str(), path.c_str()) != 0) {
        throw errno_error(errno, "cannot rename " + tmp.path + " to " + path.string());
    }
    tmp.armed = false;
    fsync_dir(dir);
}

void fsync_dir(const std::filesystem::path& dir) {
    UniqueFd fd = open_file(dir, O_RDONLY | O_DIRECTORY);
    if (::fsync(fd.get()) != 0) {
        throw errno_error(errno, "cannot fsync directory " + dir.string());
    }
}

void sync_filesystem(const std::filesystem::path& path) {
    UniqueFd fd = open_file(path, O_RDONLY | O_NOFOLLOW);
    if (::syncfs(fd.get()) != 0) {
        throw errno_error(errno, "cannot sync the filesystem holding " + path.string());
    }
}

std::filesystem::path make_temp_dir(const std::filesystem::path& parent, std::string_view prefix) {
    std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
        throw errno_error(errno, "cannot create a temp directory in " + parent.string());
    }
    return pattern;
}

ScratchDir::ScratchDir(std::string_view prefix)
    : path_(make_temp_dir(std::filesystem::temp_directory_path(), prefix)) {}

ScratchDir::~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

std::vector<DirEntry> list_dir(int dirfd, const std::filesystem::path& dir) {
    // getdents64 on the fd itself: readdir would first dup it and fdopendir it (three fcntl
    // and a second close per directory, a quarter of a tree walk's system calls).
    if (::lseek(dirfd, 0, SEEK_SET) < 0) {
        throw errno_error(errno, "cannot list " + dir.string());
    }
    alignas(8) char buffer[32 * 1024];
    std::vector<DirEntry> out;
    for (;;) {
        const ssize_t n = ::getdents64(dirfd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw errno_error(errno, "cannot list " + dir.string());
        }
        if (n == 0) {
            return out;
        }
        for (ssize_t at = 0; at < n;) {
            const auto* ent = reinterpret_cast<const struct dirent64*>(buffer + at);
            if (std::strcmp(ent->d_name, ".") != 0 && std::strcmp(ent->d_name, "..") != 0) {
                out.push_back({ent->d_name, ent->d_type, static_cast<std::uint64_t>(ent->d_ino)});
            }
            at += ent->d_reclen;
        }
    }
}

}  // namespace stackup::base

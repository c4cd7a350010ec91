#include "snapshot/file_data.hpp"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

#include "base/fs.hpp"

namespace stackup::snapshot {

namespace {

constexpr std::size_t kBufferSize = 1 << 20;

}  // namespace

int clone_file(int in, int out) {
    return ::ioctl(out, FICLONE, in) == 0 ? 0 : errno;
}

bool clone_unsupported(int err) {
    // EOPNOTSUPP: no reflinks (ext4, tmpfs); EXDEV: two filesystems; EINVAL:
    // alignment or an fs that rejects the pair; ENOTTY: no such ioctl; EPERM: e.g. overlayfs.
    return err == EOPNOTSUPP || err == EXDEV || err == EINVAL || err == ENOTTY || err == EPERM;
}

char* DataMover::buffer() {
    buffer_.resize(kBufferSize);
    return buffer_.data();
}

std::uint64_t DataMover::pump(int in, int out, base::Sha256* hash, const std::filesystem::path& src,
                              const std::filesystem::path& dst) {
    char* buf = buffer();
    std::uint64_t total = 0;
    for (;;) {
        ssize_t n = ::read(in, buf, kBufferSize);
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
            hash->update(buf, static_cast<std::size_t>(n));
        }
        base::write_all(out, buf, static_cast<std::size_t>(n), dst);
        total += static_cast<std::uint64_t>(n);
    }
}

std::uint64_t DataMover::copy_in_kernel(int in, int out, const std::filesystem::path& src,
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

std::string DataMover::hash_fd(int fd, const std::filesystem::path& path) {
    char* buf = buffer();
    base::Sha256 hash;
    off_t offset = 0;
    for (;;) {
        ssize_t n = ::pread(fd, buf, kBufferSize, offset);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            throw base::errno_error(errno, "cannot read " + path.string());
        }
        if (n == 0) {
            return hash.hex_digest();
        }
        hash.update(buf, static_cast<std::size_t>(n));
        offset += n;
    }
}

}  // namespace stackup::snapshot

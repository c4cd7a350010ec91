#pragma once
// One file's bytes from one fd to another: through a buffer (hashing on the
// way), in the kernel (copy_file_range), or by sharing blocks (FICLONE).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/sha256.hpp"

namespace stackup::snapshot {

// ioctl(FICLONE): `out` (empty, open for writing) shares all of `in`'s blocks.
// Returns 0, or the errno.
[[nodiscard]] int clone_file(int in, int out);

// Whether a FICLONE errno means "these filesystems cannot share blocks"
// rather than a failure worth reporting (I/O error, no space).
[[nodiscard]] bool clone_unsupported(int err);

// Holds the buffer, so that a tree of small files allocates it once.
class DataMover {
public:
    // read/write until EOF; `hash`, when given, sees every byte. Returns the bytes copied.
    std::uint64_t pump(int in, int out, base::Sha256* hash, const std::filesystem::path& src,
                       const std::filesystem::path& dst);
    // copy_file_range where the kernel and filesystems allow it, pump for the rest.
    std::uint64_t copy_in_kernel(int in, int out, const std::filesystem::path& src,
                                 const std::filesystem::path& dst);
    // The sha256 of what `fd` holds, read from offset 0 (its file offset is left alone).
    [[nodiscard]] std::string hash_fd(int fd, const std::filesystem::path& path);

private:
    char* buffer();
    std::vector<char> buffer_;
};

}  // namespace stackup::snapshot

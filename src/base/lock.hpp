#pragma once
// An exclusive, non-blocking lock on a file (flock), released when the
// holder's process ends, however it ends. The file also says who holds it.

#include <filesystem>
#include <optional>
#include <string>

namespace stackup::base {

class FileLock {
public:
    // Takes the lock and writes `holder` (pid, host, command, time) into the
    // file; nullopt when another process holds it.
    [[nodiscard]] static std::optional<FileLock> try_acquire(const std::filesystem::path& path,
                                                             const std::string& command);
    // Who holds (or last held) the lock, as written by try_acquire; "" when unknown.
    static std::string holder(const std::filesystem::path& path);

    FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    FileLock& operator=(FileLock&&) = delete;
    FileLock(const FileLock&) = delete;
    ~FileLock();

private:
    explicit FileLock(int fd) : fd_(fd) {}
    int fd_;
};

}  // namespace stackup::base

#pragma once
// An exclusive, non-blocking lock on a file (flock), released when the last fd
// on its open file description closes: when the holder and every child that
// inherited the fd have ended, however they ended. The file says who holds it
// (one holder line); a normal release empties it, so a holder line found by
// the next holder is the trace of a run that ended without releasing.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stackup::base {

// "pid 4242 on gpu1, running 'apply m.yaml' since 2026-12-02T16:05:01Z", parsed.
struct LockHolder {
    long pid = 0;
    std::string host;
    std::string command;
    std::string since;
    std::string line;  // as written
    friend bool operator==(const LockHolder&, const LockHolder&) = default;
};

// nullopt for an empty or foreign line.
std::optional<LockHolder> parse_holder(const std::string& line);

// Whether the holder's process still runs: unknown when it ran on another host.
enum class Liveness { running, not_running, unknown };
Liveness liveness_of(const LockHolder& holder);

// What a look at the lock finds, without taking it or writing anything.
enum class LockProbe { absent, free, held };

class FileLock {
public:
    // Takes the lock and writes the holder line (pid, host, command, time);
    // nullopt when another open file description holds it.
    [[nodiscard]] static std::optional<FileLock> try_acquire(const std::filesystem::path& path,
                                                             const std::string& command);
    // Read-only: never creates, writes or keeps the lock (a shared flock, dropped at once).
    [[nodiscard]] static LockProbe probe(const std::filesystem::path& path);
    // The holder line as written by try_acquire; "" when none.
    static std::string holder(const std::filesystem::path& path);
    // Pids (other than ours) with an fd open on the lock file, from /proc; empty when unreadable.
    static std::vector<long> processes_with_open(const std::filesystem::path& path);

    // The holder line found when the lock was taken: a run that ended without releasing.
    const std::optional<LockHolder>& stale_holder() const { return stale_; }
    int fd() const { return fd_; }

    FileLock(FileLock&& other) noexcept : fd_(other.fd_), stale_(std::move(other.stale_)) { other.fd_ = -1; }
    FileLock& operator=(FileLock&&) = delete;
    FileLock(const FileLock&) = delete;
    // Empties the holder line, then closes (the kernel releases the flock on the last close).
    ~FileLock();

private:
    FileLock(int fd, std::optional<LockHolder> stale) : fd_(fd), stale_(std::move(stale)) {}
    int fd_;
    std::optional<LockHolder> stale_;
};

}  // namespace stackup::base

#include "txn/lock.hpp"

#include "base/error.hpp"
#include "base/log.hpp"
#include "txn/advice.hpp"

namespace stackup::txn {

namespace {

std::string pid_list(const std::vector<long>& pids) {
    std::string out;
    for (long pid : pids) {
        out += (out.empty() ? "" : ", ") + std::to_string(pid);
    }
    return out;
}

// Why the lock cannot be taken: a live holder, or a dead one whose children still hold it.
[[noreturn]] void refuse_locked(const std::filesystem::path& path) {
    std::string line = base::FileLock::holder(path);
    auto holder = base::parse_holder(line);
    if (!holder || base::liveness_of(*holder) != base::Liveness::not_running) {
        throw Error(ExitCode::locked, "the venv is locked by another stackup run: " +
                                          (line.empty() ? std::string("holder unknown") : line) + " (" +
                                          path.string() + ")");
    }
    auto pids = base::FileLock::processes_with_open(path);
    throw AdvisedError(ExitCode::locked,
                       "the venv is locked (" + path.string() + "): its holder " + describe_holder(line) +
                           ", but a process it started still holds the lock" +
                           (pids.empty() ? std::string() : " (pid " + pid_list(pids) + ")") +
                           ": an installer that outlived its stackup may still be writing the venv; wait for it "
                           "to end (or kill it)",
                       Advice::orphan_holds_lock);
}

}  // namespace

std::string describe_holder(const std::string& line) {
    auto holder = base::parse_holder(line);
    if (!holder) {
        return line;
    }
    std::string what = "pid " + std::to_string(holder->pid) + " on " + holder->host + " ('" + holder->command +
                       "', since " + holder->since + ")";
    switch (base::liveness_of(*holder)) {
        case base::Liveness::running: return what + " is running";
        case base::Liveness::not_running: return what + " is not running";
        case base::Liveness::unknown: return what + " ran on another host";
    }
    return what;
}

VenvLock acquire_lock(const std::filesystem::path& state_dir, const std::string& command) {
    auto path = state_dir / "lock";
    auto lock = base::FileLock::try_acquire(path, command);
    if (!lock) {
        refuse_locked(path);
    }
    if (const auto& stale = lock->stale_holder()) {
        bool dead = base::liveness_of(*stale) == base::Liveness::not_running;
        base::log::warn("a stale lock of pid " + std::to_string(stale->pid) + " (" +
                        (dead ? "not running" : "on " + stale->host) + ", since " + stale->since + ", '" +
                        stale->command + "') was found: its run ended without releasing it; taking it over");
    }
    int fd = lock->fd();
    return VenvLock{std::move(*lock), base::InheritedFd(fd)};
}

}  // namespace stackup::txn

#include "base/lock.hpp"
#include "base/system.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <regex>
#include <system_error>
#include <vector>

#include <fmt/format.h>

namespace stackup::base {
namespace {

std::string read_line(int fd) {
    char buf[1024];
    ssize_t n = ::pread(fd, buf, sizeof buf, 0);
    std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    return text.substr(0, text.find('\n'));
}

std::string holder_line(const std::string& command) {
    return fmt::format("pid {} on {}, running '{}' since {}", ::getpid(), host_name(), command, utc_now());
}

// From /proc: a zombie is not running (it holds no fds any more).
Liveness liveness_of_pid(long pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    if (!text.empty()) {
        auto close = text.rfind(')');
        bool zombie = close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
        return zombie ? Liveness::not_running : Liveness::running;
    }
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM ? Liveness::running : Liveness::not_running;
}

bool same_file(const std::string& path, const struct stat& want) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino;
}

// The entries of `dir`, none when it cannot be read (a process that just ended, another user's).
std::vector<std::filesystem::path> entries_of(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        out.push_back(it->path());
    }
    return out;
}

bool has_open(const std::filesystem::path& fd_dir, const struct stat& want) {
    for (const auto& fd : entries_of(fd_dir)) {
        if (same_file(fd.string(), want)) {
            return true;
        }
    }
    return false;
}

}  // namespace

std::optional<LockHolder> parse_holder(const std::string& line) {
    static const std::regex pattern(R"(^pid (\d+) on (.*), running '(.*)' since (\S+)$)");
    std::smatch m;
    if (!std::regex_match(line, m, pattern)) {
        return std::nullopt;
    }
    long pid = 0;
    const std::string digits = m[1].str();
    // from_chars, not stol: a pid too big for a long is a foreign line, not an exception.
    if (std::from_chars(digits.data(), digits.data() + digits.size(), pid).ec != std::errc()) {
        return std::nullopt;
    }
    return LockHolder{pid, m[2].str(), m[3].str(), m[4].str(), line};
}

Liveness liveness_of(const LockHolder& holder) {
    if (holder.host != host_name()) {
        return Liveness::unknown;
    }
    return liveness_of_pid(holder.pid);
}

std::optional<FileLock> FileLock::try_acquire(const std::filesystem::path& path, const std::string& command) {
    std::filesystem::create_directories(path.parent_path());
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw std::system_error(errno, std::generic_category(), "cannot open lock file " + path.string());
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        ::close(fd);
        if (err == EWOULDBLOCK) {
            return std::nullopt;
        }
        throw std::system_error(err, std::generic_category(), "cannot lock " + path.string());
    }
    auto stale = parse_holder(read_line(fd));
    std::string text = holder_line(command) + "\n";
    if (::ftruncate(fd, 0) == 0) {
        [[maybe_unused]] auto n = ::pwrite(fd, text.data(), text.size(), 0);
    }
    return FileLock(fd, std::move(stale));
}

LockProbe FileLock::probe(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return LockProbe::absent;
    }
    bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);  // drops the shared lock, if taken
    return held ? LockProbe::held : LockProbe::free;
}

std::string FileLock::holder(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

std::vector<long> FileLock::processes_with_open(const std::filesystem::path& path) {
    struct stat want {};
    std::vector<long> out;
    if (::stat(path.c_str(), &want) != 0) {
        return out;
    }
    for (const auto& entry : entries_of("/proc")) {
        const std::string name = entry.filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos ||
            std::stol(name) == ::getpid()) {
            continue;
        }
        if (has_open(entry / "fd", want)) {
            out.push_back(std::stol(name));
        }
    }
    return out;
}

FileLock::~FileLock() {
    if (fd_ >= 0) {
        [[maybe_unused]] int rc = ::ftruncate(fd_, 0);  // a released lock names no holder
        ::close(fd_);  // the last fd on the description releases the flock
    }
}

}  // namespace stackup::base

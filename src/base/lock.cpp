#include "base/lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <fstream>
#include <sstream>
#include <system_error>

namespace stackup::base {
namespace {

std::string now_utc() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string host_name() {
    char buf[256] = {};
    ::gethostname(buf, sizeof buf - 1);
    return buf;
}

}  // namespace

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
    std::ostringstream info;
    info << "pid " << ::getpid() << " on " << host_name() << ", running '" << command << "' since " << now_utc()
         << "\n";
    std::string text = info.str();
    if (::ftruncate(fd, 0) == 0) {
        [[maybe_unused]] auto n = ::pwrite(fd, text.data(), text.size(), 0);
    }
    return FileLock(fd);
}

std::string FileLock::holder(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

FileLock::~FileLock() {
    if (fd_ >= 0) {
        ::close(fd_);  // closing the last fd releases the flock
    }
}

}  // namespace stackup::base

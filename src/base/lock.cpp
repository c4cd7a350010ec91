#include "base/lock.hpp"
#include "base/system.hpp"

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
    info << "pid " << ::getpid() << " on " << host_name() << ", running '" << command << "' since " << utc_now()
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

// Reading one /proc/PID entry relative to its directory's fd (the primitives of processes.cpp).
#include "venv/proc_entry.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include "base/fs.hpp"

namespace stackup::venv::detail {

namespace {

constexpr std::size_t kMapsLines = 1 << 20;
constexpr std::size_t kFdCap = 1 << 16;

// The path a mapped file was opened by, without " (deleted)".
std::string_view without_deleted(std::string_view path) {
    constexpr std::string_view deleted = " (deleted)";
    if (path.size() > deleted.size() && path.substr(path.size() - deleted.size()) == deleted) {
        path.remove_suffix(deleted.size());
    }
    return path;
}

}  // namespace

std::optional<std::string> link_at(int dir, const char* name, int& error) {
    char buf[4096];
    ssize_t n = ::readlinkat(dir, name, buf, sizeof buf);
    if (n < 0) {
        error = errno;
        return std::nullopt;
    }
    return std::string(buf, static_cast<std::size_t>(n));
}

ssize_t read_block(int fd, char* buf, std::size_t size, int& error) {
    for (;;) {
        ssize_t n = ::read(fd, buf, size);
        if (n >= 0 || errno != EINTR) {
            if (n < 0) {
                error = errno;
            }
            return n;
        }
    }
}

std::optional<std::string> read_at(int dir, const char* name, std::size_t cap, int& error) {
    base::UniqueFd fd(::openat(dir, name, O_RDONLY | O_CLOEXEC));
    if (!fd) {
        error = errno;
        return std::nullopt;
    }
    std::string out;
    char buf[1 << 14];
    for (;;) {
        const ssize_t n = read_block(fd.get(), buf, sizeof buf, error);
        if (n < 0) {
            return std::nullopt;
        }
        if (n == 0) {
            return out;
        }
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > cap) {
            return std::string("(over ") + std::to_string(cap) + " bytes)";
        }
    }
}

bool under(std::string_view path, std::string_view root) {
    return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                            path[root.size()] == '/');
}

std::optional<Stat> read_stat(int dir) {
    int error = 0;
    auto text = read_at(dir, "stat", 4096, error);
    if (!text) {
        return std::nullopt;
    }
    auto close = text->rfind(')');
    if (close == std::string::npos) {
        return std::nullopt;
    }
    std::istringstream in(text->substr(close + 1));
    std::string field;
    Stat s;
    for (int i = 3; in >> field; ++i) {
        if (i == 4) {
            s.ppid = std::atoi(field.c_str());
        } else if (i == 22) {
            s.start_ticks = std::strtoull(field.c_str(), nullptr, 10);
            return s;
        }
    }
    return std::nullopt;
}

std::vector<std::string> mapped_under(int dir, const std::vector<std::string>& roots, int& error) {
    std::vector<std::string> found(roots.size());
    base::UniqueFd fd(::openat(dir, "maps", O_RDONLY | O_CLOEXEC));
    if (!fd) {
        error = errno;
        return found;
    }
    std::string pending;  // a line cut by the end of a block
    char buf[1 << 16];
    std::size_t lines = 0;
    std::size_t left = roots.size();  // roots with no mapped file yet
    auto match = [&](std::string_view line) {
        auto slash = line.find('/');
        if (slash == std::string_view::npos) {
            return;
        }
        std::string_view path = without_deleted(line.substr(slash));
        for (std::size_t i = 0; i < roots.size(); ++i) {
            if (found[i].empty() && under(path, roots[i])) {
                found[i] = std::string(path);
                --left;
            }
        }
    };
    for (;;) {
        const ssize_t n = read_block(fd.get(), buf, sizeof buf, error);
        if (n <= 0) {
            if (n == 0 && !pending.empty()) {
                match(pending);
            }
            return found;
        }
        std::string_view block(buf, static_cast<std::size_t>(n));
        while (!block.empty()) {
            auto nl = block.find('\n');
            if (nl == std::string_view::npos) {
                pending.append(block);
                break;
            }
            std::string_view line = block.substr(0, nl);
            block.remove_prefix(nl + 1);
            if (!pending.empty()) {
                pending.append(line);
                match(pending);
                pending.clear();
            } else {
                match(line);
            }
            if (left == 0 || ++lines >= kMapsLines) {
                return found;
            }
        }
    }
}

std::vector<std::string> open_file_under(int dir, const std::vector<std::string>& roots, int& error) {
    std::vector<std::string> found(roots.size());
    int fd_dir = ::openat(dir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* d = fd_dir < 0 ? nullptr : ::fdopendir(fd_dir);
    if (d == nullptr) {
        error = errno;
        if (fd_dir >= 0) {
            ::close(fd_dir);
        }
        return found;
    }
    std::size_t seen = 0;
    std::size_t left = roots.size();
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.' || ++seen > kFdCap) {
            continue;
        }
        int ignored = 0;
        auto target = link_at(fd_dir, e->d_name, ignored);
        for (std::size_t i = 0; target && i < roots.size(); ++i) {
            if (found[i].empty() && under(*target, roots[i])) {
                found[i] = *target;
                --left;
            }
        }
        if (left == 0) {
            break;
        }
    }
    ::closedir(d);  // closes fd_dir
    return found;
}

}  // namespace stackup::venv::detail

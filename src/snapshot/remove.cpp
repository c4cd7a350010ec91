// remove_tree (declared in copy.hpp): removing a tree of 20,000 files, each
// name resolved from its directory's open fd, each directory read once.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/fs.hpp"
#include "snapshot/copy.hpp"

namespace stackup::snapshot {

namespace {

struct Child {
    std::string name;
    bool is_dir;
};

// The entries of the directory open as `fd`; `path` names it in errors.
std::vector<Child> children_of(int fd, const std::filesystem::path& path) {
    std::vector<Child> out;
    for (const auto& entry : base::list_dir(fd, path)) {
        bool is_dir = entry.type == DT_DIR;
        struct stat st {};
        if (entry.type == DT_UNKNOWN && ::fstatat(fd, entry.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            is_dir = S_ISDIR(st.st_mode);
        }
        out.push_back({entry.name, is_dir});
    }
    return out;
}

// A read-only directory's entries cannot be unlinked until it is writable again.
void make_writable(int parent, const char* name, const std::filesystem::path& path) {
    struct stat st {};
    if (::fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        throw base::errno_error(errno, "cannot stat " + path.string());
    }
    if ((st.st_mode & 0700) != 0700 && ::fchmodat(parent, name, (st.st_mode & 07777) | 0700, 0) != 0) {
        throw base::errno_error(errno, "cannot make writable " + path.string());
    }
}

// Empties the directory `name` of `parent`, then removes it.
void remove_dir_at(int parent, const char* name, const std::filesystem::path& path) {
    make_writable(parent, name, path);
    {
        const base::UniqueFd fd(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!fd) {
            throw base::errno_error(errno, "cannot open " + path.string());
        }
        for (const Child& child : children_of(fd.get(), path)) {
            if (child.is_dir) {
                remove_dir_at(fd.get(), child.name.c_str(), path / child.name);
            } else if (::unlinkat(fd.get(), child.name.c_str(), 0) != 0) {
                throw base::errno_error(errno, "cannot remove " + (path / child.name).string());
            }
        }
    }
    if (::unlinkat(parent, name, AT_REMOVEDIR) != 0) {
        throw base::errno_error(errno, "cannot remove directory " + path.string());
    }
}

}  // namespace

void discard_after_failure(const std::filesystem::path& path) noexcept {
    try {
        remove_tree(path);
    } catch (...) {
    }
}

bool remove_tree(const std::filesystem::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) {
            return false;
        }
        throw base::errno_error(errno, "cannot stat " + path.string());
    }
    if (S_ISDIR(st.st_mode)) {
        remove_dir_at(AT_FDCWD, path.c_str(), path);
    } else if (::unlink(path.c_str()) != 0) {
        throw base::errno_error(errno, "cannot remove " + path.string());
    }
    return true;
}

}  // namespace stackup::snapshot

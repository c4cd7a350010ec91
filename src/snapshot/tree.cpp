#include "snapshot/tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "base/fs.hpp"
#include "base/sha256.hpp"

namespace stackup::snapshot {

std::string to_string(EntryType type) {
    switch (type) {
        case EntryType::file:
            return "file";
        case EntryType::dir:
            return "dir";
        case EntryType::symlink:
            return "symlink";
    }
    return "?";
}

std::optional<EntryType> entry_type_from_string(const std::string& text) {
    for (EntryType t : {EntryType::file, EntryType::dir, EntryType::symlink}) {
        if (to_string(t) == text) {
            return t;
        }
    }
    return std::nullopt;
}

bool path_less(const std::string& a, const std::string& b) {
    if (a == "." || b == ".") {
        return a == "." && b != ".";
    }
    return a < b;
}

const TreeEntry* TreeIndex::find(const std::string& path) const {
    auto it = std::lower_bound(entries.begin(), entries.end(), path,
                               [](const TreeEntry& e, const std::string& p) { return path_less(e.path, p); });
    return (it != entries.end() && it->path == path) ? &*it : nullptr;
}

std::uint64_t TreeIndex::file_bytes() const {
    std::uint64_t total = 0;
    for (const auto& e : entries) {
        if (e.type == EntryType::file) {
            total += e.size;
        }
    }
    return total;
}

namespace {

struct DirCloser {
    void operator()(DIR* d) const { ::closedir(d); }
};

std::string child_path(const std::string& rel, const std::string& name) {
    return rel == "." ? name : rel + "/" + name;
}

// Names of the entries of the directory open as `dirfd` (without "." and ".."); `dir` names it in errors.
std::vector<std::string> list_dir(int dirfd, const std::filesystem::path& dir) {
    const int own = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);  // fdopendir takes the fd it is given
    if (own < 0) {
        throw base::errno_error(errno, "cannot list " + dir.string());
    }
    std::unique_ptr<DIR, DirCloser> d(::fdopendir(own));
    if (!d) {
        const int err = errno;
        ::close(own);
        throw base::errno_error(err, "cannot list " + dir.string());
    }
    std::vector<std::string> names;
    errno = 0;
    while (dirent* ent = ::readdir(d.get())) {
        const char* name = ent->d_name;
        if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) {
            names.emplace_back(name);
        }
        errno = 0;
    }
    if (errno != 0) {
        throw base::errno_error(errno, "cannot list " + dir.string());
    }
    return names;
}

std::int64_t to_ns(const struct timespec& ts) {
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Walks one tree relative to open directory fds (fstatat, openat), so that no
// path is resolved from the root again: 20,000 lookups of 8 components saved.
class Walker {
public:
    Walker(std::filesystem::path root, Contents contents) : root_(std::move(root)), contents_(contents) {}

    void walk(const struct stat& root_stat) {
        out_.entries.push_back(entry_of(".", root_stat));
        base::UniqueFd fd = base::open_file(root_, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        visit_dir(fd.get(), ".");
    }

    TreeIndex take() {
        std::sort(out_.entries.begin(), out_.entries.end(),
                  [](const TreeEntry& a, const TreeEntry& b) { return path_less(a.path, b.path); });
        return std::move(out_);
    }

private:
    std::filesystem::path full(const std::string& rel) const { return rel == "." ? root_ : root_ / rel; }

    void visit_dir(int dirfd, const std::string& rel) {
        for (const auto& name : list_dir(dirfd, full(rel))) {
            const std::string child = child_path(rel, name);
            struct stat st {};
            if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
                throw base::errno_error(errno, "cannot stat " + full(child).string());
            }
            out_.entries.push_back(entry_of(child, st));
            if (S_ISDIR(st.st_mode)) {
                base::UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (!fd) {
                    throw base::errno_error(errno, "cannot list " + full(child).string());
                }
                visit_dir(fd.get(), child);
            }
        }
    }

    TreeEntry entry_of(const std::string& rel, const struct stat& st) const {
        TreeEntry e;
        e.path = rel;
        e.mode = st.st_mode & 07777;
        e.mtime_ns = to_ns(st.st_mtim);
        if (S_ISREG(st.st_mode)) {
            e.type = EntryType::file;
            e.size = static_cast<std::uint64_t>(st.st_size);
            if (contents_ == Contents::hash) {
                e.sha256 = base::sha256_file(full(rel));
            } else if (contents_ == Contents::records) {
                e.inode = static_cast<std::uint64_t>(st.st_ino);
                e.ctime_ns = to_ns(st.st_ctim);
            }
        } else if (S_ISDIR(st.st_mode)) {
            e.type = EntryType::dir;
        } else if (S_ISLNK(st.st_mode)) {
            e.type = EntryType::symlink;
            e.target = base::read_symlink(full(rel), static_cast<std::size_t>(st.st_size));
            e.size = e.target.size();
        } else {
            throw std::runtime_error("unsupported file type (not a file, directory or symlink): " +
                                     full(rel).string());
        }
        return e;
    }

    std::filesystem::path root_;
    Contents contents_;
    TreeIndex out_;
};

}  // namespace

TreeIndex index_tree(const std::filesystem::path& root, Contents contents) {
    struct stat st {};
    if (::lstat(root.c_str(), &st) != 0) {
        throw base::errno_error(errno, "cannot stat " + root.string());
    }
    if (!S_ISDIR(st.st_mode)) {
        throw std::runtime_error("not a directory (symlinks are not followed): " + root.string());
    }
    Walker walker(root, contents);
    walker.walk(st);
    return walker.take();
}

std::string format_time_ns(std::int64_t ns) {
    std::int64_t sec = ns / 1'000'000'000;
    std::int64_t frac = ns % 1'000'000'000;
    if (frac < 0) {  // floor, so times before 1970 print correctly
        frac += 1'000'000'000;
        sec -= 1;
    }
    time_t t = static_cast<time_t>(sec);
    struct tm tm {};
    ::gmtime_r(&t, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<long long>(frac));
    return buf;
}

std::string format_mode(std::uint32_t mode) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode));
    return buf;
}

namespace {

void diff_entry(const TreeEntry& want, const TreeEntry& got, std::vector<std::string>& out) {
    const std::string& p = want.path;
    if (want.type != got.type) {
        out.push_back("type differs: " + p + ": " + to_string(want.type) + " -> " + to_string(got.type));
        return;
    }
    if (want.type == EntryType::file) {
        const bool hashed = !want.sha256.empty() && !got.sha256.empty();
        if (want.size != got.size) {
            out.push_back("content differs: " + p + " (size " + std::to_string(want.size) + " -> " +
                          std::to_string(got.size) + ")");
        } else if (hashed && want.sha256 != got.sha256) {
            out.push_back("content differs: " + p);
        }
    }
    if (want.type == EntryType::symlink && want.target != got.target) {
        out.push_back("symlink target differs: " + p + ": " + want.target + " -> " + got.target);
    }
    if (want.mode != got.mode) {
        out.push_back("mode differs: " + p + ": " + format_mode(want.mode) + " -> " + format_mode(got.mode));
    }
    if (want.mtime_ns != got.mtime_ns) {
        out.push_back("mtime differs: " + p + ": " + format_time_ns(want.mtime_ns) + " -> " +
                      format_time_ns(got.mtime_ns));
    }
}

}  // namespace

std::vector<std::string> diff(const TreeIndex& expected, const TreeIndex& actual) {
    std::vector<std::string> out;
    auto e = expected.entries.begin();
    auto a = actual.entries.begin();
    while (e != expected.entries.end() || a != actual.entries.end()) {
        if (a == actual.entries.end() || (e != expected.entries.end() && path_less(e->path, a->path))) {
            out.push_back("missing: " + (e++)->path);
        } else if (e == expected.entries.end() || path_less(a->path, e->path)) {
            out.push_back("extra: " + (a++)->path);
        } else {
            diff_entry(*e++, *a++, out);
        }
    }
    return out;
}

std::string tree_digest(const TreeIndex& index) {
    base::Sha256 h;
    h.update("stackup tree index v1\n");
    for (const auto& e : index.entries) {
        // NUL never occurs in paths or link targets, so the fields cannot run together.
        std::string line = e.path + '\0' + to_string(e.type) + '\0' + format_mode(e.mode) + '\0' +
                           std::to_string(e.size) + '\0' + std::to_string(e.mtime_ns) + '\0' + e.target +
                           '\0' + e.sha256;
        if (e.inode != 0) {  // only hard-link records: copy digests stay as they were
            line += '\0' + std::to_string(e.inode) + '\0' + std::to_string(e.ctime_ns);
        }
        h.update(line + '\n');
    }
    return h.hex_digest();
}

}  // namespace stackup::snapshot

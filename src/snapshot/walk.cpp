// index_tree: the walk of one tree, work_threads() directories at a time.
#include "snapshot/tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <exception>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "base/fs.hpp"
#include "base/sha256.hpp"
#include "snapshot/parallel.hpp"

namespace stackup::snapshot {

namespace {

std::string child_path(const std::string& rel, const std::string& name) {
    return rel == "." ? name : rel + "/" + name;
}


// Walks one tree, work_threads() directories at a time (stat is most of the
// cost, and the kernel's share of it runs in parallel). Each directory is
// opened relative to the root's fd and its entries are looked up relative to
// its own (fstatat): no path is resolved from / again, and no more than one
// fd per thread is open, however wide the tree.
// A directory to visit: its path relative to the root, and the device its listing's d_ino are
// inodes of (from the lstat that found it: no fstat of its own).
struct Dir {
    std::string rel;
    std::uint64_t dev = 0;
};

class Walker {
public:
    Walker(std::filesystem::path root, Contents contents, FileRecords* learn, const FileRecords* known)
        : root_(std::move(root)), contents_(contents), learn_(contents == Contents::records ? learn : nullptr),
          known_(contents == Contents::records && known && known->usable ? known : nullptr) {}

    void walk(const struct stat& root_stat) {
        root_fd_ = base::open_file(root_, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        parts_.resize(detail::work_threads());
        learned_.resize(detail::work_threads());
        parts_[0].push_back(entry_of(".", root_stat));
        pending_.push_back({".", static_cast<std::uint64_t>(root_stat.st_dev)});
        std::vector<std::thread> helpers;
        for (unsigned i = 1; i < detail::work_threads(); ++i) {
            helpers.emplace_back([this, i] { work(i); });
        }
        work(0);
        for (auto& t : helpers) {
            t.join();
        }
        if (first_error_) {
            std::rethrow_exception(first_error_);
        }
    }

    TreeIndex take() {
        if (learn_) {
            remember_files();
        }
        TreeIndex out;
        std::size_t total = 0;
        for (const auto& part : parts_) {
            total += part.size();
        }
        out.entries.reserve(total);
        for (auto& part : parts_) {
            std::move(part.begin(), part.end(), std::back_inserter(out.entries));
        }
        std::sort(out.entries.begin(), out.entries.end(),
                  [](const TreeEntry& a, const TreeEntry& b) { return path_less(a.path, b.path); });
        return out;
    }

private:
    std::filesystem::path full(const std::string& rel) const { return rel == "." ? root_ : root_ / rel; }

    void remember_files() {
        learn_->usable = !listing_differs_;
        for (std::size_t t = 0; t < parts_.size(); ++t) {
            for (const auto& [key, at] : learned_[t]) {
                const TreeEntry& f = parts_[t][at];  // a regular file's record: no target, no sha256
                learn_->files.insert_or_assign(key, FileRecords::Record{f.mode, f.size, f.mtime_ns, f.inode, f.ctime_ns});
            }
        }
    }

    // Takes directories until none is left and no thread can add one.
    void work(std::size_t thread) {
        std::vector<TreeEntry>& out = parts_[thread];
        std::vector<Dir> subdirs;
        for (;;) {
            Dir dir;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [this] { return failed_ || !pending_.empty() || busy_ == 0; });
                if (failed_ || pending_.empty()) {
                    wake_.notify_all();
                    return;
                }
                dir = std::move(pending_.back());
                pending_.pop_back();
                ++busy_;
            }
            try {
                visit_dir(dir, out, subdirs, learned_[thread]);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex_);
                if (!first_error_) {
                    first_error_ = std::current_exception();
                }
                failed_ = true;
                --busy_;
                wake_.notify_all();
                return;
            }
            {
                std::lock_guard<std::mutex> lock(mutex_);
                std::move(subdirs.begin(), subdirs.end(), std::back_inserter(pending_));
                --busy_;
            }
            subdirs.clear();
            wake_.notify_all();
        }
    }

    void visit_dir(const Dir& dir, std::vector<TreeEntry>& out, std::vector<Dir>& subdirs,
                   std::vector<std::pair<InodeKey, std::size_t>>& learned) {
        const std::string& rel = dir.rel;
        base::UniqueFd fd(rel == "." ? ::fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0)
                                     : ::openat(root_fd_.get(), rel.c_str(),
                                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!fd) {
            throw base::errno_error(errno, "cannot list " + full(rel).string());
        }
        for (const auto& [name, d_type, d_ino] : base::list_dir(fd.get(), full(rel))) {
            std::string child = child_path(rel, name);
            if (contents_ == Contents::identity && d_type == DT_REG) {
                TreeEntry e;  // what the directory says is all that is asked for
                e.path = std::move(child);
                e.inode = d_ino;
                out.push_back(std::move(e));
                continue;
            }
            if (known_ && d_type == DT_REG) {
                if (const auto it = known_->files.find({dir.dev, d_ino}); it != known_->files.end()) {
                    const FileRecords::Record& r = it->second;
                    TreeEntry e;
                    e.path = std::move(child);
                    e.mode = r.mode;
                    e.size = r.size;
                    e.mtime_ns = r.mtime_ns;
                    e.inode = r.inode;
                    e.ctime_ns = r.ctime_ns;
                    out.push_back(std::move(e));
                    continue;
                }
            }
            struct stat st {};
            if (::fstatat(fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
                throw base::errno_error(errno, "cannot stat " + full(child).string());
            }
            if (learn_ && S_ISREG(st.st_mode)) {
                if (d_ino != static_cast<std::uint64_t>(st.st_ino)) {
                    listing_differs_ = true;
                }
                learned.push_back({{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)}, out.size()});
            }
            out.push_back(entry_of(child, st));
            if (S_ISDIR(st.st_mode)) {
                subdirs.push_back({std::move(child), static_cast<std::uint64_t>(st.st_dev)});
            }
        }
    }

    TreeEntry entry_of(const std::string& rel, const struct stat& st) const {
        TreeEntry e;
        e.path = rel;
        e.mode = st.st_mode & 07777;
        e.mtime_ns = base::to_ns(st.st_mtim);
        if (S_ISREG(st.st_mode)) {
            e.type = EntryType::file;
            e.size = static_cast<std::uint64_t>(st.st_size);
            if (contents_ == Contents::hash) {
                e.sha256 = base::sha256_file(full(rel));
            } else if (contents_ == Contents::records || contents_ == Contents::identity) {
                e.inode = static_cast<std::uint64_t>(st.st_ino);
                e.ctime_ns = base::to_ns(st.st_ctim);
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
    FileRecords* learn_;         // null unless asked, with Contents::records
    const FileRecords* known_;   // null unless given, usable, with Contents::records
    base::UniqueFd root_fd_;
    std::vector<std::vector<TreeEntry>> parts_;  // one per thread
    std::vector<std::vector<std::pair<InodeKey, std::size_t>>> learned_;  // per thread: files' keys, at
    std::atomic<bool> listing_differs_{false};   // a file's d_ino was not its st_ino
    std::mutex mutex_;                           // guards the four below
    std::condition_variable wake_;
    std::vector<Dir> pending_;                   // directories to visit
    unsigned busy_ = 0;                          // threads visiting one
    bool failed_ = false;
    std::exception_ptr first_error_;
};

}  // namespace

TreeIndex index_tree(const std::filesystem::path& root, Contents contents, FileRecords* learn,
                     const FileRecords* known) {
    struct stat st {};
    if (::lstat(root.c_str(), &st) != 0) {
        throw base::errno_error(errno, "cannot stat " + root.string());
    }
    if (!S_ISDIR(st.st_mode)) {
        throw std::runtime_error("not a directory (symlinks are not followed): " + root.string());
    }
    Walker walker(root, contents, learn, known);
    walker.walk(st);
    return walker.take();
}

}  // namespace stackup::snapshot

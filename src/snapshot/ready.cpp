#include "snapshot/ready.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <set>

#include "base/fs.hpp"
#include "snapshot/copy.hpp"
#include "snapshot/integrity.hpp"
#include "snapshot/parallel.hpp"

namespace stackup::snapshot {

namespace {

std::string parent_of(const std::string& rel) {
    const auto slash = rel.rfind('/');
    return slash == std::string::npos ? "." : rel.substr(0, slash);
}

void set_mtime(const std::filesystem::path& path, std::int64_t mtime_ns) {
    const struct timespec times[2] = {{0, UTIME_OMIT}, base::from_ns(mtime_ns)};
    if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
        throw base::errno_error(errno, "cannot set times of " + path.string());
    }
}

void set_mode(const std::filesystem::path& path, std::uint32_t mode) {
    if (::chmod(path.c_str(), mode) != 0) {
        throw base::errno_error(errno, "cannot chmod " + path.string());
    }
}

// What `target` holds now; a target that is no readable tree is removed and reads as absent.
TreeIndex walk_target(const std::filesystem::path& target, const FileRecords* known) {
    if (!lstat_record(target)) {
        return {};
    }
    try {
        return index_tree(target, Contents::records, nullptr, known);
    } catch (const std::exception&) {
        remove_tree(target);
        return {};
    }
}

// Two passes: plan() merges the index with the walk of the target (both in
// path order) and judges every file it would keep or link, touching nothing;
// apply() then removes, creates and sets metadata, directories last and
// children first, as a directory's mtime moves with each change inside it.
class Converger {
public:
    Converger(const TreeIndex& expected, std::filesystem::path objects, std::filesystem::path target,
              const FileRecords* known)
        : want_(expected.entries), objects_(std::move(objects)), target_(std::move(target)), known_(known),
          now_(want_.size()), created_(want_.size(), false) {}

    Convergence run() {
        objects_fd_ = base::open_file(objects_, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        const TreeIndex actual = walk_target(target_, known_);
        plan(actual.entries);
        if (!damage_.empty()) {
            return {std::move(damage_), 0};
        }
        apply();
        return {{}, changes_};
    }

private:
    std::filesystem::path full(const std::string& rel) const { return rel == "." ? target_ : target_ / rel; }

    void plan(const std::vector<TreeEntry>& have) {
        std::size_t i = 0;
        std::size_t j = 0;
        while (i < want_.size() || j < have.size()) {
            if (j < have.size() && under_removed(have[j].path)) {
                ++j;
            } else if (j == have.size() || (i < want_.size() && path_less(want_[i].path, have[j].path))) {
                plan_create(i++);
            } else if (i == want_.size() || path_less(have[j].path, want_[i].path)) {
                plan_remove(have[j++]);
            } else {
                plan_compare(i++, have[j++]);
            }
        }
    }

    // Path order is byte order ("a-b" sorts between "a" and "a/b"), so a removed
    // directory's contents need not follow it: each path's ancestors are looked up.
    bool under_removed(const std::string& path) const {
        if (removed_dirs_.empty()) {
            return false;
        }
        for (std::string p = path; p != ".";) {
            p = parent_of(p);
            if (removed_dirs_.count(p) != 0) {
                return true;
            }
        }
        return false;
    }

    void plan_create(std::size_t i) {
        const TreeEntry& e = want_[i];
        creates_.push_back(i);
        created_[i] = true;
        if (e.path != ".") {
            touched_.insert(parent_of(e.path));
        }
        if (e.type == EntryType::file) {
            judge_object(i);
        }
    }

    void plan_remove(const TreeEntry& have) {
        removals_.push_back(have.path);
        touched_.insert(parent_of(have.path));
        if (have.type == EntryType::dir) {
            removed_dirs_.insert(have.path);
        }
    }

    void plan_compare(std::size_t i, const TreeEntry& have) {
        const TreeEntry& e = want_[i];
        const bool replace = e.type != have.type || (e.type == EntryType::symlink && e.target != have.target) ||
                             (e.type == EntryType::file && e.inode != have.inode);
        if (replace) {
            plan_remove(have);
            plan_create(i);
            return;
        }
        // The path is only built when the file must be read: most files cost no allocation here.
        if (e.type == EntryType::file && !record_intact(e, have)) {
            if (!e.sha256.empty() || !only_ctime_moved(e, have)) {
                if (auto problem = judge_file(e, have, full(have.path), e.sha256)) {
                    damage_.push_back(std::move(*problem));
                }
            }
        }
        now_[i] = Seen{have.mode, have.mtime_ns};
    }

    // A file to link comes from the object store: its inode must pass its record.
    void judge_object(std::size_t i) {
        const TreeEntry& e = want_[i];
        const std::string name = object_name(e.inode);
        const auto from = object_file(objects_, e.inode);  // for messages and hashing only
        std::optional<TreeEntry> seen = lstat_record_at(objects_fd_.get(), name.c_str(), from);
        if (!seen) {
            damage_.push_back("missing: " + e.path + " (" + from.string() + ")");
        } else if (seen->type != EntryType::file || seen->inode != e.inode) {
            damage_.push_back("content differs: " + e.path + " (" + from.string() + " is another file)");
        } else if (auto problem = judge_file(e, *seen, from, e.sha256)) {
            damage_.push_back(std::move(*problem));
        } else {
            now_[i] = Seen{seen->mode, seen->mtime_ns};
        }
    }

    void apply() {
        for (const auto& rel : removals_) {
            open_up(parent_of(rel));
            remove_tree(full(rel));
        }
        std::vector<std::size_t> files;
        for (std::size_t i : creates_) {
            if (want_[i].path != ".") {
                open_up(parent_of(want_[i].path));
            }
            if (want_[i].type == EntryType::file) {
                files.push_back(i);
            } else {
                create(want_[i]);
            }
        }
        // Their directories exist now: the links are made two at a time.
        struct NoState {};
        detail::for_each_parallel<NoState>(files, [&](std::size_t i, NoState&) { link_from_object(i); });
        changes_ += removals_.size() + creates_.size();
        for (std::size_t i = 0; i < want_.size(); ++i) {
            if (want_[i].type != EntryType::dir) {
                settle_entry(i);
            }
        }
        for (std::size_t i = want_.size(); i-- > 0;) {
            if (want_[i].type == EntryType::dir) {
                settle_dir(i);
            }
        }
    }

    // Directories and symlinks.
    void create(const TreeEntry& e) const {
        const auto to = full(e.path);
        if (e.type == EntryType::dir) {
            // Owner-writable until settle_dir, whatever its final mode.
            if (::mkdir(to.c_str(), 0700) != 0) {
                throw base::errno_error(errno, "cannot create directory " + to.string());
            }
        } else if (::symlink(e.target.c_str(), to.c_str()) != 0) {
            throw base::errno_error(errno, "cannot create symlink " + to.string());
        }
    }

    void link_from_object(std::size_t i) const {
        const std::string name = object_name(want_[i].inode);
        const auto to = full(want_[i].path);
        if (::linkat(objects_fd_.get(), name.c_str(), AT_FDCWD, to.c_str(), 0) != 0) {
            throw base::errno_error(errno, "cannot hard-link " + object_file(objects_, want_[i].inode).string() + " to " +
                                               to.string());
        }
    }

    // Makes an existing directory writable before entries change in it; settle_dir sets its mode back.
    void open_up(const std::string& dir) {
        const TreeEntry* e = find_wanted(dir);
        if (e == nullptr) {
            return;
        }
        const auto i = static_cast<std::size_t>(e - want_.data());
        if (created_[i] || !now_[i] || (now_[i]->mode & 0700) == 0700) {
            return;
        }
        set_mode(full(dir), now_[i]->mode | 0700);
        now_[i]->mode |= 0700;
    }

    const TreeEntry* find_wanted(const std::string& path) const {
        auto it = std::lower_bound(want_.begin(), want_.end(), path,
                                   [](const TreeEntry& e, const std::string& p) { return path_less(e.path, p); });
        return (it != want_.end() && it->path == path) ? &*it : nullptr;
    }

    // Files take their recorded mode and mtime (a chmod or touch through the venv
    // reaches the shared inode); symlinks their mtime, which creating them set to now.
    void settle_entry(std::size_t i) {
        const TreeEntry& e = want_[i];
        if (e.type == EntryType::file && now_[i]->mode != e.mode) {
            set_mode(full(e.path), e.mode);
            ++changes_;
        }
        const bool new_symlink = created_[i] && e.type == EntryType::symlink;
        if (new_symlink || now_[i]->mtime_ns != e.mtime_ns) {
            set_mtime(full(e.path), e.mtime_ns);
            ++changes_;
        }
    }

    void settle_dir(std::size_t i) {
        const TreeEntry& e = want_[i];
        const bool moved = created_[i] || touched_.count(e.path) != 0;
        if (moved || now_[i]->mode != e.mode) {
            set_mode(full(e.path), e.mode);
        }
        if (moved || now_[i]->mtime_ns != e.mtime_ns) {
            set_mtime(full(e.path), e.mtime_ns);
            ++changes_;
        }
    }

    const std::vector<TreeEntry>& want_;
    std::filesystem::path objects_;
    std::filesystem::path target_;
    const FileRecords* known_;
    base::UniqueFd objects_fd_;
    // What is there (kept or linked), by position in want_: what settling needs of it.
    struct Seen {
        std::uint32_t mode = 0;
        std::int64_t mtime_ns = 0;
    };
    std::vector<std::optional<Seen>> now_;
    std::vector<bool> created_;
    std::vector<std::size_t> creates_;           // positions in want_, parents first
    std::vector<std::string> removals_;          // paths in the target, outermost only
    std::set<std::string> removed_dirs_;
    std::set<std::string> touched_;              // directories whose entries change
    std::vector<std::string> damage_;
    std::uint64_t changes_ = 0;
};

}  // namespace

Convergence converge_links(const TreeIndex& expected, const std::filesystem::path& objects,
                           const std::filesystem::path& target, const FileRecords* known) {
    return Converger(expected, objects, target, known).run();
}

}  // namespace stackup::snapshot

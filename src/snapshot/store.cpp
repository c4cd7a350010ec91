#include "snapshot/store.hpp"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <random>
#include <set>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "base/sha256.hpp"
#include "snapshot/copy.hpp"
#include "snapshot/index_tsv.hpp"
#include "snapshot/link.hpp"
#include "snapshot/reflink.hpp"
#include "snapshot/store_internal.hpp"
#include "snapshot/store_json.hpp"
#include "snapshot/strategy.hpp"

namespace stackup::snapshot {

namespace detail {

const char* const kInfoFile = "snapshot.json";
const char* const kIndexFile = "index.tsv";
const char* const kTreeDir = "tree";
const char* const kObjectsDir = ".objects";
const char* const kReadyDir = "ready";
const char* const kTrashDir = ".trash";

std::filesystem::path objects_of(const std::filesystem::path& dir) {
    return dir.parent_path() / kObjectsDir;
}

std::string random_hex4() {
    std::random_device rd;
    return fmt::format("{:04x}", rd() & 0xffff);
}


}  // namespace detail

namespace {

using namespace detail;

// A name that is a plain directory entry: no separators, not hidden, not "." or "..".
bool valid_id(const std::string& id) {
    return !id.empty() && id.front() != '.' && id.find('/') == std::string::npos;
}

struct Stamp {
    std::string id;       // "20261202T160501Z-3fa9"
    std::string created;  // "2026-12-02T16:05:01.123456Z"
};

Stamp new_stamp() {
    const auto now = std::chrono::system_clock::now();
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
    const time_t secs = static_cast<time_t>(us / 1'000'000);
    struct tm tm {};
    ::gmtime_r(&secs, &tm);
    char id[32];
    std::strftime(id, sizeof id, "%Y%m%dT%H%M%SZ", &tm);
    auto created = fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:06d}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                               tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us % 1'000'000);
    return {std::string(id) + "-" + random_hex4(), created};
}

// Whether `inner` is `outer` or lies below it (both absolute and normal).
bool is_within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
    auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
    return o == outer.end() || (std::next(o) == outer.end() && o->empty());
}

std::filesystem::path resolve_existing_venv(const std::filesystem::path& venv,
                                            const std::filesystem::path& snapshots_dir) {
    const auto abs = std::filesystem::canonical(venv);
    if (is_within(std::filesystem::weakly_canonical(snapshots_dir), abs)) {
        throw Error(ExitCode::usage, "the snapshot store " + snapshots_dir.string() +
                                         " is inside the venv " + abs.string() +
                                         "; put the state dir outside the venv");
    }
    return abs;
}

// Creates snapshots/<id> with a fresh id; the mkdir is what makes the id ours.
std::pair<Stamp, std::filesystem::path> claim_dir(const std::filesystem::path& snapshots_dir) {
    for (int attempt = 0;; ++attempt) {
        Stamp stamp = new_stamp();
        auto dir = snapshots_dir / stamp.id;
        if (::mkdir(dir.c_str(), 0700) == 0) {
            return {stamp, dir};
        }
        if (errno != EEXIST || attempt == 100) {
            throw base::errno_error(errno, "cannot create snapshot directory " + dir.string());
        }
    }
}

SnapshotInfo load_info(const std::filesystem::path& dir) {
    auto info = json_format::info_from_json(base::read_file(dir / kInfoFile), dir / kInfoFile);
    if (info.id != dir.filename().string()) {
        throw std::runtime_error("cannot read " + (dir / kInfoFile).string() + ": it names snapshot " +
                                 info.id + ", not " + dir.filename().string());
    }
    info.dir = dir;
    return info;
}

std::vector<std::filesystem::path> snapshot_dirs(const std::filesystem::path& snapshots_dir) {
    std::vector<std::filesystem::path> dirs;
    std::error_code ec;
    if (!std::filesystem::is_directory(snapshots_dir, ec)) {
        return dirs;
    }
    for (const auto& entry : std::filesystem::directory_iterator(snapshots_dir)) {
        if (valid_id(entry.path().filename().string()) && entry.is_directory() && !entry.is_symlink()) {
            dirs.push_back(entry.path());
        }
    }
    return dirs;
}

// The snapshot's tree of `source`, by the resolved strategy, for snapshot dir `dir`.
TreeIndex take_tree(Strategy strategy, const std::filesystem::path& source, const std::filesystem::path& dir) {
    if (strategy == Strategy::hardlink) {
        return link_tree(source, objects_of(dir)).index;
    }
    const auto tree = dir / kTreeDir;
    CopyOptions options;
    if (strategy == Strategy::reflink) {
        options.data = FileData::clone;
        options.record_copies = true;
    }
    return copy_tree(source, tree, options);
}

SnapshotInfo find_or_fail(const Store& store, const std::string& id) {
    auto info = store.find(id);
    if (!info) {
        throw Error(ExitCode::rollback_failed, "no snapshot " + id + " in " + store.snapshots_dir().string());
    }
    return *info;
}

bool has_info(const std::filesystem::path& dir) {
    struct stat st {};
    return ::lstat((dir / kInfoFile).c_str(), &st) == 0;
}

}  // namespace

Store::Store(std::filesystem::path state_dir) : snapshots_dir_(std::move(state_dir) / "snapshots") {}

SnapshotInfo Store::create(const std::filesystem::path& venv, const CreateRequest& request) {
    const auto source = resolve_existing_venv(venv, snapshots_dir_);
    std::filesystem::create_directories(snapshots_dir_);
    // Before the claim: an explicit reflink that cannot work leaves nothing behind.
    const Resolved how = resolve_strategy(request.strategy, source, snapshots_dir_);
    std::uint64_t next_generation = 1;
    for (const auto& other : list()) {
        next_generation = std::max(next_generation, other.generation + 1);
    }
    auto [stamp, dir] = claim_dir(snapshots_dir_);
    try {
        const TreeIndex index = take_tree(how.strategy, source, dir);
        SnapshotInfo info{stamp.id, stamp.created, request.label, request.manifest, source, how.strategy,
                          how.reason, request.distributions, index.entries.size(), index.file_bytes(),
                          tree_digest(index), dir};
        if (!request.venv.empty()) {
            info.venv = std::filesystem::weakly_canonical(std::filesystem::absolute(request.venv));
        }
        info.generation = next_generation;
        info.parent = request.parent;
        info.outcome = request.outcome;
        info.changes = request.changes;
        info.plan = request.plan;
        struct stat root {};
        if (::lstat(source.c_str(), &root) != 0) {
            throw base::errno_error(errno, "cannot stat " + source.string());
        }
        info.root_device = static_cast<std::uint64_t>(root.st_dev);
        info.root_inode = static_cast<std::uint64_t>(root.st_ino);
        base::write_file_atomic(dir / kIndexFile, tsv_format::index_to_tsv(index));
        // Written last: its presence is what makes the snapshot complete.
        base::write_file_atomic(dir / kInfoFile, json_format::info_to_json(info));
        base::fsync_dir(snapshots_dir_);
        return info;
    } catch (...) {
        discard_after_failure(dir);
        throw;
    }
}

std::vector<SnapshotInfo> Store::list() const {
    std::vector<SnapshotInfo> out;
    for (const auto& dir : snapshot_dirs(snapshots_dir_)) {
        if (!has_info(dir)) {
            continue;  // incomplete
        }
        try {
            out.push_back(load_info(dir));
        } catch (const std::exception&) {
            // Unreadable (or from a newer stackup): not offered; find() reports why.
        }
    }
    std::sort(out.begin(), out.end(), [](const SnapshotInfo& a, const SnapshotInfo& b) {
        return a.created != b.created ? a.created > b.created : a.id > b.id;
    });
    return out;
}

std::optional<SnapshotInfo> Store::find(const std::string& id) const {
    const auto dir = snapshots_dir_ / id;
    if (!valid_id(id) || !has_info(dir)) {
        return std::nullopt;
    }
    try {
        return load_info(dir);
    } catch (const std::exception& e) {
        throw Error(ExitCode::rollback_failed, "snapshot " + id + " is unusable: " + e.what());
    }
}

TreeIndex Store::index(const SnapshotInfo& info) const {
    const auto path = info.dir / info.index_file;
    TreeIndex index;
    try {
        index = tsv_format::index_from_tsv(base::read_file(path), path);
    } catch (const std::exception& e) {
        throw Error(ExitCode::rollback_failed, "snapshot " + info.id + " is unusable: " + e.what());
    }
    if (tree_digest(index) != info.tree_digest) {
        throw Error(ExitCode::rollback_failed, "snapshot " + info.id + " is damaged: " + path.string() +
                                                   " does not match the digest in " +
                                                   (info.dir / kInfoFile).string());
    }
    return index;
}

std::vector<std::string> Store::verify(const std::string& id) const {
    const SnapshotInfo info = find_or_fail(*this, id);
    const TreeIndex expected = index(info);
    const auto tree = info.dir / kTreeDir;
    try {
        switch (info.strategy) {
            case Strategy::hardlink:
                return check_links(expected, objects_of(info.dir));
            case Strategy::reflink:
                return check_clones(expected, tree);
            default:
                return diff(expected, index_tree(tree, Contents::hash));
        }
    } catch (const std::exception& e) {
        return {std::string("unreadable: ") + e.what()};
    }
}

bool Store::remove(const std::string& id) {
    const bool removed = remove_dir(id);
    if (removed) {
        collect_garbage();
    }
    return removed;
}

Store::Removal Store::remove(const std::vector<std::string>& ids, bool later) {
    Removal out;
    for (const auto& id : ids) {
        try {
            if (remove_dir(id, later)) {
                out.removed.push_back(id);
            }
        } catch (const std::exception& e) {
            out.failed.emplace_back(id, e.what());
        }
    }
    if (!out.removed.empty()) {
        try {
            collect_garbage();  // once: it reads every remaining snapshot's index
        } catch (const std::exception& e) {
            out.garbage_error = e.what();
        }
    }
    return out;
}

bool Store::remove_dir(const std::string& id, bool later) {
    const auto dir = snapshots_dir_ / id;
    struct stat st {};
    if (!valid_id(id) || ::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return false;
    }
    if (::unlink((dir / kInfoFile).c_str()) != 0 && errno != ENOENT) {
        throw base::errno_error(errno, "cannot remove " + (dir / kInfoFile).string());
    }
    base::fsync_dir(dir);
    const auto trash = snapshots_dir_ / kTrashDir;
    if (later && (::mkdir(trash.c_str(), 0700) == 0 || errno == EEXIST) &&
        ::rename(dir.c_str(), (trash / (id + "-" + random_hex4())).c_str()) == 0) {
        base::fsync_dir(snapshots_dir_);
        return true;
    }
    remove_tree(dir);
    base::fsync_dir(snapshots_dir_);
    return true;
}

std::uint64_t Store::empty_trash() const {
    const auto trash = snapshots_dir_ / kTrashDir;
    std::error_code ec;
    if (!std::filesystem::is_directory(trash, ec)) {
        return 0;
    }
    std::uint64_t removed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(trash)) {
        remove_tree(entry.path());
        ++removed;
    }
    return removed;
}

std::uint64_t Store::collect_garbage() {
    std::set<std::uint64_t> referenced;
    for (const auto& info : list()) {
        if (info.strategy != Strategy::hardlink) {
            continue;
        }
        try {
            add_referenced(index(info), referenced);
        } catch (const std::exception&) {
            return 0;  // what it needs is unknown: nothing goes
        }
    }
    return drop_unreferenced(snapshots_dir_ / kObjectsDir, referenced);
}

std::vector<std::string> Store::cleanup_incomplete() {
    std::vector<std::string> removed;
    for (const auto& dir : snapshot_dirs(snapshots_dir_)) {
        if (!has_info(dir)) {
            remove_tree(dir);
            removed.push_back(dir.filename().string());
        }
    }
    if (!removed.empty()) {
        base::fsync_dir(snapshots_dir_);
        collect_garbage();  // what a create linked before it died
    }
    std::sort(removed.begin(), removed.end());
    return removed;
}

}  // namespace stackup::snapshot

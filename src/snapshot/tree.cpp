#include "snapshot/tree.hpp"

#include <time.h>

#include <algorithm>
#include <charconv>
#include <iterator>

#include <fmt/format.h>

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

std::string format_time_ns(std::int64_t ns) {
    const struct timespec ts = base::from_ns(ns);  // floored: times before 1970 print correctly
    struct tm tm {};
    ::gmtime_r(&ts.tv_sec, &tm);
    return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:09d}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec);
}

std::string format_mode(std::uint32_t mode) {
    return fmt::format("{:04o}", mode);
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

namespace {

bool in_pycache(const std::string& path) {
    return path == "__pycache__" || path.starts_with("__pycache__/") || path.find("/__pycache__") != std::string::npos;
}

}  // namespace

namespace {

// Merges both indexes in path order: missing and extra paths, and `compare` for each path in both.
template <typename Compare>
std::vector<std::string> merge_diff(const TreeIndex& expected, const TreeIndex& actual, Compare compare) {
    std::vector<std::string> out;
    auto e = expected.entries.begin();
    auto a = actual.entries.begin();
    while (e != expected.entries.end() || a != actual.entries.end()) {
        if (a == actual.entries.end() || (e != expected.entries.end() && path_less(e->path, a->path))) {
            out.push_back("missing: " + (e++)->path);
        } else if (e == expected.entries.end() || path_less(a->path, e->path)) {
            out.push_back("extra: " + (a++)->path);
        } else {
            compare(*e++, *a++, out);
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> diff(const TreeIndex& expected, const TreeIndex& actual) {
    return merge_diff(expected, actual, diff_entry);
}

std::vector<std::string> diff_identity(const TreeIndex& expected, const TreeIndex& actual) {
    return merge_diff(expected, actual, [](const TreeEntry& want, const TreeEntry& got, std::vector<std::string>& out) {
        if (want.type != EntryType::file || got.type != EntryType::file) {
            diff_entry(want, got, out);
        } else if (want.inode != got.inode) {
            out.push_back("inode differs: " + want.path + ": " + std::to_string(want.inode) + " -> " +
                          std::to_string(got.inode));
        }
    });
}

std::vector<std::string> diff_drift(const TreeIndex& expected, const TreeIndex& actual) {
    TreeIndex want;
    TreeIndex got;
    std::copy_if(expected.entries.begin(), expected.entries.end(), std::back_inserter(want.entries),
                 [](const TreeEntry& e) { return !in_pycache(e.path); });
    std::copy_if(actual.entries.begin(), actual.entries.end(), std::back_inserter(got.entries),
                 [](const TreeEntry& e) { return !in_pycache(e.path); });
    return merge_diff(want, got, [](const TreeEntry& w, const TreeEntry& g, std::vector<std::string>& out) {
        if (w.type == EntryType::dir && g.type == EntryType::dir) {
            if (w.mode != g.mode) {
                out.push_back("mode differs: " + w.path + ": " + format_mode(w.mode) + " -> " + format_mode(g.mode));
            }
            return;
        }
        if (w.type == EntryType::file && g.type == EntryType::file && w.inode != g.inode) {
            out.push_back("replaced: " + w.path + " (inode " + std::to_string(w.inode) + " -> " +
                          std::to_string(g.inode) + ")");
            return;
        }
        diff_entry(w, g, out);
    });
}

namespace {

template <typename Int>
void append_number(std::string& out, Int value) {
    char buf[24];
    const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    out.append(buf, end);
}

}  // namespace

std::string tree_digest(const TreeIndex& index) {
    base::Sha256 h;
    h.update("stackup tree index v1\n");
    std::string line;  // one buffer for all lines: 20,000 entries, no allocation each
    for (const auto& e : index.entries) {
        // NUL never occurs in paths or link targets, so the fields cannot run together.
        line.assign(e.path);
        line += '\0';
        line += to_string(e.type);
        line += '\0';
        fmt::format_to(std::back_inserter(line), "{:04o}", e.mode);
        line += '\0';
        append_number(line, e.size);
        line += '\0';
        append_number(line, e.mtime_ns);
        line += '\0';
        line += e.target;
        line += '\0';
        line += e.sha256;
        if (e.inode != 0) {  // only hard-link records: copy digests stay as they were
            line += '\0';
            append_number(line, e.inode);
            line += '\0';
            append_number(line, e.ctime_ns);
        }
        line += '\n';
        h.update(line);
    }
    return h.hex_digest();
}

}  // namespace stackup::snapshot

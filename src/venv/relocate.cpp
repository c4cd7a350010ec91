#include "venv/relocate.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "base/fs.hpp"
#include "base/sha256.hpp"

namespace stackup::venv {

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
    return text;
}

bool is_record(const std::filesystem::path& path) {
    return path.filename() == "RECORD" && path.parent_path().extension() == ".dist-info";
}

// One RECORD line: path (maybe quoted), hash, size. The path is everything before the last two commas.
struct RecordLine {
    std::string path_text;  // as written, quotes included
    std::string path;       // unquoted
};

std::optional<RecordLine> split_record_line(const std::string& line) {
    const auto size_comma = line.rfind(',');
    if (size_comma == std::string::npos || size_comma == 0) {
        return std::nullopt;
    }
    const auto hash_comma = line.rfind(',', size_comma - 1);
    if (hash_comma == std::string::npos) {
        return std::nullopt;
    }
    RecordLine out{line.substr(0, hash_comma), line.substr(0, hash_comma)};
    if (out.path.size() >= 2 && out.path.front() == '"' && out.path.back() == '"') {
        out.path = replace_all(out.path.substr(1, out.path.size() - 2), "\"\"", "\"");
    }
    return out;
}

// Brings the lines of `record` that name a rewritten file up to date; whether any changed.
bool update_record(const std::filesystem::path& record, const std::map<std::filesystem::path, std::string>& contents) {
    const std::string text = base::read_file(record);
    const auto site = record.parent_path().parent_path();
    std::string out;
    bool changed = false;
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        const bool last = end == std::string::npos;
        std::string line = text.substr(start, last ? std::string::npos : end - start);
        const bool cr = !line.empty() && line.back() == '\r';
        if (cr) {
            line.pop_back();
        }
        if (auto parsed = split_record_line(line)) {
            const auto target = (site / parsed->path).lexically_normal();
            if (auto it = contents.find(target); it != contents.end()) {
                line = parsed->path_text + ",sha256=" + base::sha256_record(it->second) + "," +
                       std::to_string(it->second.size());
                changed = true;
            }
        }
        out += line + (cr ? "\r" : "") + (last ? "" : "\n");
        start = last ? text.size() : end + 1;
    }
    if (changed) {
        struct stat st {};
        const ::mode_t mode = ::lstat(record.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
        base::write_file_atomic(record, out, mode);
    }
    return changed;
}

// Whether the file holds `needle`, read 1 MiB at a time (the chunks overlap by the needle's
// length less one): a wheel's shared libraries run to hundreds of MB, and only the few files
// that name the build path are read whole.
// `window`: the read buffer, made once for every file (an apply writes 10,000 of them; a
// fresh 1 MiB buffer each is a map, a zeroing and an unmap per file: 2 s).
constexpr std::size_t kChunk = std::size_t(1) << 20;

bool holds(const std::filesystem::path& path, const std::string& needle, std::string& window) {
    base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        throw base::errno_error(errno, "cannot open " + path.string());
    }
    const std::size_t keep = needle.empty() ? 0 : needle.size() - 1;
    if (window.size() < kChunk + keep) {
        window.resize(kChunk + keep);
    }
    std::size_t carried = 0;  // bytes of the previous chunk's tail at the window's start
    for (;;) {
        const ::ssize_t n = ::read(fd.get(), window.data() + carried, kChunk);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw base::errno_error(errno, "cannot read " + path.string());
        }
        const std::size_t filled = carried + static_cast<std::size_t>(n);
        if (std::string_view(window.data(), filled).find(needle) != std::string_view::npos) {
            return true;
        }
        if (n == 0) {
            return false;
        }
        carried = std::min(keep, filled);
        std::memmove(window.data(), window.data() + filled - carried, carried);
    }
}

// The paths one RECORD lists, relative to `tree` (they are relative to the site-packages the
// .dist-info is in; the scripts' start with ../../../bin/).
void add_listed(const std::filesystem::path& tree, const std::filesystem::path& record,
                std::set<std::string>& listed) {
    const std::string text = base::read_file(record);
    const auto site = record.parent_path().parent_path();
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        start = end == std::string::npos ? text.size() : end + 1;
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        if (auto parsed = split_record_line(line)) {
            listed.insert((site / parsed->path).lexically_normal().lexically_relative(tree).generic_string());
        }
    }
}

}  // namespace

std::vector<std::string> relocation_candidates(const std::filesystem::path& tree, const std::vector<std::string>& written) {
    std::set<std::string> listed;
    for (const auto& rel : written) {
        if (is_record(tree / rel)) {
            add_listed(tree, tree / rel, listed);
        }
    }
    std::vector<std::string> out;
    for (const auto& rel : written) {
        if (rel.rfind("bin/", 0) == 0 || is_record(tree / rel) || listed.count(rel) == 0) {
            out.push_back(rel);
        }
    }
    return out;
}

Relocation relocate(const std::filesystem::path& tree, const std::string& from, const std::string& to,
                    const std::vector<std::string>& candidates) {
    Relocation result;
    std::string window;  // holds()'s read buffer, for every file
    std::map<std::filesystem::path, std::string> rewritten;  // absolute path -> new contents
    std::vector<std::filesystem::path> records;
    for (const auto& rel : candidates) {
        const auto path = tree / rel;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
            continue;
        }
        if (is_record(path)) {
            records.push_back(path);
        }
        if (!holds(path, from, window)) {
            continue;
        }
        std::string text = base::read_file(path);
        if (path.extension() == ".pyc") {
            if (::unlink(path.c_str()) != 0) {
                throw base::errno_error(errno, "cannot remove " + path.string());
            }
            result.removed.push_back(rel);
            continue;
        }
        if (text.find('\0') != std::string::npos) {
            result.refused.push_back(rel);
            continue;
        }
        text = replace_all(std::move(text), from, to);
        base::write_file_atomic(path, text, st.st_mode & 07777);
        result.rewritten.push_back(rel);
        rewritten.emplace(path.lexically_normal(), std::move(text));
    }
    if (!rewritten.empty()) {
        for (const auto& record : records) {
            if (update_record(record, rewritten)) {
                result.records.push_back(record.lexically_relative(tree).generic_string());
            }
        }
    }
    std::sort(result.rewritten.begin(), result.rewritten.end());
    std::sort(result.removed.begin(), result.removed.end());
    std::sort(result.records.begin(), result.records.end());
    std::sort(result.refused.begin(), result.refused.end());
    return result;
}

}  // namespace stackup::venv

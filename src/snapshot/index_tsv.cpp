#include "snapshot/index_tsv.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string_view>

#include "snapshot/store_json.hpp"

namespace stackup::snapshot::tsv_format {

namespace {

const std::string_view kHeader = "stackup snapshot index 2\n";

char type_char(EntryType type) {
    switch (type) {
        case EntryType::file:
            return 'f';
        case EntryType::dir:
            return 'd';
        case EntryType::symlink:
            return 'l';
    }
    return '?';
}

template <typename Int>
void put_number(std::string& out, Int value, int base = 10) {
    char buf[24];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, value, base).ptr);
}

void put_bytes(std::string& out, const std::string& bytes) {
    if (bytes.find_first_of("\t\n\\") == std::string::npos) {
        out += bytes;
    } else {
        out += '\\';
        out += json_format::to_hex(bytes);
    }
}

// Splits one line into its tab-separated fields, checking each as it goes.
class LineReader {
public:
    LineReader(std::string_view line, std::size_t number) : rest_(line), number_(number) {}

    std::string_view field(const char* name) {
        if (done_) {
            fail(std::string("no ") + name);
        }
        const auto tab = rest_.find('\t');
        std::string_view out = rest_.substr(0, tab);
        if (tab == std::string_view::npos) {
            done_ = true;
        } else {
            rest_.remove_prefix(tab + 1);
        }
        return out;
    }

    template <typename Int>
    Int number(const char* name, int base = 10) {
        const std::string_view text = field(name);
        Int value{};
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
            fail(std::string("bad ") + name + " \"" + std::string(text) + "\"");
        }
        return value;
    }

    std::string bytes(const char* name) {
        const std::string_view text = field(name);
        if (text.empty() || text.front() != '\\') {
            return std::string(text);
        }
        try {
            return json_format::from_hex(std::string(text.substr(1)));
        } catch (const std::exception&) {
            fail(std::string("bad ") + name + " \"" + std::string(text) + "\"");
        }
    }

    void end() const {
        if (!done_) {
            fail("more fields than expected");
        }
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("line " + std::to_string(number_) + ": " + what);
    }

private:
    std::string_view rest_;
    std::size_t number_;
    bool done_ = false;
};

bool is_sha256(std::string_view text) {
    if (text.size() != 64) {
        return false;
    }
    for (char c : text) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

TreeEntry read_entry(std::string_view line, std::size_t number) {
    LineReader r(line, number);
    TreeEntry e;
    const std::string_view type = r.field("type");
    if (type == "f") {
        e.type = EntryType::file;
    } else if (type == "d") {
        e.type = EntryType::dir;
    } else if (type == "l") {
        e.type = EntryType::symlink;
    } else {
        r.fail("unknown type \"" + std::string(type) + "\"");
    }
    e.mode = r.number<std::uint32_t>("mode", 8);
    if (e.mode > 07777) {
        r.fail("bad mode");
    }
    e.size = r.number<std::uint64_t>("size");
    e.mtime_ns = r.number<std::int64_t>("mtime_ns");
    e.inode = r.number<std::uint64_t>("ino");
    e.ctime_ns = r.number<std::int64_t>("ctime_ns");
    const std::string_view sha = r.field("sha256");
    if (sha != "-") {
        if (!is_sha256(sha)) {
            r.fail("bad sha256 \"" + std::string(sha) + "\"");
        }
        e.sha256 = std::string(sha);
    }
    e.path = r.bytes("path");
    if (e.path.empty()) {
        r.fail("empty path");
    }
    if (e.type == EntryType::symlink) {
        e.target = r.bytes("target");
    }
    r.end();
    return e;
}

}  // namespace

std::string index_to_tsv(const TreeIndex& index) {
    std::string out(kHeader);
    out.reserve(index.entries.size() * 120);
    for (const auto& e : index.entries) {
        out += type_char(e.type);
        out += '\t';
        put_number(out, e.mode, 8);
        out += '\t';
        put_number(out, e.size);
        out += '\t';
        put_number(out, e.mtime_ns);
        out += '\t';
        put_number(out, e.inode);
        out += '\t';
        put_number(out, e.ctime_ns);
        out += '\t';
        out += e.sha256.empty() ? std::string_view("-") : std::string_view(e.sha256);
        out += '\t';
        put_bytes(out, e.path);
        if (e.type == EntryType::symlink) {
            out += '\t';
            put_bytes(out, e.target);
        }
        out += '\n';
    }
    return out;
}

TreeIndex index_from_tsv(const std::string& text, const std::filesystem::path& source) {
    try {
        const std::string_view all(text);
        if (all.substr(0, kHeader.size()) != kHeader) {
            throw std::runtime_error("line 1: not \"" + std::string(kHeader.substr(0, kHeader.size() - 1)) + "\"");
        }
        TreeIndex index;
        index.entries.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')));
        std::size_t number = 1;
        for (std::size_t at = kHeader.size(); at < all.size();) {
            const auto newline = all.find('\n', at);
            ++number;
            if (newline == std::string_view::npos) {
                throw std::runtime_error("line " + std::to_string(number) + ": no newline (cut short?)");
            }
            index.entries.push_back(read_entry(all.substr(at, newline - at), number));
            at = newline + 1;
        }
        return index;
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot read " + source.string() + ": " + e.what());
    }
}

}  // namespace stackup::snapshot::tsv_format

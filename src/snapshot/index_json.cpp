// index.json, format 1: {"format": 1, "entries": [ one object per line ]},
// each entry {"path" (or "path_hex"), "type", "mode", "size", "mtime_ns",
// "target"/"target_hex" for symlinks, "sha256", "ino" and "ctime_ns" when recorded}.
#include <cstdint>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "snapshot/store_json.hpp"

namespace stackup::snapshot::json_format {

namespace {

using nlohmann::json;

// A JSON string for `bytes`, or nullopt when they are not UTF-8.
std::optional<std::string> quoted(const std::string& bytes) {
    try {
        return json(bytes).dump();
    } catch (const json::type_error&) {
        return std::nullopt;
    }
}

void put_bytes(std::string& out, const char* key, const std::string& bytes) {
    if (auto text = quoted(bytes)) {
        out += std::string("\"") + key + "\": " + *text;
    } else {
        out += std::string("\"") + key + "_hex\": \"" + to_hex(bytes) + "\"";
    }
}

void put_entry(std::string& out, const TreeEntry& e) {
    out += '{';
    put_bytes(out, "path", e.path);
    out += ", \"type\": \"" + to_string(e.type) + "\", \"mode\": \"" + format_mode(e.mode) +
           "\", \"size\": " + std::to_string(e.size) + ", \"mtime_ns\": " + std::to_string(e.mtime_ns);
    if (e.type == EntryType::symlink) {
        out += ", ";
        put_bytes(out, "target", e.target);
    }
    if (!e.sha256.empty()) {
        out += ", \"sha256\": \"" + e.sha256 + "\"";  // lowercase hex: nothing to escape
    }
    if (e.inode != 0) {
        out += ", \"ino\": " + std::to_string(e.inode) + ", \"ctime_ns\": " + std::to_string(e.ctime_ns);
    }
    out += '}';
}

// The fields of one entry as they arrive, checked when its object ends.
struct PendingEntry {
    std::optional<std::string> path;
    std::optional<std::string> type;
    std::optional<std::string> mode;
    std::optional<std::uint64_t> size;
    std::optional<std::int64_t> mtime_ns;
    std::optional<std::string> target;
    TreeEntry done;
};

// Reads index.json event by event into a TreeIndex: no DOM of 20,000 objects.
// Unknown keys with plain values are ignored, as the DOM reader did.
class IndexReader : public nlohmann::json_sax<json> {
public:
    TreeIndex take() {
        if (format_ != kFormat) {
            throw std::runtime_error("no \"format\": 1");
        }
        return std::move(index_);
    }

    bool null() override { return scalar(); }
    bool boolean(bool) override { return scalar(); }
    bool number_float(number_float_t, const string_t&) override { return scalar(); }
    bool binary(binary_t&) override { return scalar(); }
    bool number_integer(number_integer_t value) override {
        return number(value < 0, static_cast<std::uint64_t>(value));
    }
    bool number_unsigned(number_unsigned_t value) override { return number(false, value); }

    bool string(string_t& value) override {
        if (depth_ == 2) {
            if (key_ == "path") {
                entry_.path = value;
            } else if (key_ == "path_hex") {
                entry_.path = from_hex(value);
            } else if (key_ == "type") {
                entry_.type = value;
            } else if (key_ == "mode") {
                entry_.mode = value;
            } else if (key_ == "target") {
                entry_.target = value;
            } else if (key_ == "target_hex") {
                entry_.target = from_hex(value);
            } else if (key_ == "sha256") {
                entry_.done.sha256 = value;
            }
        }
        return scalar();
    }

    bool key(string_t& value) override {
        key_ = value;
        return true;
    }

    bool start_object(std::size_t) override {
        ++depth_;
        if (depth_ == 2 && !in_entries_) {
            throw std::runtime_error("unexpected object under \"" + key_ + "\"");
        }
        if (depth_ > 2) {
            throw std::runtime_error("unexpected object in an entry");
        }
        entry_ = PendingEntry{};
        return true;
    }

    bool end_object() override {
        if (depth_-- == 2) {
            index_.entries.push_back(finish(entry_));
        }
        return true;
    }

    bool start_array(std::size_t) override {
        if (depth_ != 1 || key_ != "entries" || in_entries_ || entries_seen_) {
            throw std::runtime_error("unexpected array");
        }
        in_entries_ = entries_seen_ = true;
        return true;
    }

    bool end_array() override {
        in_entries_ = false;
        return true;
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
        throw std::runtime_error(e.what());
    }

private:
    bool scalar() {
        if (depth_ == 1 && in_entries_) {
            throw std::runtime_error("\"entries\" holds a non-object");
        }
        return true;
    }

    bool number(bool negative, std::uint64_t value) {
        if (depth_ == 1 && key_ == "format") {
            format_ = negative ? -1 : static_cast<std::int64_t>(value);
            if (format_ != kFormat) {
                throw std::runtime_error("unsupported format " + std::to_string(format_) + " (this stackup reads " +
                                         std::to_string(kFormat) + ")");
            }
        } else if (depth_ == 2) {
            const auto as_signed = static_cast<std::int64_t>(value);
            if (key_ == "size" && !negative) {
                entry_.size = value;
            } else if (key_ == "mtime_ns") {
                entry_.mtime_ns = as_signed;
            } else if (key_ == "ino" && !negative) {
                entry_.done.inode = value;
            } else if (key_ == "ctime_ns") {
                entry_.done.ctime_ns = as_signed;
            }
        }
        return scalar();
    }

    TreeEntry finish(PendingEntry& p) const {
        const std::string where = "entry " + std::to_string(index_.entries.size());
        if (!p.path || !p.type || !p.mode || !p.size || !p.mtime_ns) {
            throw std::runtime_error(where + " lacks one of path, type, mode, size, mtime_ns");
        }
        TreeEntry e = std::move(p.done);
        e.path = std::move(*p.path);
        const auto type = entry_type_from_string(*p.type);
        if (!type) {
            throw std::runtime_error("unknown entry type for " + e.path);
        }
        e.type = *type;
        e.mode = parse_mode(*p.mode);
        e.size = *p.size;
        e.mtime_ns = *p.mtime_ns;
        if (e.type == EntryType::symlink) {
            if (!p.target) {
                throw std::runtime_error("symlink " + e.path + " has no target");
            }
            e.target = std::move(*p.target);
        }
        return e;
    }

    int depth_ = 0;
    bool in_entries_ = false;  // between the entries array's brackets
    bool entries_seen_ = false;
    std::int64_t format_ = 0;
    std::string key_;
    PendingEntry entry_;
    TreeIndex index_;
};

}  // namespace

// One entry per line: compact, yet readable and diffable.
std::string index_to_json(const TreeIndex& index) {
    std::string out = "{\"format\": " + std::to_string(kFormat) + ", \"entries\": [";
    out.reserve(index.entries.size() * 160);
    const char* sep = "\n";
    for (const auto& e : index.entries) {
        out += sep;
        put_entry(out, e);
        sep = ",\n";
    }
    return out + "\n]}\n";
}

TreeIndex index_from_json(const std::string& text, const std::filesystem::path& source) {
    try {
        IndexReader reader;
        json::sax_parse(text, &reader);
        return reader.take();
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot read " + source.string() + ": " + e.what());
    }
}

}  // namespace stackup::snapshot::json_format

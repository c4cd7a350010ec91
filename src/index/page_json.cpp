// PEP 691 JSON pages, read with simdjson's On Demand API: one pass over the text, keeping
// only the fields a file needs. No document tree is built, so a 15,000-file page costs about
// its own size while it is read, and its files after.

#include <map>
#include <simdjson.h>

#include "index/page.hpp"
#include "index/page_parts.hpp"

namespace stackup::index {

using namespace detail;  // the pieces page_parts.hpp shares

namespace {

namespace od = simdjson::ondemand;

// A page that is valid JSON but not a valid PEP 691 page; caught where parsing starts.
struct Malformed {
    std::string message;
};

bool is(od::value& v, od::json_type type) {
    od::json_type actual = v.type();
    return actual == type;
}

// A string value's text: read straight from the page when it holds no escape (no copy
// through simdjson's string buffer, whose pages then stay untouched: 4 MB for a 15,000-file
// page), else unescaped. nullopt when the value is not a string.
std::optional<std::string> text_of(od::value& value) {
    if (!is(value, od::json_type::string)) {
        return std::nullopt;
    }
    std::string_view token = value.raw_json_token();  // the quotes, then any spaces
    while (!token.empty() && token.back() != '"') {
        token.remove_suffix(1);
    }
    if (token.size() >= 2 && token.front() == '"') {
        std::string_view inner = token.substr(1, token.size() - 2);
        if (inner.find('\\') == std::string_view::npos) {
            return std::string(inner);
        }
    }
    return std::string(std::string_view(value.get_string()));
}

// "api-version" of a "meta" object, checked; nullopt when absent or fine.
std::optional<std::string> check_meta(od::value meta) {
    if (!is(meta, od::json_type::object)) {
        return std::nullopt;
    }
    for (auto field : meta.get_object()) {
        std::string_view key = field.unescaped_key();
        od::value value = field.value();
        if (key == "api-version" && is(value, od::json_type::string)) {
            return check_api_version(std::string_view(value.get_string()));
        }
    }
    return std::nullopt;
}

// Hash objects are {"sha256": "<hex>", ...}; a non-string value makes the page malformed.
bool read_hashes(od::value value, std::map<std::string, std::string>& hashes) {
    if (!is(value, od::json_type::object)) {
        return false;
    }
    for (auto field : value.get_object()) {
        std::string name = ascii_lower(std::string_view(field.unescaped_key()));
        od::value digest = field.value();
        auto text = text_of(digest);
        if (!text) {
            return false;
        }
        hashes[std::move(name)] = std::move(*text);
    }
    return true;
}

// "core-metadata" (PEP 714) or its old name "dist-info-metadata": true, false, null or hashes.
bool read_metadata(od::value value, std::optional<std::string>& metadata) {
    if (value.is_null()) {
        return true;
    }
    if (is(value, od::json_type::boolean)) {
        metadata = bool(value.get_bool()) ? std::optional<std::string>("true") : std::nullopt;
        return true;
    }
    std::map<std::string, std::string> hashes;
    if (!read_hashes(value, hashes)) {
        return false;
    }
    auto pick = hashes.contains("sha256") ? hashes.find("sha256") : hashes.begin();
    metadata = pick == hashes.end() ? "true" : pick->first + "=" + pick->second;
    return true;
}

bool read_yanked(od::value value, IndexFile& f) {
    if (value.is_null()) {
        return true;
    }
    if (is(value, od::json_type::boolean)) {
        f.yanked = value.get_bool();
        return true;
    }
    if (auto reason = text_of(value)) {  // a string means yanked, with that reason
        f.yanked = true;
        f.yanked_reason = std::move(*reason);
        return true;
    }
    return false;
}

bool read_requires_python(od::value value, IndexFile& f) {
    if (value.is_null()) {
        return true;
    }
    auto text = text_of(value);
    if (!text) {
        return false;
    }
    f.requires_python = empty_to_null(*text);  // PyPI sends "" for "none"
    return true;
}

// One entry of "files", its fields in whatever order they come.
struct Entry {
    std::optional<std::string> filename;
    std::optional<std::string> url;
    IndexFile details;  // hashes, requires-python, yanked, metadata
    std::optional<std::string> core_metadata;
    std::optional<std::string> dist_info_metadata;
    bool has_core_metadata = false;  // the new name wins, even when it says false
    bool wrong_type = false;
};

Entry read_entry(od::value value) {
    if (!is(value, od::json_type::object)) {
        throw Malformed{"a \"files\" entry is not an object"};
    }
    Entry e;
    for (auto field : value.get_object()) {
        std::string_view key = field.unescaped_key();
        od::value v = field.value();
        bool fine = true;
        if (key == "filename") {
            e.filename = text_of(v);
        } else if (key == "url") {
            e.url = text_of(v);
        } else if (key == "hashes") {
            fine = read_hashes(v, e.details.hashes);
        } else if (key == "requires-python") {
            fine = read_requires_python(v, e.details);
        } else if (key == "yanked") {
            fine = read_yanked(v, e.details);
        } else if (key == "core-metadata") {
            e.has_core_metadata = true;
            fine = read_metadata(v, e.core_metadata);
        } else if (key == "dist-info-metadata") {
            fine = read_metadata(v, e.dist_info_metadata);
        }
        e.wrong_type = e.wrong_type || !fine;
    }
    return e;
}

// Appends the entry's file (unless it names no distribution file).
void add_file(Entry e, const base::Resolver& resolve, std::vector<IndexFile>& out) {
    if (!e.filename || !e.url) {
        throw Malformed{"a \"files\" entry lacks a string \"filename\" or \"url\""};
    }
    auto absolute = resolve(*e.url);
    if (!absolute) {
        throw Malformed{"file " + *e.filename + " has an unusable url"};
    }
    auto f = file_at(*absolute, *e.filename);
    if (!f) {
        return;
    }
    if (e.wrong_type) {
        throw Malformed{"file " + f->filename + " has a field of the wrong type"};
    }
    for (auto& [name, digest] : e.details.hashes) {
        f->hashes[name] = std::move(digest);  // "hashes" beats the URL's fragment
    }
    f->requires_python = std::move(e.details.requires_python);
    f->yanked = e.details.yanked;
    f->yanked_reason = std::move(e.details.yanked_reason);
    f->metadata = e.has_core_metadata ? std::move(e.core_metadata) : std::move(e.dist_info_metadata);
    out.push_back(std::move(*f));
}

// Iterates a top-level object: `on_field(key, value)` for each field but "meta", whose
// api-version is checked once the whole object is read.
template <typename OnField>
std::optional<std::string> read_object(std::string_view text, std::size_t allocated, OnField on_field) {
    // simdjson reads past the end in wide loads: the text itself when the caller's buffer
    // has that room (an HTTP body: base/http.cpp reserves it), else a padded copy.
    std::optional<simdjson::padded_string> copy;
    if (allocated < text.size() + simdjson::SIMDJSON_PADDING) {
        copy.emplace(text);
        text = *copy;
        allocated = copy->size() + simdjson::SIMDJSON_PADDING;
    }
    od::parser parser;
    od::document doc = parser.iterate(text.data(), text.size(), allocated);
    if (doc.type() != od::json_type::object) {
        return "not a JSON object";
    }
    std::optional<std::string> bad_meta;
    for (auto field : doc.get_object()) {
        std::string_view key = field.unescaped_key();
        if (key == "meta") {
            bad_meta = check_meta(field.value());
        } else {
            on_field(key, field.value());
        }
    }
    return bad_meta;
}

// Each item of the top-level array `name` ("files", "projects") to `on_item`; the error when
// the page has no such array or a bad api-version, nullopt when it was read.
template <typename OnItem>
std::optional<std::string> read_list(std::string_view text, std::size_t allocated, std::string_view name,
                                     OnItem on_item) {
    const std::string missing = "no \"" + std::string(name) + "\" array";
    bool found = false;
    auto bad = read_object(text, allocated, [&](std::string_view key, od::value value) {
        if (key != name) {
            return;
        }
        if (!is(value, od::json_type::array)) {
            throw Malformed{missing};
        }
        found = true;
        for (od::value item : value.get_array()) {
            on_item(item);
        }
    });
    if (bad) {
        return bad;
    }
    return found ? std::nullopt : std::optional<std::string>(missing);
}

RootListing read_json_root(std::string_view text) {
    RootListing listing;
    auto bad = read_list(text, 0, "projects", [&](od::value project) {
        std::optional<std::string> name;
        if (is(project, od::json_type::object)) {
            for (auto field : project.get_object()) {
                std::string_view key = field.unescaped_key();
                od::value v = field.value();
                if (key == "name") {
                    name = text_of(v);
                }
            }
        }
        if (!name) {
            throw Malformed{"a \"projects\" entry lacks a string \"name\""};
        }
        add_project(*name, "", listing.projects);
    });
    if (bad) {
        return {{}, *bad};
    }
    return listing;
}

// About how many files a page lists (each entry names its "filename" once; a key that some
// string only quotes makes the guess high, never wrong), so their list is sized once: grown by
// doubling, a page of 11,000 files held the list's old copy beside the new one.
std::size_t filename_keys(std::string_view text) {
    constexpr std::string_view key = "\"filename\"";
    std::size_t n = 0;
    for (auto at = text.find(key); at != std::string_view::npos; at = text.find(key, at + key.size())) {
        ++n;
    }
    return n;
}

ParseResult read_json_page(std::string_view text, std::size_t allocated, std::string_view page_url) {
    ParseResult result;
    result.files.reserve(filename_keys(text));
    const base::Resolver resolve(page_url);
    auto bad = read_list(text, allocated, "files",
                         [&](od::value entry) { add_file(read_entry(entry), resolve, result.files); });
    if (bad) {
        return failure(*bad);
    }
    return result;
}

}  // namespace

RootListing detail::parse_json_root(std::string_view text) {
    try {
        return read_json_root(text);
    } catch (const Malformed& e) {
        return {{}, e.message};
    } catch (const simdjson::simdjson_error& e) {  // not JSON, invalid UTF-8, too deep, ...
        return {{}, std::string("malformed JSON page: ") + e.what()};
    }
}

ParseResult parse_json_page(std::string_view text, std::string_view page_url, std::size_t allocated) {
    if (auto bad = check_base(page_url)) {
        return failure(*bad);
    }
    try {
        return read_json_page(text, allocated, page_url);
    } catch (const Malformed& e) {
        return failure(e.message);
    } catch (const simdjson::simdjson_error& e) {
        return failure(std::string("malformed JSON page: ") + e.what());
    }
}

}  // namespace stackup::index

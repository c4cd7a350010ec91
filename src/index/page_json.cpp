// PEP 691 JSON pages, read with nlohmann-json.

#include <map>
#include <nlohmann/json.hpp>

#include "index/page.hpp"
#include "index/page_parts.hpp"

namespace stackup::index {

using namespace detail;  // the pieces page_parts.hpp shares

namespace {

using JsonValue = nlohmann::json;

std::optional<std::string> check_json_meta(const JsonValue& page) {
    auto meta = page.find("meta");
    if (meta == page.end() || !meta->is_object()) {
        return std::nullopt;
    }
    auto version = meta->find("api-version");
    return version != meta->end() && version->is_string() ? check_api_version(version->get<std::string>()) : std::nullopt;
}

// Hash objects are {"sha256": "<hex>", ...}; a non-string value makes the page malformed.
bool read_hashes(const JsonValue& value, std::map<std::string, std::string>& hashes) {
    if (!value.is_object()) {
        return false;
    }
    for (const auto& [name, digest] : value.items()) {
        if (!digest.is_string()) {
            return false;
        }
        hashes[ascii_lower(name)] = digest.get<std::string>();
    }
    return true;
}

// PEP 714 renamed "dist-info-metadata" to "core-metadata"; the new name wins.
bool read_json_metadata(const JsonValue& entry, std::optional<std::string>& metadata) {
    auto it = entry.find("core-metadata");
    if (it == entry.end()) {
        it = entry.find("dist-info-metadata");
    }
    if (it == entry.end() || it->is_null() || (it->is_boolean() && !it->get<bool>())) {
        return true;
    }
    if (it->is_boolean()) {
        metadata = "true";
        return true;
    }
    std::map<std::string, std::string> hashes;
    if (!read_hashes(*it, hashes)) {
        return false;
    }
    auto pick = hashes.contains("sha256") ? hashes.find("sha256") : hashes.begin();
    metadata = pick == hashes.end() ? "true" : pick->first + "=" + pick->second;
    return true;
}

bool read_json_yanked(const JsonValue& entry, IndexFile& f) {
    auto it = entry.find("yanked");
    if (it == entry.end() || it->is_null()) {
        return true;
    }
    if (it->is_boolean()) {
        f.yanked = it->get<bool>();
        return true;
    }
    if (it->is_string()) {  // a string means yanked, with that reason
        f.yanked = true;
        f.yanked_reason = it->get<std::string>();
        return true;
    }
    return false;
}

// The fields beyond name and URL; false when one has the wrong type.
bool read_json_details(const JsonValue& entry, IndexFile& f) {
    if (auto h = entry.find("hashes"); h != entry.end() && !read_hashes(*h, f.hashes)) {
        return false;
    }
    if (auto rp = entry.find("requires-python"); rp != entry.end() && !rp->is_null()) {
        if (!rp->is_string()) {
            return false;
        }
        f.requires_python = empty_to_null(rp->get<std::string>());  // PyPI sends "" for "none"
    }
    return read_json_yanked(entry, f) && read_json_metadata(entry, f.metadata);
}

// Appends one entry of "files" (unless it names no distribution file); an error when it is malformed.
std::optional<std::string> read_json_file(const JsonValue& entry, std::string_view page_url, std::vector<IndexFile>& out) {
    if (!entry.is_object()) {
        return "a \"files\" entry is not an object";
    }
    auto name = entry.find("filename");
    auto url = entry.find("url");
    if (name == entry.end() || !name->is_string() || url == entry.end() || !url->is_string()) {
        return "a \"files\" entry lacks a string \"filename\" or \"url\"";
    }
    auto absolute = base::resolve(page_url, url->get<std::string>());
    if (!absolute) {
        return "file " + name->get<std::string>() + " has an unusable url";
    }
    auto f = file_at(*absolute, name->get<std::string>());
    if (!f) {
        return std::nullopt;
    }
    if (!read_json_details(entry, *f)) {
        return "file " + f->filename + " has a field of the wrong type";
    }
    out.push_back(std::move(*f));
    return std::nullopt;
}

std::optional<JsonValue> parse_json_object(std::string_view text) {
    JsonValue page = JsonValue::parse(text.begin(), text.end(), nullptr, false);
    if (page.is_discarded() || !page.is_object()) {
        return std::nullopt;
    }
    return page;
}

RootListing read_json_root(std::string_view text) {
    auto page = parse_json_object(text);
    if (!page) {
        return {{}, "not a JSON object"};
    }
    auto projects = page->find("projects");
    if (projects == page->end() || !projects->is_array()) {
        return {{}, "no \"projects\" array"};
    }
    if (auto bad = check_json_meta(*page)) {
        return {{}, *bad};
    }
    RootListing listing;
    for (const auto& p : *projects) {
        if (!p.is_object() || !p.contains("name") || !p["name"].is_string()) {
            return {{}, "a \"projects\" entry lacks a string \"name\""};
        }
        add_project(p["name"].get<std::string>(), "", listing.projects);
    }
    return listing;
}

}  // namespace

RootListing detail::parse_json_root(std::string_view text) {
    try {
        return read_json_root(text);
    } catch (const JsonValue::exception& e) {
        return {{}, std::string("malformed JSON page: ") + e.what()};
    }
}

ParseResult parse_json_page(std::string_view text, std::string_view page_url) {
    if (auto bad = check_base(page_url)) {
        return failure(*bad);
    }
    try {
        auto page = parse_json_object(text);
        if (!page) {
            return failure("not a JSON object");
        }
        if (auto bad = check_json_meta(*page)) {
            return failure(*bad);
        }
        auto files = page->find("files");
        if (files == page->end() || !files->is_array()) {
            return failure("no \"files\" array");
        }
        ParseResult result;
        for (const auto& entry : *files) {
            if (auto bad = read_json_file(entry, page_url, result.files)) {
                return failure(*bad);
            }
        }
        return result;
    } catch (const JsonValue::exception& e) {  // invalid UTF-8 in a string, say
        return failure(std::string("malformed JSON page: ") + e.what());
    }
}

}  // namespace stackup::index

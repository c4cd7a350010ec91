#pragma once
// Simple-repository API pages (PEP 503 HTML, PEP 691 JSON) -> the files a project offers.
// Pure: text in, values out. Malformed input gives `error`, never an exception.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stackup::index {

struct IndexFile {
    std::string filename;                        // "torch-2.7.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"
    std::string url;                             // absolute, without the "#sha256=" fragment
    std::map<std::string, std::string> hashes;   // "sha256" -> hex digest
    std::optional<std::string> requires_python;  // ">=3.10", HTML entities decoded
    bool yanked = false;
    std::string yanked_reason;                   // "" when yanked without a reason
    std::optional<std::string> metadata;         // PEP 658/714: "true" or "sha256=<hex>"
    // The sha256 the index gave, "" when none.
    std::string sha256() const {
        auto it = hashes.find("sha256");
        return it == hashes.end() ? "" : it->second;
    }
    friend bool operator==(const IndexFile&, const IndexFile&) = default;
};

struct ParseResult {
    std::vector<IndexFile> files;                // in page order; one name may appear more than once
    std::optional<std::string> error;
};

struct RootListing {
    std::vector<std::string> projects;           // PEP 503-normalized, page order, no duplicates
    std::optional<std::string> error;
};

// A project page; `page_url` is where it was fetched from (hrefs are resolved against it).
ParseResult parse_html_page(std::string_view text, std::string_view page_url);
// `allocated`: how many bytes from text.data() may be read (a std::string's capacity); with
// 64 to spare beyond the text, the JSON parser reads it in place instead of copying it.
ParseResult parse_json_page(std::string_view text, std::string_view page_url, std::size_t allocated = 0);
// Picks the parser by Content-Type (parameters such as "; charset=utf-8" ignored);
// an empty type (file:// pages) is sniffed: '{' first means JSON.
ParseResult parse_page(std::string_view text, std::string_view content_type, std::string_view page_url,
                       std::size_t allocated = 0);

// The root page ("/simple/"): the projects it lists, HTML or JSON by Content-Type as above.
RootListing parse_root_page(std::string_view text, std::string_view content_type);

}  // namespace stackup::index

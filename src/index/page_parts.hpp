#pragma once
// What the HTML (page_html.cpp) and JSON (page_json.cpp) page parsers share; page.cpp holds
// it, and picks the parser by Content-Type. Internal to index/.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/text.hpp"
#include "base/url.hpp"
#include "index/index_file.hpp"

namespace stackup::index::detail {

using base::trim;

// ASCII-only lower case, for hash names and content types.
std::string ascii_lower(std::string_view s);

// A file from its resolved URL (the "#sha256=" fragment read as its hash); nullopt when it
// names no distribution file. `stated_name` (anchor text, JSON "filename") wins when it looks
// like a file name.
std::optional<IndexFile> file_at(const base::Url& absolute, std::string_view stated_name);

// PEP 629 / 691: an error for a major version this client does not know.
std::optional<std::string> check_api_version(std::string_view version);
// An error unless the page URL is an absolute http(s) or file URL (hrefs resolve against it).
std::optional<std::string> check_base(std::string_view page_url);
std::optional<std::string> empty_to_null(std::string_view s);
ParseResult failure(std::string message);

// A root listing's entry: the name, or the href's last segment; skipped unless a valid
// project name, kept once.
void add_project(std::string_view text, std::string_view href, std::vector<std::string>& out);

RootListing parse_html_root(std::string_view text);
RootListing parse_json_root(std::string_view text);

}  // namespace stackup::index::detail

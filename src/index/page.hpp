#pragma once
// Simple-repository API pages (PEP 503 HTML, PEP 691 JSON) -> the files a project offers.
// Pure: text in, values out. Malformed input gives `error`, never an exception.

#include <cstddef>
#include <string_view>

#include "index/index_file.hpp"

namespace stackup::index {

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

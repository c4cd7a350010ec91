// PEP 691 JSON project pages and root listings (simdjson On Demand), both ways the client
// calls the parser: in place in a buffer with padding to spare, and from a tight copy.
#include <string>

#include "fuzz.hpp"
#include "index/page.hpp"

STACKUP_FUZZ_TARGET {
    using namespace stackup::index;
    auto text = stackup::fuzz::text_of(data, size);
    std::string padded(text);
    padded.reserve(padded.size() + 64);
    auto in_place = parse_json_page(padded, "https://fuzz.invalid/simple/torch/", padded.capacity());
    auto copied = parse_json_page(text, "https://fuzz.invalid/simple/torch/");
    stackup::fuzz::check(in_place.files == copied.files && in_place.error.has_value() == copied.error.has_value());
    parse_root_page(text, "application/vnd.pypi.simple.v1+json");
    return 0;
}

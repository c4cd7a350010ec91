// PEP 503 HTML project pages and root listings (gumbo).
#include "fuzz.hpp"
#include "index/page.hpp"

STACKUP_FUZZ_TARGET {
    using namespace stackup::index;
    auto text = stackup::fuzz::text_of(data, size);
    auto page = parse_html_page(text, "https://fuzz.invalid/simple/torch/");
    for (const auto& file : page.files) {
        stackup::fuzz::check(!file.filename.empty());
    }
    parse_root_page(text, "text/html");
    return 0;
}

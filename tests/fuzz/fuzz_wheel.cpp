// Wheel and sdist file names and compressed tag sets.
#include "fuzz.hpp"
#include "pep/tags.hpp"
#include "pep/wheel.hpp"

STACKUP_FUZZ_TARGET {
    using namespace stackup::pep;
    auto text = stackup::fuzz::text_of(data, size);
    for (auto order : {TagSetOrder::Any, TagSetOrder::RequireSorted}) {
        std::string error;
        auto wheel = parse_wheel_filename(text, order, &error);
        stackup::fuzz::check(wheel.has_value() || !error.empty());
        if (wheel) {
            stackup::fuzz::check(!wheel->tags.empty());
        }
        parse_tag(text, order);
    }
    std::string error;
    auto sdist = parse_sdist_filename(text, &error);
    stackup::fuzz::check(sdist.has_value() || !error.empty());
    return 0;
}

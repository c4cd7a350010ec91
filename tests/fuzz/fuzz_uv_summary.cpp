// uv's summary lines ("Installed 3 packages in 12ms", " + torch==2.11.0").
#include "fuzz.hpp"
#include "installer/summary.hpp"

STACKUP_FUZZ_TARGET {
    using namespace stackup::installer;
    auto text = stackup::fuzz::text_of(data, size);
    auto whole = parse_uv_output(text);
    UvSummary merged;
    merged.merge(whole);
    for (const auto& change : whole.changes) {
        stackup::fuzz::check(whole.change_of(change.name) != nullptr || !change.name.empty());
    }
    return 0;
}

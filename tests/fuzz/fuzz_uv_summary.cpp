// uv's summary lines ("Installed 3 packages in 12ms", " + torch==2.11.0").
#include "fuzz.hpp"
#include "installer/summary.hpp"

STACKUP_FUZZ_TARGET {
    using namespace stackup::installer;
    auto text = stackup::fuzz::text_of(data, size);
    auto whole = parse_uv_output(text);
    UvSummary merged;
    merged.merge(whole);
    // Every change is found by its name, and an added one wins over a removed one.
    for (const auto& change : whole.changes) {
        const PackageChange* found = whole.change_of(change.name);
        stackup::fuzz::check(found != nullptr && found->name == change.name);
        if (change.kind != PackageChange::Kind::removed) {
            stackup::fuzz::check(found->kind != PackageChange::Kind::removed);
        }
    }
    return 0;
}

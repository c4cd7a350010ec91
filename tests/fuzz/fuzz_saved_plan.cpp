// A saved plan (`plan --out`): versioned JSON -> SavedPlan, or Error(usage) naming the file.
#include "fuzz.hpp"
#include "plan/plan_file.hpp"

STACKUP_FUZZ_TARGET {
    auto text = stackup::fuzz::text_of(data, size);
    stackup::plan::looks_like_saved_plan(text);
    stackup::fuzz::expecting_errors([&] {
        auto saved = stackup::plan::parse_saved_plan(text, "/fuzz/plan.json");
        auto again = stackup::plan::parse_saved_plan(stackup::plan::to_json(saved), "/fuzz/again.json");
        stackup::fuzz::check(stackup::plan::to_json(again) == stackup::plan::to_json(saved));
    });
    return 0;
}

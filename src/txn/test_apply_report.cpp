// What a run's steps broke and a later step repaired (txn::repaired_between_steps).
#include <doctest/doctest.h>

#include "txn/report.hpp"

namespace stackup::txn {
namespace {

verify::RequirementVerdict verdict(std::string dist, std::string requirement, bool accepted = false) {
    verify::RequirementVerdict v;
    v.broken = {std::move(dist), "1.0", std::move(requirement), "2.0 is installed", "numpy", "2.0"};
    v.accepted = accepted;
    return v;
}

StepReport step(std::string name, StepStatus status, std::vector<verify::RequirementVerdict> broken) {
    StepReport s;
    s.name = std::move(name);
    s.status = status;
    s.broken = std::move(broken);
    return s;
}

}  // namespace

TEST_SUITE("txn") {
    TEST_CASE("repaired_between_steps: first seen, repaired by the first judged step that no longer has it") {
        ApplyReport r;
        r.steps = {step("numpy", StepStatus::ok, {verdict("pandas", "numpy<2"), verdict("kernel", "numpy<2", true)}),
                   step("scipy", StepStatus::ok, {verdict("pandas", "numpy<2"), verdict("scipy", "numpy<1.9")}),
                   step("pandas", StepStatus::ok, {verdict("scipy", "numpy<1.9")}),
                   step("scipy again", StepStatus::ok, {})};
        auto repaired = repaired_between_steps(r);
        REQUIRE(repaired.size() == 2);  // the accepted one is not a repair
        CHECK(repaired[0].broken.dist == "pandas");
        CHECK(repaired[0].broken_by == "numpy");
        CHECK(repaired[0].repaired_by == "pandas");
        CHECK(repaired[1].broken.dist == "scipy");
        CHECK(repaired[1].broken_by == "scipy");
        CHECK(repaired[1].repaired_by == "scipy again");
        CHECK(describe(repaired[0]) ==
              "pandas 1.0 requires numpy<2, but numpy 2.0 is installed (repaired by step 'pandas')");
    }

    TEST_CASE("repaired_between_steps: a step that never ran repairs nothing; one still broken is not repaired") {
        ApplyReport r;
        r.steps = {step("numpy", StepStatus::verification_failed, {verdict("pandas", "numpy<2")}),
                   step("pandas", StepStatus::pending, {})};
        CHECK(repaired_between_steps(r).empty());
        r.steps = {step("numpy", StepStatus::ok, {verdict("pandas", "numpy<2")}),
                   step("pandas", StepStatus::verification_failed, {verdict("pandas", "numpy<2")})};
        CHECK(repaired_between_steps(r).empty());
    }
}

}  // namespace stackup::txn

// What a run's steps broke and a later step repaired (txn::repaired_between_steps), and what
// became of the venv (txn::venv_fate).
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

    TEST_CASE("venv_fate: one answer per way a run can end, whatever else the report holds") {
        auto report = [](Mode mode, Outcome outcome) {
            ApplyReport r;
            r.mode = mode;
            r.outcome = outcome;
            return r;
        };
        auto r = report(Mode::blue_green, Outcome::applied);
        r.switched = true;
        CHECK(venv_fate(r) == VenvFate::switched);
        r.outcome = Outcome::not_finished;  // failed after its switch: the venv still is the new generation
        CHECK(venv_fate(r) == VenvFate::switched);

        r = report(Mode::blue_green, Outcome::applied);
        r.staged = true;
        r.blocked = true;
        CHECK(venv_fate(r) == VenvFate::staged);
        CHECK(venv_fate(report(Mode::blue_green, Outcome::verification_failed)) == VenvFate::unchanged);
        CHECK(venv_fate(report(Mode::blue_green, Outcome::interrupted)) == VenvFate::unchanged);

        r = report(Mode::blue_green, Outcome::not_finished);
        r.live_drift = {"modified: lib/x.py"};
        CHECK(venv_fate(r) == VenvFate::drifted);

        CHECK(venv_fate(report(Mode::in_place, Outcome::applied)) == VenvFate::changed_in_place);
        r = report(Mode::in_place, Outcome::installer_failed);
        CHECK(venv_fate(r) == VenvFate::unchanged);  // stopped before its snapshot: nothing to restore
        r.rolled_back = true;
        CHECK(venv_fate(r) == VenvFate::restored);
        r = report(Mode::in_place, Outcome::rollback_failed);
        r.rollback_error = "EIO";
        CHECK(venv_fate(r) == VenvFate::restore_failed);

        r = report(Mode::in_place, Outcome::applied);
        r.dry_run = true;
        CHECK(venv_fate(r) == VenvFate::unchanged);
    }

    TEST_CASE("venv_fate: changed() is true exactly where the venv is not as it was before the run") {
        CHECK(changed(VenvFate::switched));
        CHECK(changed(VenvFate::changed_in_place));
        CHECK(changed(VenvFate::drifted));
        CHECK(changed(VenvFate::restore_failed));
        CHECK_FALSE(changed(VenvFate::unchanged));
        CHECK_FALSE(changed(VenvFate::staged));
        CHECK_FALSE(changed(VenvFate::restored));
        CHECK(to_string(VenvFate::changed_in_place) == "changed in place");
        CHECK(to_string(VenvFate::restore_failed) == "restore failed");
    }
}

}  // namespace stackup::txn

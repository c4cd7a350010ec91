// What the plan predicts between steps (plan::predicted_breaks): the venv's own requirements
// against each step's pins.
#include <doctest/doctest.h>

#include "plan/planner.hpp"
#include "test_plan_helpers.hpp"

using namespace stackup;

namespace {

venv::Facts pandas_venv() {
    venv::Facts f = testing::cpython311_facts();
    f.distributions = {{"numpy", "numpy", "1.26.4", {}},
                       {"pandas", "pandas", "2.1.4", {"numpy<2,>=1.23.2; python_version == \"3.11\""}},
                       {"scipy", "scipy", "1.13.1", {"numpy<2.3,>=1.22.4"}},
                       {"six", "six", "1.16.0", {}}};
    return f;
}

manifest::Step step(std::string name, std::string requirement, bool deps = false) {
    manifest::Step s;
    s.name = std::move(name);
    s.index = "pypi";
    s.packages = {*pep::parse_requirement(requirement)};
    s.deps = deps;
    return s;
}

manifest::Manifest manifest_of(std::vector<manifest::Step> steps) {
    manifest::Manifest m;
    m.indexes = {{"pypi", "http://127.0.0.1:9/pypi/"}};
    m.steps = std::move(steps);
    return m;
}

std::vector<index::ProjectPage> pages() {
    auto page = [](const std::string& project, const std::string& file) {
        return testing::one_file_page("pypi", project, file);
    };
    return {page("numpy", "numpy-2.2.6-cp311-cp311-manylinux_2_17_x86_64.whl"),
            page("pandas", "pandas-2.2.3-cp311-cp311-manylinux_2_17_x86_64.whl"),
            page("six", "six-1.17.0-py2.py3-none-any.whl")};
}

}  // namespace

TEST_SUITE("plan") {
    TEST_CASE("between steps: a break the next step's pin replaces is expected to be repaired there") {
        auto m = manifest_of({step("numpy", "numpy==2.2.6"), step("pandas", "pandas==2.2.3")});
        auto plan = plan::make_plan(m, pandas_venv(), pages());
        REQUIRE(plan.ok());
        REQUIRE(plan.between.size() == 1);
        const auto& b = plan.between[0];
        CHECK(b.step == 0);
        CHECK(b.broken.dist == "pandas");
        CHECK(b.broken.required == "numpy");
        CHECK(b.broken.installed == "2.2.6");
        CHECK(b.gone == std::optional<std::size_t>{1});
        CHECK(b.repair == verify::Repair{verify::Repair::By::step, "pandas", "installs pandas"});
        CHECK(b.text ==
              "after step 'numpy': pandas 2.1.4 requires numpy<2,>=1.23.2 (python_version == \"3.11\"), but numpy "
              "2.2.6 is installed; step 'pandas' installs pandas: expected to repair it (checked after that step)");
    }

    TEST_CASE("between steps: left broken when nothing later changes it; accepted when allow_unmet names it") {
        auto m = manifest_of({step("numpy", "numpy==2.2.6"), step("six", "six==1.17.0")});
        auto plan = plan::make_plan(m, pandas_venv(), pages());
        REQUIRE(plan.between.size() == 1);
        CHECK_FALSE(plan.between[0].gone);
        CHECK(plan.between[0].repair.by == verify::Repair::By::nothing);
        CHECK(plan.between[0].text.find("nothing after it changes pandas or numpy: apply will fail there") !=
              std::string::npos);

        m.steps[1].deps = true;
        plan = plan::make_plan(m, pandas_venv(), pages());
        CHECK(plan.between[0].repair.by == verify::Repair::By::dependencies);
        CHECK(plan.between[0].text.find("a dependency uv adds in a later step may repair it") != std::string::npos);

        m.allow_unmet = {"pandas"};
        plan = plan::make_plan(m, pandas_venv(), pages());
        CHECK(plan.between[0].accepted);
        CHECK(plan.between[0].text.find("accepted: allow_unmet lists pandas") != std::string::npos);
    }

    TEST_CASE("between steps: pins that break nothing predict nothing") {
        auto m = manifest_of({step("six", "six==1.17.0"), step("pandas", "pandas==2.2.3")});
        CHECK(plan::make_plan(m, pandas_venv(), pages()).between.empty());
    }
}

// pip check, pure: Requires-Dist lines of a CUDA 13 stack against what is installed.

#include <doctest/doctest.h>

#include "marker_env.hpp"
#include "pep/requirement.hpp"
#include "verify/requires.hpp"

using stackup::testing::linux_cpython312;
using stackup::venv::Distribution;
using stackup::verify::broken_requirements;
using stackup::verify::BrokenRequirement;
using stackup::verify::describe;
using stackup::verify::new_breakage;

namespace {

using Markers = std::map<std::string, std::string>;

// What the venv holds besides the dist under test.
std::vector<Distribution> cu130_stack() {
    return {
        {"torch", "torch", "2.11.0+cu130", {}},
        {"numpy", "numpy", "2.3.1", {}},
        {"triton", "triton", "3.6.0rc1", {}},
        {"sgl-kernel", "sgl-kernel", "0.3.16+cu130", {}},
        {"cuda-python", "cuda-python", "13.0.1", {}},
    };
}

// The problems of `sglang 0.5.6` declaring only `line`, in a cu130_stack() venv.
std::vector<std::string> problems_of(const std::string& line, const Markers& markers = linux_cpython312()) {
    auto dists = cu130_stack();
    dists.push_back({"sglang", "sglang", "0.5.6", {line}});
    std::vector<std::string> problems;
    for (const auto& b : broken_requirements(dists, markers)) {
        CHECK(b.dist == "sglang");
        CHECK(b.version == "0.5.6");
        CHECK(b.requirement == line);
        problems.push_back(b.problem);
    }
    return problems;
}

struct Case {
    std::string line;
    std::string problem;  // "" when the requirement holds or does not apply
};

const std::vector<Case> kCases = {
    // A specifier without a local label admits any local label; one with a label wants it.
    {"torch==2.11.0", ""},
    {"torch==2.11.0+cu130", ""},
    {"torch==2.11.0+cu129", "2.11.0+cu130 is installed"},
    {"torch>=2.12", "2.11.0+cu130 is installed"},
    {"numpy<2", "2.3.1 is installed"},
    {"numpy>=1.26,<3", ""},
    {"numpy (>=1.26,<3)", ""},
    // An installed pre-release is admitted; <3.6 still excludes 3.6's own pre-releases.
    {"triton>=3.5", ""},
    {"triton<3.6", "3.6.0rc1 is installed"},
    // Names compare PEP 503-normalized; the extras a requirement asks for are not followed.
    {"Cuda_Python>=13", ""},
    {"numpy[dev]>=2", ""},
    {"flashinfer-python==0.5.3", "not installed"},
    // "name @ url" asks for presence only.
    {"sgl-kernel @ https://example.org/whl/sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl", ""},
    {"sgl-router @ https://example.org/whl/sgl_router-0.2.0-py3-none-any.whl", "not installed"},
    // A false marker skips the requirement; so does one only for an extra.
    {"pywin32; sys_platform == 'win32'", ""},
    {"nvidia-nccl-cu13; sys_platform == 'linux'", "not installed"},
    {"numpy<2; python_version < '3.10'", ""},
    {"numpy<2; python_version >= '3.10'", "2.3.1 is installed"},
    {"pytest; extra == \"test\"", ""},
    {"pytest; extra == 'test' or os_name == 'posix'", "not installed"},
    // What cannot be read is reported, not thrown.
    {"torch>>2",
     "unreadable requirement: invalid requirement 'torch>>2': invalid specifier '>>2': '>2' is not a valid PEP 440 "
     "version at column 6"},
    {"xformers; os_name ~= '1.0'",
     "unreadable requirement: cannot evaluate marker 'os_name ~= '1.0'': '~=' is undefined on 'posix' and '1.0' "
     "(only python_version, python_full_version, implementation_version and platform_release compare as versions) "
     "at column 1"},
};

BrokenRequirement broken(std::string dist, std::string requirement, std::string problem) {
    return {std::move(dist), "1.0", std::move(requirement), std::move(problem), "", ""};
}

// A step named `name` installing `packages` (with dependencies unless `deps` is false) and
// removing `remove`.
stackup::manifest::Step step(std::string name, std::vector<std::string> packages, bool deps = true,
                             std::vector<std::string> remove = {}) {
    stackup::manifest::Step s;
    s.name = std::move(name);
    for (const auto& p : packages) {
        s.packages.push_back(*stackup::pep::parse_requirement(p));
    }
    s.deps = deps;
    s.remove = std::move(remove);
    return s;
}

// pandas 2.1.4 pins numpy<2; the numpy step breaks it, the pandas step repairs it.
BrokenRequirement pandas_on_numpy2() {
    return {"pandas", "2.1.4", "numpy<2,>=1.23.2; python_version == \"3.11\"", "2.2.6 is installed", "numpy", "2.2.6"};
}

}  // namespace

TEST_SUITE("verify") {
    TEST_CASE("requires: each Requires-Dist line against a cu130 stack") {
        for (const auto& c : kCases) {
            INFO(c.line);
            auto problems = problems_of(c.line);
            if (c.problem.empty()) {
                CHECK(problems.empty());
            } else {
                CHECK(problems == std::vector<std::string>{c.problem});
            }
        }
    }

    TEST_CASE("requires: extra is \"\" whatever the markers say, so extra-only requirements stay skipped") {
        Markers markers = linux_cpython312();
        markers["extra"] = "test";
        CHECK(problems_of("pytest; extra == 'test'", markers).empty());
        CHECK(problems_of("pytest", markers) == std::vector<std::string>{"not installed"});
    }

    TEST_CASE("requires: sorted by dist then requirement; an unreadable line does not hide the rest") {
        std::vector<Distribution> dists = {
            {"Torch_Vision", "torchvision", "0.26.0+cu130", {"torch==2.10.0", "numpy", "pillow>=5.3.0,!=8.3.*"}},
            {"cuda-bindings", "cuda-bindings", "12.9.10", {"cuda-pathfinder~=1.1", "cuda-pathfinder~=1.1"}},
            {"torch", "torch", "2.11.0+cu130", {"filelock", "sympy>=1.13.3", "triton==3.6.0; platform_system == 'Linux'"}},
            {"odd", "odd", "0.1", {"[broken", "numpy>=2"}},
            {"numpy", "numpy", "2.3.1", {}},
            {"filelock", "filelock", "3.20.0", {}},
        };
        std::vector<BrokenRequirement> expected = {
            {"cuda-bindings", "12.9.10", "cuda-pathfinder~=1.1", "not installed", "cuda-pathfinder", ""},
            {"odd", "0.1", "[broken",
             "unreadable requirement: invalid requirement '[broken': expected a project name at column 1", "", ""},
            {"torch", "2.11.0+cu130", "sympy>=1.13.3", "not installed", "sympy", ""},
            {"torch", "2.11.0+cu130", "triton==3.6.0; platform_system == 'Linux'", "not installed", "triton", ""},
            {"torchvision", "0.26.0+cu130", "pillow>=5.3.0,!=8.3.*", "not installed", "pillow", ""},
            {"torchvision", "0.26.0+cu130", "torch==2.10.0", "2.11.0+cu130 is installed", "torch", "2.11.0+cu130"},
        };
        CHECK(broken_requirements(dists, linux_cpython312()) == expected);
    }

    TEST_CASE("requires: a consistent venv has nothing broken") {
        std::vector<Distribution> dists = {
            {"torch", "torch", "2.11.0.dev20251230+cu130", {"numpy; extra == 'opt'", "triton>=3.5"}},
            {"triton", "triton", "3.6.0", {"setuptools>=40.8.0; python_version < '3.0'"}},
        };
        CHECK(broken_requirements(dists, linux_cpython312()).empty());
    }

    TEST_CASE("requires: new_breakage is what after breaks that before did not") {
        std::vector<BrokenRequirement> before = {
            broken("cuda-bindings", "cuda-pathfinder~=1.1", "not installed"),
            broken("torchvision", "torch==2.10.0", "2.11.0+cu130 is installed"),
        };
        std::vector<BrokenRequirement> after = {
            broken("cuda-bindings", "cuda-pathfinder~=1.1", "1.0.0 is installed"),  // still broken: not new
            broken("sglang", "sgl-kernel==0.3.16", "0.3.21+cu130 is installed"),
            broken("torchvision", "torch==2.11.0", "2.10.0 is installed"),
        };
        CHECK(new_breakage(before, after) == std::vector<BrokenRequirement>{after[1], after[2]});
        CHECK(new_breakage(after, before) == std::vector<BrokenRequirement>{before[1]});
        CHECK(new_breakage(before, before).empty());
        CHECK(new_breakage({}, after) == after);
    }

    TEST_CASE("requires: describe says what requires what, and what is installed instead") {
        CHECK(describe(BrokenRequirement{"cuda-bindings", "12.9.10", "cuda-pathfinder~=1.1", "not installed",
                                         "cuda-pathfinder", ""}) ==
              "cuda-bindings 12.9.10 requires cuda-pathfinder~=1.1, but cuda-pathfinder is not installed");
        CHECK(describe(pandas_on_numpy2()) ==
              "pandas 2.1.4 requires numpy<2,>=1.23.2 (python_version == \"3.11\"), but numpy 2.2.6 is installed");
        CHECK(describe(BrokenRequirement{"sglang", "0.5.6", "torch==2.9.1 ; sys_platform == 'linux' ",
                                         "2.11.0 is installed", "torch", "2.11.0"}) ==
              "sglang 0.5.6 requires torch==2.9.1 (sys_platform == 'linux'), but torch 2.11.0 is installed");
        CHECK(describe(BrokenRequirement{"odd", "0.1", "[broken", "unreadable requirement: at column 1", "", ""}) ==
              "odd 0.1 has an unreadable requirement: at column 1");
    }

    TEST_CASE("requires: the first later step that names either dist repairs; else dependencies may; else nothing") {
        using stackup::verify::Repair;
        using stackup::verify::repair_of;
        stackup::manifest::Manifest m;
        m.steps = {step("numpy", {"numpy==2.2.6"}), step("scipy", {"scipy==1.15.3"}, false),
                   step("pandas", {"pandas==2.2.3"}), step("numpy again", {"numpy==2.2.6"})};
        auto b = pandas_on_numpy2();
        CHECK(repair_of(m, 0, b) == Repair{Repair::By::step, "pandas", "installs pandas"});
        CHECK(repair_of(m, 2, b) == Repair{Repair::By::step, "numpy again", "installs numpy"});
        CHECK(repair_of(m, 3, b) == Repair{});  // after the last step: nothing can

        m.steps = {step("numpy", {"numpy==2.2.6"}), step("old pandas out", {}, true, {"pandas"})};
        CHECK(repair_of(m, 0, b) == Repair{Repair::By::step, "old pandas out", "removes pandas"});
        m.steps = {step("numpy", {"numpy==2.2.6"}), step("kernels out", {}, true, {"pandas-*"})};
        CHECK(repair_of(m, 0, b).by == Repair::By::nothing);  // removes nothing pandas, installs nothing

        m.steps = {step("numpy", {"numpy==2.2.6"}), step("scipy", {"scipy==1.15.3"})};
        CHECK(repair_of(m, 0, b) == Repair{Repair::By::dependencies, "", ""});
        m.steps[1].deps = false;
        CHECK(repair_of(m, 0, b) == Repair{});

        auto unreadable = BrokenRequirement{"odd", "0.1", "[broken", "unreadable requirement", "", ""};
        m.steps = {step("numpy", {"numpy==2.2.6"}), step("odd", {"odd==0.2"}, false)};
        CHECK(repair_of(m, 0, unreadable) == Repair{Repair::By::step, "odd", "installs odd"});
    }

    TEST_CASE("requires: judge_breakage fails a step only when nothing later can repair, and the last step strictly") {
        using stackup::verify::judge_breakage;
        stackup::manifest::Manifest m;
        m.steps = {step("numpy", {"numpy==2.2.6"}, false), step("pandas", {"pandas==2.2.3"}, false)};
        auto b = pandas_on_numpy2();
        auto baseline = std::vector<BrokenRequirement>{broken("lonely", "absent>=1", "not installed")};
        auto after = std::vector<BrokenRequirement>{baseline[0], b};

        auto first = judge_breakage(m, 0, baseline, after);
        REQUIRE(first.size() == 1);  // lonely was broken before: not judged
        CHECK_FALSE(first[0].fails());
        CHECK_FALSE(first[0].final);
        CHECK(describe(first[0]) == describe(b) + " (to be repaired by step 'pandas', which installs pandas)");

        auto last = judge_breakage(m, 1, baseline, after);
        REQUIRE(last.size() == 1);
        CHECK(last[0].fails());
        CHECK(last[0].final);
        CHECK(describe(last[0]) == describe(b) + " (to accept it, add pandas to allow_unmet)");

        m.allow_unmet = {"pandas"};
        last = judge_breakage(m, 1, baseline, after);
        CHECK_FALSE(last[0].fails());
        CHECK(describe(last[0]) == describe(b) + " (accepted: allow_unmet lists pandas)");

        m.allow_unmet.clear();
        m.steps[1] = step("scipy", {"scipy==1.15.3"}, false);
        first = judge_breakage(m, 0, baseline, after);
        CHECK(first[0].fails());  // certain now: nothing after it changes pandas or numpy
        CHECK(describe(first[0]) == describe(b) +
                                        " (no later step can repair it: none installs pandas or numpy, removes pandas "
                                        "or installs dependencies; to accept it, add pandas to allow_unmet)");
        m.steps[1].deps = true;
        first = judge_breakage(m, 0, baseline, after);
        CHECK_FALSE(first[0].fails());
        CHECK(describe(first[0]).find("a later step installs dependencies, which may repair it") != std::string::npos);
        CHECK(judge_breakage(m, 0, after, after).empty());
    }
}

TEST_CASE("affected_by: what changed and every dist that requires it, through others, markers ignored") {
    const std::vector<Distribution> dists{
        {"torch", "torch", "2.11.0", {"nvidia-cublas; platform_system == \"Linux\"", "filelock"}},
        {"torchvision", "torchvision", "0.26.0", {"torch==2.11.0"}},
        {"sglang", "sglang", "0.5.6", {"torchvision", "requests[socks]>=2"}},
        {"requests", "requests", "2.32.3", {}},
        {"nvidia-cublas", "nvidia-cublas", "13.0.0", {}},
        {"Filelock", "filelock", "3.20.0", {}},
    };
    using stackup::verify::affected_by;
    CHECK(affected_by(dists, {"nvidia-cublas"}) ==
          std::set<std::string>{"nvidia-cublas", "torch", "torchvision", "sglang"});
    CHECK(affected_by(dists, {"requests"}) == std::set<std::string>{"requests", "sglang"});
    CHECK(affected_by(dists, {"sglang"}) == std::set<std::string>{"sglang"});
    CHECK(affected_by(dists, {}).empty());
}

#include <doctest/doctest.h>

#include "plan/planner.hpp"
#include "test_plan_helpers.hpp"

using namespace stackup;

namespace {

// A cu128 venv with NVIDIA's CUDA 12 wheels, and a manifest moving torch to cu130.
venv::Facts cu128_venv() {
    venv::Facts f = testing::cpython311_facts();
    f.distributions = {{"nvidia-cublas-cu12", "nvidia-cublas-cu12", "12.8.4.1", {}},
                       {"nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu12", "12.8.90", {}},
                       {"numpy", "numpy", "2.3.4", {}},
                       {"torch", "torch", "2.10.0+cu128", {}}};
    return f;
}

manifest::Manifest cu130_manifest(std::vector<std::string> remove) {
    manifest::Manifest m;
    m.indexes = {{"pytorch", "http://127.0.0.1:9/cu130/"}};
    m.cuda = manifest::Cuda{"13.0", "/usr/local/cuda-13.0", std::nullopt, false, {}};
    manifest::Step torch;
    torch.name = "torch";
    torch.index = "pytorch";
    torch.packages = {*pep::parse_requirement("torch"), *pep::parse_requirement("nvidia-cuda-runtime")};
    torch.remove = std::move(remove);
    m.steps = {torch};
    return m;
}

std::vector<index::ProjectPage> cu130_pages() {
    auto page = [](const std::string& project, const std::string& file) {
        return testing::one_file_page("pytorch", project, file);
    };
    return {page("torch", "torch-2.11.0+cu130-cp311-cp311-manylinux_2_28_x86_64.whl"),
            page("nvidia-cuda-runtime", "nvidia_cuda_runtime-13.0.96-py3-none-manylinux_2_27_x86_64.whl")};
}

}  // namespace

TEST_SUITE("plan") {
    TEST_CASE("remove: resolves names and patterns against the venv as it is") {
        auto m = cu130_manifest({"nvidia-*-cu12", "cupy-cuda12x"});
        auto removals = plan::resolve_removals(m.steps[0], cu128_venv().distributions);
        REQUIRE(removals.size() == 3);
        CHECK(removals[0] == plan::PlannedRemoval{"nvidia-*-cu12", "nvidia-cublas-cu12", "12.8.4.1"});
        CHECK(removals[1] == plan::PlannedRemoval{"nvidia-*-cu12", "nvidia-cuda-runtime-cu12", "12.8.90"});
        CHECK(removals[2] == plan::PlannedRemoval{"cupy-cuda12x", "", ""});  // matches nothing

        auto p = plan::make_plan(m, cu128_venv(), cu130_pages());
        CHECK(p.ok());
        REQUIRE(p.notes.size() == 1);
        CHECK(p.notes[0] == "step 'torch': remove: cupy-cuda12x matches nothing installed");
    }

    TEST_CASE("the end state: leftovers of another CUDA refuse the plan with the exact fix") {
        auto p = plan::make_plan(cu130_manifest({}), cu128_venv(), cu130_pages());
        REQUIRE_FALSE(p.ok());
        CHECK(p.problems.back() == p.end_state);
        CHECK(p.end_state.find("nvidia-cublas-cu12 12.8.4.1 (CUDA 12: name marker -cuNN)") != std::string::npos);
        CHECK(p.end_state.find("step 'torch':  remove: [nvidia-cublas-cu12, nvidia-cuda-runtime-cu12]") !=
              std::string::npos);
        CHECK(p.end_state.find("allow_mixed: [nvidia-cublas-cu12, nvidia-cuda-runtime-cu12]") != std::string::npos);
        CHECK(p.end_state.find("torch") == p.end_state.find("torch':"));  // torch itself is upgraded: not a leftover

        auto end = plan::predicted_end_state(cu128_venv(), plan::make_plan(cu130_manifest({"nvidia-*-cu12"}),
                                                                           cu128_venv(), cu130_pages()));
        std::vector<std::string> names;
        for (const auto& d : end) {
            names.push_back(d.normalized + " " + d.version);
        }
        CHECK(names == std::vector<std::string>{"numpy 2.3.4", "nvidia-cuda-runtime 13.0.96", "torch 2.11.0+cu130"});
        CHECK(plan::make_plan(cu130_manifest({"nvidia-*-cu12"}), cu128_venv(), cu130_pages()).ok());

        auto allowed = cu130_manifest({});
        allowed.allow_mixed = {"nvidia-cublas-cu12", "nvidia-cuda-runtime-cu12"};
        CHECK(plan::make_plan(allowed, cu128_venv(), cu130_pages()).ok());
        auto no_target = cu130_manifest({});
        no_target.cuda.reset();
        auto untargeted = plan::make_plan(no_target, cu128_venv(), cu130_pages());
        CHECK(untargeted.ok());  // nothing to judge against: said, not refused
        REQUIRE(untargeted.warnings.size() == 1);
        CHECK(untargeted.warnings[0].find("no target CUDA is given") != std::string::npos);
        CHECK(untargeted.warnings[0].find("CUDA 12: nvidia-cublas-cu12 12.8.4.1") != std::string::npos);
        no_target.steps[0].remove = {"nvidia-*-cu12"};
        CHECK(plan::make_plan(no_target, cu128_venv(), cu130_pages()).warnings.empty());
    }

    TEST_CASE("a requirement whose marker is false here is planned as skipped") {
        auto m = cu130_manifest({"nvidia-*-cu12"});
        m.steps[0].packages.push_back(*pep::parse_requirement("numpy; python_version < '3'"));
        m.steps[0].packages.push_back(*pep::parse_requirement("numpy-extra; sys_platform == 'win32'"));
        auto p = plan::make_plan(m, cu128_venv(), cu130_pages());
        CHECK(p.ok());
        REQUIRE(p.steps[0].packages.size() == 4);
        CHECK(p.steps[0].packages[2].skipped == "marker is false for this venv: python_version < '3'");
        CHECK(p.steps[0].packages[2].change() == "skip");
        CHECK_FALSE(p.steps[0].packages[2].choice);
        CHECK(p.steps[0].packages[3].change() == "skip");

        auto old_probe = cu128_venv();
        old_probe.markers.erase("sys_platform");  // an environment that cannot judge the marker
        auto bad = plan::make_plan(m, old_probe, cu130_pages());
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.problems[0].find("cannot be judged for this venv") != std::string::npos);
    }
}

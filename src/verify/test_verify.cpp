#include <doctest/doctest.h>

#include <algorithm>

#include "verify/verify.hpp"

using namespace stackup;
using verify::Mismatch;

namespace {

manifest::Step step_named(const std::string& name) {
    manifest::Step s;
    s.name = name;
    return s;
}

manifest::Expectation expect(const std::string& dist) {
    manifest::Expectation e;
    e.dist = dist;
    return e;
}

manifest::Manifest stack() {
    manifest::Manifest m;
    manifest::Step torch = step_named("torch");
    auto t = expect("torch");
    t.version = pep::SpecifierSet::parse(">=2.11.0.dev0");
    t.local = "cu130";
    t.cuda = "13.0";
    torch.expect = {t, expect("torchvision")};
    torch.expect[1].local = "cu130";
    manifest::Step sgl = step_named("sgl-kernel");
    auto s = expect("sgl-kernel");
    s.attrs = {{"ops.backend", "cuda"}};
    auto t2 = expect("torch");
    t2.version = pep::SpecifierSet::parse("<3");
    sgl.expect = {s, t2};
    m.steps = {torch, sgl};
    return m;
}

venv::Facts cu130_facts() {
    venv::Facts f;
    f.distributions = {{"torch", "torch", "2.11.0.dev20251230+cu130"},
                       {"torchvision", "torchvision", "0.26.0.dev20251230+cu130"},
                       {"sgl-kernel", "sgl-kernel", "0.3.16+cu130"},
                       {"numpy", "numpy", "2.3.0"}};
    f.imports = {{"torch", "torch", std::nullopt, "2.11.0.dev20251230+cu130", "13.0", {}, {}},
                 {"torchvision", "torchvision", std::nullopt, std::nullopt, std::nullopt, {}, {}},
                 {"sgl-kernel", "sgl_kernel", std::nullopt, "0.3.16", std::nullopt, {{"ops.backend", "cuda"}}, {}}};
    return f;
}

}  // namespace

TEST_SUITE("verify") {
    TEST_CASE("expectations are cumulative; a later step's replaces an earlier one for the same dist") {
        auto m = stack();
        auto first = verify::expectations_through(m, 0);
        REQUIRE(first.size() == 2);
        CHECK(first[0].step == "torch");
        auto all = verify::expectations_through(m, 1);
        REQUIRE(all.size() == 3);
        CHECK(all[0].expectation.dist == "torchvision");
        CHECK(all[2].expectation.dist == "torch");
        CHECK(all[2].step == "sgl-kernel");
        CHECK_FALSE(all[2].expectation.local);  // replaced, not merged
    }

    TEST_CASE("a venv that meets everything has no mismatches") {
        auto m = stack();
        CHECK(verify::check_all(m, 1, cu130_facts()).empty());
    }

    TEST_CASE("judgements list the checks that passed too, each with what was found") {
        auto m = stack();
        auto all = verify::judge_all(m, 0, cu130_facts());
        auto find = [&](const std::string& dist, const std::string& field) {
            auto it = std::find_if(all.begin(), all.end(),
                                   [&](const verify::Judgement& j) { return j.dist == dist && j.field == field; });
            REQUIRE(it != all.end());
            return *it;
        };
        CHECK(find("torch", "cuda") == verify::Judgement{"torch", "torch", "cuda", "13.0", "13.0", true});
        CHECK(find("torch", "version").found == "2.11.0.dev20251230+cu130");
        CHECK(find("torch", "local").ok);
        CHECK(find("torchvision", "import").ok);
        CHECK(verify::failures(all).empty());

        auto f = cu130_facts();
        f.imports[0].cuda = "12.8";
        auto judged = verify::judge_all(m, 0, f);
        CHECK(verify::failures(judged) == verify::check_all(m, 0, f));
        CHECK(verify::failures(judged).size() == 1);
        CHECK(judged.size() == all.size());  // the same checks, one of them failed
    }

    TEST_CASE("each field reports expected and found") {
        auto m = stack();
        auto f = cu130_facts();
        f.distributions[0].version = "2.10.0+cu128";
        f.imports[0].cuda = "12.8";
        f.imports[0].version = "2.10.0+cu128";
        auto got = verify::check_expectations(verify::expectations_through(m, 0), f);
        REQUIRE(got.size() == 3);
        CHECK(got[0] == Mismatch{"torch", "torch", "version", ">=2.11.0.dev0", "2.10.0+cu128"});
        CHECK(got[1] == Mismatch{"torch", "torch", "local", "cu130", "cu128 (2.10.0+cu128)"});
        CHECK(got[2] == Mismatch{"torch", "torch", "cuda", "13.0", "12.8"});
        CHECK(verify::describe(got[2]) == "step 'torch': torch: cuda: expected 13.0, found 12.8");
    }

    TEST_CASE("a missing dist, a failed import, a wrong attr, a stale module") {
        auto m = stack();
        auto f = cu130_facts();
        f.distributions.erase(f.distributions.begin() + 1);  // torchvision gone
        f.imports[2].attrs["ops.backend"] = "cpu";
        f.imports[0].version = "2.10.0";                     // module older than its metadata
        auto got = verify::check_all(m, 1, f);
        REQUIRE(got.size() == 3);
        CHECK(got[0].dist == "torchvision");
        CHECK(got[0].field == "installed");
        CHECK(got[1] == Mismatch{"sgl-kernel", "sgl-kernel", "attrs.ops.backend", "cuda", "cpu"});
        CHECK(got[2].field == "__version__");

        f = cu130_facts();
        f.imports[0].error = "ImportError: libcudart.so.13: cannot open shared object file";
        auto failed = verify::check_expectations(verify::expectations_through(m, 0), f);
        REQUIRE(failed.size() == 1);
        CHECK(failed[0].field == "import");
        CHECK(failed[0].found.find("libcudart") != std::string::npos);
    }

    TEST_CASE("the target CUDA comes from the toolkit, else from the expectations") {
        auto m = stack();
        CHECK(verify::target_cuda_label(m) == "cu130");
        m.cuda = manifest::Cuda{"12.8", "/usr/local/cuda-12.8", std::nullopt, false};
        CHECK(verify::target_cuda_label(m) == "cu128");
        m.cuda.reset();
        m.steps[0].expect[1].local = "cu128";  // two CUDAs named: no single target
        CHECK_FALSE(verify::target_cuda_label(m));
    }

    TEST_CASE("the mixed-CUDA scan names every dist built for another CUDA") {
        std::vector<venv::Distribution> dists{{"torch", "torch", "2.11.0+cu130"},
                                              {"torchvision", "torchvision", "0.26.0+cu128"},
                                              {"nvidia-cublas-cu12", "nvidia-cublas-cu12", "12.8.4.1"},
                                              {"nvidia-cublas", "nvidia-cublas", "13.1.0.3"},
                                              {"flashinfer-python", "flashinfer-python", "0.5.3+cu129"},
                                              {"numpy", "numpy", "2.3.0+local"}};
        auto got = verify::scan_mixed_cuda(dists, "cu130", {"flashinfer-python"});
        REQUIRE(got.size() == 2);
        CHECK(got[0].dist == "torchvision");
        CHECK(got[0].field == "mixed-cuda");
        CHECK(got[0].found == "0.26.0+cu128");
        CHECK(got[1].dist == "nvidia-cublas-cu12");
        CHECK(verify::scan_mixed_cuda(dists, "cu128", {}).size() == 2);  // torch, flashinfer; cu12 wheels fit
    }

    TEST_CASE("mid-run, the scan spares what a later step installs; after the last step it spares nothing") {
        auto m = stack();
        m.steps[1].packages = {*pep::parse_requirement("sgl-kernel")};
        auto f = cu130_facts();
        f.distributions[2].version = "0.3.15+cu128";  // the old sgl-kernel, upgraded by step 2
        f.imports[2].version = "0.3.15";
        CHECK(verify::check_all(m, 0, f).empty());
        auto last = verify::check_all(m, 1, f);
        REQUIRE(last.size() == 1);
        CHECK(last[0].dist == "sgl-kernel");
        CHECK(last[0].field == "mixed-cuda");
    }
}

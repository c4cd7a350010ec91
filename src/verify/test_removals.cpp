#include <doctest/doctest.h>

#include <algorithm>

#include "verify/verify.hpp"

using namespace stackup;

namespace {

manifest::Step step(const std::string& name, std::vector<std::string> packages, std::vector<std::string> remove) {
    manifest::Step s;
    s.name = name;
    for (const auto& p : packages) {
        s.packages.push_back(*pep::parse_requirement(p));
    }
    s.remove = std::move(remove);
    return s;
}

venv::Distribution dist(const std::string& name, const std::string& version) { return {name, name, version, {}}; }

const verify::Judgement* find(const std::vector<verify::Judgement>& all, const std::string& field,
                              const std::string& dist = "") {
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const verify::Judgement& j) { return j.field == field && j.dist == dist; });
    return it == all.end() ? nullptr : &*it;
}

}  // namespace

TEST_SUITE("verify") {
    TEST_CASE("removal patterns match normalized names") {
        CHECK(manifest::removal_matches("nvidia-*-cu12", "nvidia-cuda-runtime-cu12"));
        CHECK(manifest::removal_matches("nvidia-*-cu12", "nvidia-cublas-cu12"));
        CHECK_FALSE(manifest::removal_matches("nvidia-*-cu12", "nvidia-cuda-runtime"));
        CHECK_FALSE(manifest::removal_matches("nvidia-*-cu12", "nvidia-cudnn-cu13"));
        CHECK(manifest::removal_matches("cupy-cuda1?x", "cupy-cuda12x"));
        CHECK(manifest::removal_matches("torch", "torch"));
        CHECK_FALSE(manifest::removal_matches("torch", "torchvision"));
    }

    TEST_CASE("a removed dist that is back fails this step and every later one") {
        manifest::Manifest m;
        m.steps = {step("cuda", {"nvidia-cuda-runtime"}, {"nvidia-*-cu12"}), step("kernels", {"sgl-kernel"}, {})};
        std::vector<venv::Distribution> clean{dist("nvidia-cuda-runtime", "13.0.96")};
        auto ok = verify::judge_removals(m, 1, clean);
        REQUIRE(ok.size() == 1);
        CHECK(ok[0].ok);
        CHECK(ok[0].expected == "nothing matches nvidia-*-cu12");

        std::vector<venv::Distribution> back{dist("nvidia-cuda-runtime", "13.0.96"),
                                             dist("nvidia-cuda-runtime-cu12", "12.8.90")};
        for (std::size_t last : {0, 1}) {
            auto judged = verify::judge_removals(m, last, back);
            REQUIRE(judged.size() == 1);
            CHECK_FALSE(judged[0].ok);
            CHECK(judged[0].step == "cuda");
            CHECK(judged[0].dist == "nvidia-cuda-runtime-cu12");
            CHECK(judged[0].expected == "absent (remove: nvidia-*-cu12)");
            CHECK(judged[0].found == "12.8.90");
        }
    }

    TEST_CASE("a dist removed and installed again by the manifest is its wish, not a failure") {
        manifest::Manifest m;
        m.steps = {step("clean", {}, {"torch"}), step("torch", {"torch"}, {})};
        std::vector<venv::Distribution> dists{dist("torch", "2.11.0+cu130")};
        CHECK_FALSE(verify::judge_removals(m, 0, dists).front().ok);  // after step 1 it must be gone
        auto after_both = verify::judge_removals(m, 1, dists);
        REQUIRE(after_both.size() == 1);
        CHECK(after_both[0].ok);
    }

    TEST_CASE("judge_all: removals and the CUDA scan agree on renamed wheels") {
        manifest::Manifest m;
        m.cuda = manifest::Cuda{"13.0", "/usr/local/cuda-13.0", std::nullopt, false, {}};
        m.steps = {step("cuda", {"nvidia-cuda-runtime"}, {})};
        venv::Facts f;
        f.distributions = {dist("nvidia-cuda-runtime", "13.0.96"), dist("nvidia-cuda-runtime-cu12", "12.8.90")};
        auto failed = verify::check_all(m, 0, f);
        REQUIRE(failed.size() == 1);
        CHECK(failed[0].dist == "nvidia-cuda-runtime-cu12");
        CHECK(failed[0].field == "mixed-cuda");
        CHECK(failed[0].expected == "CUDA 13");

        m.steps[0].remove = {"nvidia-*-cu12"};
        auto judged = verify::judge_all(m, 0, f);
        auto removed = find(judged, "removed", "nvidia-cuda-runtime-cu12");
        REQUIRE(removed);
        CHECK_FALSE(removed->ok);
        f.distributions.pop_back();
        CHECK(verify::check_all(m, 0, f).empty());
    }

    TEST_CASE("with no target nothing is called mixed, and what was seen is said") {
        manifest::Manifest m;
        m.steps = {step("cuda", {"nvidia-cuda-runtime"}, {})};
        venv::Facts f;
        f.distributions = {dist("nvidia-cuda-runtime", "13.0.96"), dist("nvidia-cuda-runtime-cu12", "12.8.90"),
                           dist("numpy", "2.3.4")};
        auto judged = verify::judge_all(m, 0, f);
        CHECK(find(judged, "mixed-cuda") == nullptr);
        auto seen = find(judged, "cuda-builds");
        REQUIRE(seen);
        CHECK(seen->ok);
        CHECK(seen->found == "not judged; seen: CUDA 12: nvidia-cuda-runtime-cu12 12.8.90; CUDA 13: "
                             "nvidia-cuda-runtime 13.0.96");
    }

    TEST_CASE("what allow_mixed hid is said, never silently passed") {
        std::vector<venv::Distribution> dists{dist("torch", "2.11.0+cu130"), dist("flashinfer-python", "0.5.3+cu129")};
        auto target = verify::cuda_target_of_toolkit("13.0");
        auto scan = verify::scan_cuda(dists, target, {"flashinfer-python"});
        CHECK(scan.mixed.empty());
        auto judged = verify::cuda_judgements(scan, target);
        REQUIRE(judged.size() == 1);
        CHECK(judged[0].ok);
        CHECK(judged[0].found == "no other CUDA build; allow_mixed let pass: flashinfer-python 0.5.3+cu129 (CUDA 12 (cu129))");
    }
}

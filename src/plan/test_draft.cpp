#include <doctest/doctest.h>

#include <algorithm>

#include "base/error.hpp"
#include "manifest/manifest.hpp"
#include "pep/name.hpp"
#include "pep/version.hpp"
#include "plan/draft.hpp"
#include "verify/verify.hpp"

using namespace stackup;

namespace {

venv::Distribution dist(const std::string& name, const std::string& version) {
    return {name, pep::normalize_name(name), version, {}};
}

// The demo's cu128 venv plus NVIDIA's CUDA 12 wheels, CuPy, a cu129 flashinfer and a plain dist.
plan::DraftInput cu128_venv() {
    plan::DraftInput in;
    in.venv = "/srv/ml env";
    in.interpreter = {"/srv/ml env/bin/python", "3.11.7", 3, 11, "cpython", "cpython-311-x86_64-linux-gnu", "x86_64",
                      "glibc 2.36", true};
    in.distributions = {dist("cupy-cuda12x", "13.6.0"),
                        dist("filelock", "3.20.0"),
                        dist("flashinfer-python", "0.5.3+cu129"),
                        dist("nvidia-cublas-cu12", "12.8.4.1"),
                        dist("nvidia-cuda-runtime-cu12", "12.8.90"),
                        dist("sgl-kernel", "0.3.19"),
                        dist("torch", "2.10.0+cu128"),
                        dist("torchvision", "0.25.0+cu128"),
                        dist("triton", "3.5.0")};
    return in;
}

manifest::Manifest parse(const std::string& text) {
    INFO("manifest:\n" << text);
    manifest::ParseOptions o;
    o.env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    return manifest::parse(text, "draft.yaml", o);
}

// What the probe would say of `in`, every expected dist judged by its metadata alone.
venv::Facts facts_of(const plan::DraftInput& in, const manifest::Manifest& m) {
    venv::Facts f;
    f.interpreter = in.interpreter;
    f.distributions = in.distributions;
    for (const auto& step : m.steps) {
        for (const auto& e : step.expect) {
            venv::ImportResult r;
            r.dist = e.dist;
            r.skipped = "test: metadata only";
            f.imports.push_back(r);
        }
    }
    return f;
}

std::vector<std::string> expected_dists(const manifest::Step& step) {
    std::vector<std::string> out;
    for (const auto& e : step.expect) {
        out.push_back(e.dist);
    }
    return out;
}

const manifest::Expectation& expectation(const manifest::Step& step, const std::string& dist) {
    auto it = std::find_if(step.expect.begin(), step.expect.end(), [&](const auto& e) { return e.dist == dist; });
    REQUIRE(it != step.expect.end());
    return *it;
}

std::vector<std::string> package_names(const manifest::Step& step) {
    std::vector<std::string> out;
    for (const auto& p : step.packages) {
        out.push_back(p.normalized_name());
    }
    return out;
}

}  // namespace

TEST_SUITE("plan") {
    TEST_CASE("init: the baseline parses, pins every CUDA-flavoured dist and passes verify on the same facts") {
        auto in = cu128_venv();
        std::string text = plan::draft_baseline(in);
        auto m = parse(text);
        CHECK(m.name == "ml env-baseline");
        CHECK(m.venv == "/srv/ml env");
        CHECK(m.python == "3.11");
        CHECK_FALSE(m.cuda.has_value());
        REQUIRE(m.steps.size() == 1);
        const auto& step = m.steps[0];
        CHECK(step.packages.empty());
        CHECK(step.remove.empty());
        // filelock carries no CUDA and is not the GPU stack; triton and sgl-kernel are, unlabelled.
        CHECK(expected_dists(step) == std::vector<std::string>{"cupy-cuda12x", "flashinfer-python", "nvidia-cublas-cu12",
                                                               "nvidia-cuda-runtime-cu12", "sgl-kernel", "torch",
                                                               "torchvision", "triton"});
        const auto& torch = expectation(step, "torch");
        CHECK(torch.local == "cu128");
        REQUIRE(torch.version.has_value());
        CHECK(torch.version->contains(*pep::Version::parse("2.10.0+cu128")));
        CHECK_FALSE(torch.version->contains(*pep::Version::parse("2.10.0+cu130")));
        CHECK_FALSE(expectation(step, "sgl-kernel").local.has_value());
        // The labels name two CUDAs (cu128, cu129): verify has no target, so nothing is called mixed.
        CHECK_FALSE(verify::target_cuda(m).has_value());
        CHECK(m.allow_mixed.empty());
        CHECK(verify::check_all(m, 0, facts_of(in, m)).empty());

        // A dist that moved on fails it.
        auto moved = in;
        moved.distributions[6] = dist("torch", "2.10.1+cu128");
        CHECK_FALSE(verify::check_all(m, 0, facts_of(moved, m)).empty());
    }

    TEST_CASE("init: every installed dist is listed with its CUDA in a comment") {
        std::string text = plan::draft_baseline(cu128_venv());
        CHECK(text.find("# Installed distributions (9)") != std::string::npos);
        CHECK(text.find("#   filelock 3.20.0\n") != std::string::npos);
        CHECK(text.find("#   nvidia-cuda-runtime-cu12 12.8.90   CUDA 12 (name marker -cuNN)\n") != std::string::npos);
        CHECK(text.find("#   torch 2.10.0+cu128") != std::string::npos);
        CHECK(text.find("CUDA 12 (cu128)") != std::string::npos);
        CHECK(text.find("placeholder") != std::string::npos);
    }

    TEST_CASE("init: the toolkit found is the baseline's cuda, and its target") {
        auto in = cu128_venv();
        in.toolkit = plan::DraftToolkit{"12.9", "/usr/local/cuda"};
        auto m = parse(plan::draft_baseline(in));
        REQUIRE(m.cuda.has_value());
        CHECK(m.cuda->toolkit == "12.9");
        CHECK(m.cuda->home == "/usr/local/cuda");
        CHECK_FALSE(m.cuda->driver.has_value());
        // Against cu129 the cu128 torch builds are the other CUDA now: let pass, as found.
        CHECK(m.allow_mixed == std::vector<std::string>{"torch", "torchvision"});
        CHECK(verify::check_all(m, 0, facts_of(in, m)).empty());

        // Without that allow_mixed, the same venv would fail its own baseline.
        std::string text = plan::draft_baseline(in);
        auto pos = text.find("allow_mixed:");
        REQUIRE(pos != std::string::npos);
        auto strict = parse(text.substr(0, pos));
        auto failures = verify::check_all(strict, 0, facts_of(in, strict));
        REQUIRE(failures.size() == 2);
        CHECK(failures[0].dist == "torch");
        CHECK(failures[1].dist == "torchvision");
    }

    TEST_CASE("init: a venv without anything CUDA is refused") {
        plan::DraftInput in;
        in.venv = "/srv/plain";
        in.interpreter.major = 3;
        in.interpreter.minor = 12;
        in.distributions = {dist("numpy", "2.3.4")};
        CHECK_THROWS_AS(plan::draft_baseline(in), Error);
        try {
            plan::draft_baseline(in);
        } catch (const Error& e) {
            CHECK(e.code() == ExitCode::usage);
        }
    }

    TEST_CASE("init: an odd venv path survives a round trip through the parser") {
        auto in = cu128_venv();
        in.venv = "/srv/a \"q\" #x: y";
        CHECK(parse(plan::draft_baseline(in)).venv == "/srv/a \"q\" #x: y");
    }

    TEST_CASE("init --target-cuda: the draft parses, groups the steps and ends without another CUDA") {
        auto in = cu128_venv();
        std::string text = plan::draft_upgrade(in, "13.0");
        auto m = parse(text);
        CHECK(m.name == "ml env-cu130");
        REQUIRE(m.cuda.has_value());
        CHECK(m.cuda->toolkit == "13.0");
        CHECK(m.default_index == "pypi");
        CHECK(m.indexes.at("pytorch") == "https://download.pytorch.org/whl/nightly/cu130");
        REQUIRE(m.steps.size() == 3);

        const auto& torch = m.steps[0];
        CHECK(torch.name == "torch");
        CHECK(torch.index == "pytorch");
        CHECK(torch.prerelease);
        CHECK(package_names(torch) == std::vector<std::string>{"flashinfer-python", "torch", "torchvision"});
        CHECK(torch.remove == std::vector<std::string>{"cupy-cuda12x", "nvidia-*-cu12"});
        CHECK(expectation(torch, "torch").local == "cu130");
        CHECK(expectation(torch, "torch").cuda == "13.0");
        CHECK_FALSE(expectation(torch, "torch").version.has_value());
        CHECK(expectation(torch, "torchvision").local == "cu130");

        const auto& kernel = m.steps[1];
        CHECK(kernel.index == "sglang");
        CHECK_FALSE(kernel.deps);
        CHECK(package_names(kernel) == std::vector<std::string>{"sgl-kernel"});
        CHECK_FALSE(expectation(kernel, "sgl-kernel").local.has_value());  // the PyPI build had no label
        CHECK(m.allow_unmet == std::vector<std::string>{"sgl-kernel"});

        const auto& rest = m.steps[2];
        CHECK(rest.index == "pypi");
        CHECK(package_names(rest) == std::vector<std::string>{"cupy-cuda13x"});
        REQUIRE(m.checks.size() == 1);
        CHECK(m.checks[0].python.find("'13.0'") != std::string::npos);
        CHECK(text.find("triton 3.5.0: comes with torch") != std::string::npos);

        // The end state: what the steps remove gone, what they install at the target.
        std::vector<venv::Distribution> end;
        for (const auto& d : in.distributions) {
            bool removed = std::any_of(torch.remove.begin(), torch.remove.end(),
                                       [&](const auto& p) { return manifest::removal_matches(p, d.normalized); });
            if (!removed) {
                end.push_back(d);
            }
        }
        for (const auto& step : m.steps) {
            for (const auto& p : step.packages) {
                std::erase_if(end, [&](const auto& d) { return d.normalized == p.normalized_name(); });
                end.push_back(dist(p.normalized_name(), "1.0+cu130"));
            }
        }
        CHECK(verify::scan_cuda(end, verify::target_cuda(m), m.allow_mixed).mixed.empty());
        // ... which the venv as it is does not meet.
        CHECK(verify::scan_cuda(in.distributions, verify::target_cuda(m), m.allow_mixed).mixed.size() == 6);
    }

    TEST_CASE("init --target-cuda: CUDA wheels versioned as their release are asked for in the target's") {
        plan::DraftInput in;
        in.venv = "/srv/env";
        in.interpreter.major = 3;
        in.interpreter.minor = 12;
        in.distributions = {dist("cuda-bindings", "12.9.4"), dist("nvidia-cudnn-cu12", "9.10.2.21")};
        auto m = parse(plan::draft_upgrade(in, "13.0"));
        REQUIRE(m.steps.size() == 1);
        CHECK(m.steps[0].remove == std::vector<std::string>{"nvidia-cudnn-cu12"});  // one: its name, no pattern
        REQUIRE(m.steps[0].packages.size() == 1);
        CHECK(m.steps[0].packages[0].normalized_name() == "cuda-bindings");
        CHECK(expectation(m.steps[0], "cuda-bindings").version->contains(*pep::Version::parse("13.0.1")));
        CHECK(m.checks.empty());
    }

    TEST_CASE("init --target-cuda: a bad target, or nothing to move, is a usage error") {
        auto in = cu128_venv();
        CHECK_THROWS_AS(plan::draft_upgrade(in, "13"), Error);
        CHECK_THROWS_AS(plan::draft_upgrade(in, "cu130"), Error);
        plan::DraftInput done;
        done.venv = "/srv/env";
        done.distributions = {dist("torch", "2.11.0+cu130"), dist("nvidia-cuda-runtime", "13.0.96")};
        CHECK_THROWS_AS(plan::draft_upgrade(done, "13.0"), Error);
        // Only removals: a step that only removes.
        done.distributions.push_back(dist("nvidia-cublas-cu12", "12.8.4.1"));
        auto m = parse(plan::draft_upgrade(done, "13.0"));
        REQUIRE(m.steps.size() == 1);
        CHECK(m.steps[0].packages.empty());
        CHECK(m.steps[0].remove == std::vector<std::string>{"nvidia-cublas-cu12"});
    }
}

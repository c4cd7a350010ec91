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
        m.cuda = manifest::Cuda{"12.8", "/usr/local/cuda-12.8", std::nullopt, false, {}};
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
        CHECK(got[1].found == "12.8.4.1 (CUDA 12: name marker -cuNN)");
        // torch, flashinfer and nvidia-cublas 13; the cu12 wheel fits
        CHECK(verify::scan_mixed_cuda(dists, "cu128", {}).size() == 3);
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

namespace {

// One dist, its import, and a version-only expectation: what judge_expectations says of __version__.
struct VersionCase {
    const char* what;
    const char* module_version;
    const char* dist_version;
    venv::ImportResult::Record record;
    bool ok;
};

std::vector<verify::Judgement> judge_one(const std::string& dist_version, const venv::ImportResult& import,
                                         const manifest::Expectation& e) {
    venv::Facts f;
    f.distributions = {{e.dist, e.dist, dist_version}};
    f.imports = {import};
    return verify::judge_expectations({{"step", e}}, f);
}

const verify::Judgement* field_of(const std::vector<verify::Judgement>& all, const std::string& field) {
    auto it = std::find_if(all.begin(), all.end(), [&](const verify::Judgement& j) { return j.field == field; });
    return it == all.end() ? nullptr : &*it;
}

}  // namespace

TEST_SUITE("verify") {
    TEST_CASE("__version__ agrees with the metadata, or the files imported are exactly the dist's") {
        using Record = venv::ImportResult::Record;
        const VersionCase cases[] = {
            {"torch nightly", "2.11.0.dev20251230+cu130", "2.11.0.dev20251230+cu130", Record::unchecked, true},
            {"numpy", "1.26.4", "1.26.4", Record::unchecked, true},
            {"trailing zero", "2.0", "2.0.0", Record::unchecked, true},
            {"certifi's zero-padded calver", "2026.05.20", "2026.5.20", Record::unchecked, true},
            {"cv2 drops the build part", "4.9.0", "4.9.0.80", Record::unchecked, true},
            {"flashinfer's module-only local label", "0.2.5+cu128torch2.6", "0.2.5", Record::unchecked, true},
            {"stale, unchecked", "2.10.0", "2.11.0", Record::unchecked, false},
            {"stale: a file differs", "2.10.0", "2.11.0", Record::differs, false},
            {"stale: from outside the dist", "2.10.0", "2.11.0", Record::not_listed, false},
            {"stale: no RECORD", "2.10.0", "2.11.0", Record::no_record, false},
            {"lagging __version__, files as installed", "2.10.0", "2.11.0", Record::matches, true},
            {"regex's own numbering", "2.5.148", "2024.11.6", Record::matches, true},
            {"regex's numbering, unverified", "2.5.148", "2024.11.6", Record::unchecked, false},
            {"protobuf 5 module under protobuf 6 metadata", "5.29.0", "6.31.1", Record::not_listed, false},
            {"another CUDA's build shadows", "2.11.0+cu128", "2.11.0+cu130", Record::differs, false},
            {"another local label, files as installed", "2.11.0+cu128", "2.11.0+cu130", Record::matches, true},
            {"one part is no prefix", "4", "4.9", Record::unchecked, false},
            {"a prefix with a pre-release", "4.9.0rc1", "4.9.0.80", Record::unchecked, false},
            {"not PEP 440, equal", "unknown-1", "unknown-1", Record::unchecked, true},
            {"not PEP 440, unverified", "unknown", "1.0", Record::unchecked, false},
            {"not PEP 440, files as installed", "unknown", "1.0", Record::matches, true},
        };
        for (const auto& c : cases) {
            CAPTURE(c.what);
            venv::ImportResult r{"pkg", "pkg", std::nullopt, c.module_version, std::nullopt, {}, {}};
            r.file_record = c.record;
            r.file = "/v/lib/site-packages/pkg/__init__.py";
            auto all = judge_one(c.dist_version, r, expect("pkg"));
            const auto* j = field_of(all, "__version__");
            REQUIRE(j != nullptr);
            CHECK(j->ok == c.ok);
            CHECK(j->expected == c.dist_version);
            CHECK(j->found.rfind(c.module_version, 0) == 0);
            if (!c.ok) {
                CHECK(j->found.find("stale or shadowed") != std::string::npos);
            }
            if (c.ok && c.record == Record::matches) {
                CHECK(j->found.find("own numbering") != std::string::npos);
            }
            CHECK(verify::failures(all).size() == (c.ok ? 0U : 1U));
        }
    }

    TEST_CASE("a stale module's mismatch says which file and why") {
        venv::ImportResult r{"pkg", "pkg", std::nullopt, "2.10.0", std::nullopt, {}, {}};
        r.file_record = venv::ImportResult::Record::differs;
        r.file = "/v/lib/site-packages/pkg/_version.py";
        auto got = verify::failures(judge_one("2.11.0", r, expect("pkg")));
        REQUIRE(got.size() == 1);
        CHECK(got[0] == Mismatch{"step", "pkg", "__version__", "2.11.0",
                                 "2.10.0 (stale or shadowed module: /v/lib/site-packages/pkg/_version.py differs "
                                 "from the dist's RECORD)"});
    }

    TEST_CASE("a dist with no module of its own is judged by its metadata; cuda and attrs then cannot pass") {
        venv::ImportResult r{"nvidia-cuda-runtime", "", std::nullopt, std::nullopt, std::nullopt, {}, {}};
        r.skipped = "no importable module in RECORD: judged by its metadata only";
        auto e = expect("nvidia-cuda-runtime");
        e.version = pep::SpecifierSet::parse(">=13");
        auto all = judge_one("13.0.96", r, e);
        const auto* import = field_of(all, "import");
        REQUIRE(import != nullptr);
        CHECK(import->ok);
        CHECK(import->found == "skipped (no importable module in RECORD: judged by its metadata only)");
        REQUIRE(field_of(all, "version") != nullptr);
        CHECK(field_of(all, "version")->ok);
        CHECK(field_of(all, "__version__") == nullptr);
        CHECK(verify::failures(all).empty());
        CHECK(verify::failures(judge_one("12.9.79", r, e)).size() == 1);  // the metadata still counts

        e.cuda = "13.0";
        e.attrs = {{"x", "y"}};
        auto failed = verify::failures(judge_one("13.0.96", r, e));
        REQUIRE(failed.size() == 2);
        CHECK(failed[0].field == "cuda");
        CHECK(failed[0].found.find("name a module with import:") != std::string::npos);
        CHECK(failed[1].field == "attrs.x");
    }
}

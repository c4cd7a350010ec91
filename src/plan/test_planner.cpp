#include <doctest/doctest.h>

#include "plan/planner.hpp"

using namespace stackup;

namespace {

manifest::Manifest two_indexes() {
    manifest::Manifest m;
    m.indexes = {{"pytorch", "http://127.0.0.1:9/cu130"}, {"pypi", "http://127.0.0.1:9/pypi/"}};
    m.default_index = "pypi";
    manifest::Step torch;
    torch.name = "torch";
    torch.index = "pytorch";
    torch.prerelease = true;
    torch.packages = {*pep::parse_requirement("torch[opt]"), *pep::parse_requirement("filelock")};
    manifest::Expectation e;
    e.dist = "torch";
    e.local = "cu130";
    e.version = pep::SpecifierSet::parse("<2.12");
    torch.expect = {e};
    m.steps = {torch};
    return m;
}

venv::Facts cp311() {
    venv::Facts f;
    f.interpreter.version = "3.11.7";
    f.interpreter.major = 3;
    f.interpreter.minor = 11;
    f.interpreter.implementation = "cpython";
    f.interpreter.soabi = "cpython-311-x86_64-linux-gnu";
    f.interpreter.libc = "glibc 2.36";
    f.interpreter.machine = "x86_64";
    f.distributions = {{"torch", "torch", "2.10.0+cu128"}};
    return f;
}

index::ProjectPage page(const std::string& idx, const std::string& project, std::vector<std::string> names,
                        base::HttpOutcome outcome = base::HttpOutcome::ok) {
    index::ProjectPage p;
    p.request = {idx, "", project};
    p.outcome = outcome;
    p.status = outcome == base::HttpOutcome::ok ? 200 : 404;
    for (const auto& n : names) {
        index::IndexFile f;
        f.filename = n;
        f.url = "http://127.0.0.1:9/" + idx + "/" + project + "/" + n;
        p.files.push_back(f);
    }
    p.file_count = p.files.size();
    return p;
}

}  // namespace

TEST_SUITE("plan") {
    TEST_CASE("the pages: each package on its step's index and on the default index") {
        auto pages = plan::pages_needed(two_indexes());
        REQUIRE(pages.size() == 4);
        CHECK(pages[0].index == "pytorch");
        CHECK(pages[0].project == "torch");
        CHECK(pages[1].index == "pypi");
        CHECK(index::project_url(pages[0].root, pages[0].project) == "http://127.0.0.1:9/cu130/torch/");
    }

    TEST_CASE("first index wins; the expectation narrows the choice; pins keep extras and markers") {
        auto m = two_indexes();
        std::vector<index::ProjectPage> pages{
            page("pytorch", "torch", {"torch-2.11.0.dev20251230+cu130-py3-none-any.whl",
                                      "torch-2.12.0.dev20260101+cu130-py3-none-any.whl",
                                      "torch-2.11.0.dev20251230+cu129-py3-none-any.whl"}),
            page("pypi", "torch", {"torch-2.13.0-py3-none-any.whl"}),
            page("pytorch", "filelock", {}, base::HttpOutcome::not_found),
            page("pypi", "filelock", {"filelock-3.20.0-py3-none-any.whl"})};
        auto p = plan::make_plan(m, cp311(), pages);
        REQUIRE(p.ok());
        const auto& torch = p.steps[0].packages[0];
        CHECK(torch.index == "pytorch");
        CHECK(torch.choice->wheel.version.str() == "2.11.0.dev20251230+cu130");  // <2.12 from expect
        CHECK(torch.pin(m.steps[0].packages[0]) == "torch[opt]==2.11.0.dev20251230+cu130");
        CHECK(torch.change() == "upgrade");
        const auto& filelock = p.steps[0].packages[1];
        CHECK(filelock.index == "pypi");  // 404 on the step's index: uv looks at the default next
        CHECK(filelock.change() == "new");

        auto marked = *pep::parse_requirement("torch; python_version < '3'");
        CHECK(torch.pin(marked) == "torch==2.11.0.dev20251230+cu130; python_version < '3'");
    }

    TEST_CASE("a Picker makes the same plan as the pages' files, holding none of them") {
        auto m = two_indexes();
        m.steps.push_back(m.steps[0]);  // the same packages again, a step that asks for another label
        m.steps[1].name = "again";
        m.steps[1].expect[0].local = "cu129";
        std::vector<index::ProjectPage> pages{
            page("pytorch", "torch", {"torch-2.11.0.dev20251230+cu130-py3-none-any.whl",
                                      "torch-2.11.0.dev20251230+cu129-py3-none-any.whl",
                                      "torch-2.12.0.dev20260101+cu130-py3-none-any.whl"}),
            page("pypi", "torch", {"torch-2.13.0-py3-none-any.whl"}),
            page("pytorch", "filelock", {}, base::HttpOutcome::not_found),
            page("pypi", "filelock", {"filelock-3.20.0-py3-none-any.whl"})};
        const auto facts = cp311();
        const auto direct = plan::make_plan(m, facts, pages);
        plan::Picker picker(m, facts);
        for (auto& p : pages) {
            if (p.outcome == base::HttpOutcome::ok) {
                picker(p);
            }
        }
        CHECK(pages[0].files.empty());
        CHECK(pages[0].file_count == 3);
        REQUIRE(picker.picked(1, 0, "pytorch") != nullptr);
        CHECK(picker.picked(0, 1, "pytorch") == nullptr);  // filelock: a 404 there, never picked
        const auto picked = plan::make_plan(m, facts, pages, &picker);
        REQUIRE(direct.ok());
        REQUIRE(picked.ok());
        for (std::size_t s = 0; s < 2; ++s) {
            for (std::size_t j = 0; j < 2; ++j) {
                CAPTURE(s);
                CAPTURE(j);
                const auto& a = direct.steps[s].packages[j];
                const auto& b = picked.steps[s].packages[j];
                CHECK(a.index == b.index);
                REQUIRE(b.choice);
                CHECK(a.choice->file == b.choice->file);
            }
        }
        CHECK(picked.steps[1].packages[0].choice->wheel.version.str() == "2.11.0.dev20251230+cu129");
    }

    TEST_CASE("missing everywhere, and found elsewhere, are told apart") {
        auto m = two_indexes();
        m.default_index.reset();
        m.steps[0].packages = {*pep::parse_requirement("sgl-kernel")};
        m.indexes["sglang"] = "http://127.0.0.1:9/sglang/";
        std::vector<index::ProjectPage> pages{page("pytorch", "sgl-kernel", {}, base::HttpOutcome::not_found)};
        auto nowhere = plan::make_plan(m, cp311(), pages);
        REQUIRE(nowhere.problems.size() == 1);
        CHECK(nowhere.problems[0] ==
              "step 'torch': sgl-kernel is not on index 'pytorch' (404); it is on none of this manifest's indexes");

        auto again = plan::pages_elsewhere(m, pages);
        REQUIRE(again.size() == 2);  // every index not asked yet: pypi and sglang
        CHECK(again[0].index == "pypi");
        CHECK(again[1].index == "sglang");
        pages.push_back(page("sglang", "sgl-kernel", {"sgl_kernel-0.3.20+cu130-cp310-abi3-manylinux2014_x86_64.whl"}));
        auto elsewhere = plan::make_plan(m, cp311(), pages);
        CHECK(elsewhere.problems[0].find("it is on 'sglang'") != std::string::npos);
    }

    TEST_CASE("an index that failed, and one that answered with no readable page, are told apart") {
        auto m = two_indexes();
        m.steps[0].packages = {*pep::parse_requirement("torch")};
        auto failed = page("pytorch", "torch", {}, base::HttpOutcome::transient_exhausted);
        failed.status = 200;  // the headers came, then the connection was reset
        failed.error = "u: Connection reset by peer (gave up after 3 tries)";
        auto plan = plan::make_plan(m, cp311(), {failed});
        REQUIRE(plan.problems.size() == 1);
        CHECK(plan.problems[0].find("index 'pytorch' did not answer for torch: u: Connection reset") !=
              std::string::npos);
        auto truncated = page("pytorch", "torch", {}, base::HttpOutcome::fatal);
        truncated.status = 200;
        truncated.error = "u: malformed JSON page";
        plan = plan::make_plan(m, cp311(), {truncated});
        REQUIRE(plan.problems.size() == 1);
        CHECK(plan.problems[0].find("index 'pytorch' answered for torch with no page stackup can read: u: malformed") !=
              std::string::npos);
    }
}

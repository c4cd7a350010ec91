#include <doctest/doctest.h>

#include "cli/json.hpp"
#include "cli/render.hpp"

using namespace stackup;

namespace {

// A plan of one step: two removals, an upgrade, a skipped requirement; a note and a warning.
plan::Plan sample_plan() {
    plan::PlannedPackage torch;
    torch.name = "torch";
    torch.requirement = "torch";
    torch.installed = "2.10.0+cu128";
    torch.index = "pytorch";
    index::Choice choice;
    choice.file.filename = "torch-2.11.0+cu130-cp311-cp311-manylinux_2_28_x86_64.whl";
    choice.file.url = "https://user:secret@idx.example/torch/" + choice.file.filename;
    choice.file.hashes["sha256"] = std::string(64, 'a');
    choice.wheel = *pep::parse_wheel_filename(choice.file.filename);
    torch.choice = choice;
    plan::PlannedPackage numpy;
    numpy.name = "numpy";
    numpy.requirement = "numpy; python_version < \"3\"";
    numpy.skipped = "marker is false for this venv: python_version < \"3\"";
    plan::Plan p;
    p.steps.push_back({"torch",
                       "pytorch",
                       {{"nvidia-*-cu12", "nvidia-cuda-runtime-cu12", "12.8.90"}, {"cupy-cuda12x", "", ""}},
                       {torch, numpy}});
    p.notes = {"step 'torch': remove: cupy-cuda12x matches nothing installed"};
    p.warnings = {"step 'torch': numpy is skipped although the step expects it"};
    return p;
}

}  // namespace

TEST_SUITE("cli") {
    TEST_CASE("the plan table: removals, the upgrade, a skip; notes, warnings and problems below") {
        auto p = sample_plan();
        std::string table = cli::render_plan(p);
        CHECK(table.find("torch  nvidia-cuda-runtime-cu12  12.8.90") != std::string::npos);
        CHECK(table.find("remove   (remove: nvidia-*-cu12)") != std::string::npos);
        CHECK(table.find("2.10.0+cu128  ->  2.11.0+cu130") != std::string::npos);
        CHECK(table.find("upgrade  torch-2.11.0+cu130") != std::string::npos);
        CHECK(table.find("skip     (marker is false for this venv") != std::string::npos);
        CHECK(table.find("cupy-cuda12x  ") == std::string::npos);  // no row for a pattern that matched nothing
        CHECK(table.find("note: step 'torch': remove: cupy-cuda12x matches nothing installed") != std::string::npos);
        CHECK(table.find("warning: step 'torch': numpy is skipped") != std::string::npos);
        CHECK(table.find("\x1b[") == std::string::npos);  // no colour unless painted

        p.end_state = "after the last step these would still be built for another CUDA than cu130";
        p.problems = {"step 'torch': sgl-kernel is not on index 'pytorch' (404)", p.end_state};
        table = cli::render_plan(p);
        CHECK(table.find("missing: step 'torch': sgl-kernel") != std::string::npos);
        CHECK(table.find("would end mixed: after the last step") != std::string::npos);
        CHECK(cli::render_plan(p, cli::Paint{true}).find("\x1b[") != std::string::npos);
    }

    TEST_CASE("a package row and its change kind") {
        CHECK(cli::change_kind({"torch", "2.10.0+cu128", "2.11.0+cu130"}) == "upgrade");
        CHECK(cli::change_kind({"torch", "2.11.0", "2.10.0"}) == "downgrade");
        CHECK(cli::change_kind({"torch", "", "2.11.0"}) == "new");
        CHECK(cli::change_kind({"nvidia-cublas-cu12", "12.8.4.1", ""}) == "removed");
        CHECK(cli::change_kind({"torch", "2.11.0", "2.11.0"}) == "reinstall");
        CHECK(cli::render_package_row({"nvidia-cublas-cu12", "12.8.4.1", ""}) ==
              "nvidia-cublas-cu12  12.8.4.1 -> -  (removed)");
    }

    TEST_CASE("the plan document: removals and skips in packages, notes, the end state as an error") {
        cli::Document doc;
        doc.set_command("plan");
        auto p = sample_plan();
        p.end_state = "after the last step these would still be built for another CUDA than cu130";
        p.problems = {p.end_state};
        cli::add_plan(doc, p);
        auto j = doc.finish(3);
        CHECK(j["ok"] == false);
        CHECK(j["exit_code"] == 3);
        REQUIRE(j["errors"].size() == 1);
        CHECK(j["errors"][0]["code"] == "preflight_failed");
        CHECK(j["errors"][0]["message"] == p.end_state);
        CHECK(j["notes"][0] == p.notes[0]);
        const auto& packages = j["steps"][0]["packages"];
        REQUIRE(packages.size() == 3);  // the removal that matched, torch, numpy
        CHECK(packages[0]["change"] == "remove");
        CHECK(packages[0]["name"] == "nvidia-cuda-runtime-cu12");
        CHECK(packages[0]["pattern"] == "nvidia-*-cu12");
        CHECK(packages[0]["before"] == "12.8.90");
        CHECK(packages[0]["after"].is_null());
        CHECK(packages[1]["change"] == "upgrade");
        CHECK(packages[1]["url"] == "https://idx.example/torch/" + p.steps[0].packages[0].choice->file.filename);
        CHECK(packages[2]["change"] == "skip");
        CHECK(packages[2]["skipped"] == p.steps[0].packages[1].skipped);
        CHECK(j["steps"][0]["status"] == "planned");  // a skip is not a missing wheel
    }
}

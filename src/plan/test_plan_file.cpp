#include <doctest/doctest.h>

#include "base/error.hpp"
#include "plan/plan_file.hpp"

using namespace stackup;

namespace {

plan::SavedPlan sample() {
    plan::SavedPlan p;
    p.created = "2026-12-02T19:00:00Z";
    p.stackup_version = "0.1.0";
    p.manifest = "/srv/m.yaml";
    p.manifest_sha256 = std::string(64, 'a');
    p.venv = "/srv/env";
    p.venv_state.python = "3.11.7";
    p.venv_state.executable = "/srv/env/bin/python";
    p.venv_state.soabi = "cpython-311-x86_64-linux-gnu";
    p.venv_state.distributions = {{"torch", "2.10.0+cu128"}, {"filelock", "3.20.0"}};
    p.toolkit = "13.0";
    p.env_dropped = {"UV_INDEX_URL"};
    plan::SavedStep step;
    step.name = "torch";
    step.index = "pytorch";
    step.packages.push_back({"torch", "torch", "2.10.0+cu128", "2.11.0.dev20251230+cu130", "upgrade", "pytorch",
                             "torch-2.11.0.dev20251230+cu130-cp311-cp311-manylinux_2_28_x86_64.whl",
                             "https://***@idx/torch-2.11.0.dev20251230%2Bcu130-cp311-cp311-manylinux_2_28_x86_64.whl",
                             std::string(64, 'b'), "torch==2.11.0.dev20251230+cu130"});
    step.argv = {"uv", "pip", "install", "--requirements", "/s/requirements/step-1.txt"};
    step.requirements = {"torch==2.11.0.dev20251230+cu130 --hash=sha256:" + std::string(64, 'b')};
    step.env = {{"VIRTUAL_ENV", "/srv/env"}};
    p.steps.push_back(step);
    return p;
}

std::string error_of(const std::string& text) {
    try {
        plan::parse_saved_plan(text, "plan.json");
    } catch (const Error& e) {
        CHECK(e.code() == ExitCode::usage);
        return e.what();
    }
    return "";
}

}  // namespace

TEST_SUITE("plan") {
    TEST_CASE("a saved plan reads back as it was written") {
        auto p = sample();
        p.venv_state.digest = plan::venv_state_of({}).digest;
        auto text = plan::to_json(p);
        CHECK(plan::looks_like_saved_plan(text));
        CHECK_FALSE(plan::looks_like_saved_plan("version: 1\nname: x\n"));
        CHECK(plan::parse_saved_plan(text, "plan.json") == p);
    }

    TEST_CASE("the plan rebuilt from a saved one pins the saved files, hashes included") {
        auto rebuilt = plan::plan_of(sample());
        REQUIRE(rebuilt.steps.size() == 1);
        const auto& torch = rebuilt.steps[0].packages.at(0);
        REQUIRE(torch.choice);
        CHECK(torch.choice->wheel.version.str() == "2.11.0.dev20251230+cu130");
        CHECK(torch.choice->file.hashes.at("sha256") == std::string(64, 'b'));
        CHECK(torch.change() == "upgrade");
        CHECK(torch.pin(*pep::parse_requirement("torch")) == "torch==2.11.0.dev20251230+cu130");
    }

    TEST_CASE("removals and skipped requirements survive the round trip") {
        auto p = sample();
        p.steps[0].remove = {"nvidia-cuda-runtime-cu12"};
        p.steps[0].remove_argv = {"uv", "pip", "uninstall", "nvidia-cuda-runtime-cu12"};
        p.venv_state.distributions["nvidia-cuda-runtime-cu12"] = "12.8.90";
        plan::SavedPackage skipped;
        skipped.name = "numpy";
        skipped.requirement = "numpy; python_version < \"3\"";
        skipped.change = "skip";
        skipped.skipped = "marker is false for this venv: python_version < \"3\"";
        p.steps[0].packages.push_back(skipped);
        auto read = plan::parse_saved_plan(plan::to_json(p), "plan.json");
        CHECK(read == p);
        auto rebuilt = plan::plan_of(read);
        REQUIRE(rebuilt.steps[0].removals.size() == 1);
        CHECK(rebuilt.steps[0].removals[0] ==
              plan::PlannedRemoval{"nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu12", "12.8.90"});
        REQUIRE(rebuilt.steps[0].packages.size() == 2);
        CHECK(rebuilt.steps[0].packages[1].change() == "skip");
        CHECK_FALSE(rebuilt.steps[0].packages[1].choice);
    }

    TEST_CASE("what changed in the venv since the plan, one line each") {
        auto then = sample().venv_state;
        then.digest = "x";
        auto now = then;
        CHECK(plan::venv_changes(then, now).empty());
        now.distributions["torch"] = "2.9.1";
        now.distributions.erase("filelock");
        now.distributions["sgl-kernel"] = "0.3.19";
        auto changes = plan::venv_changes(then, now);
        CHECK(changes == std::vector<std::string>{"filelock 3.20.0 was removed",
                                                  "torch changed from 2.10.0+cu128 to 2.9.1",
                                                  "sgl-kernel 0.3.19 was installed"});
        auto other_python = then;
        other_python.python = "3.12.1";
        CHECK(plan::venv_changes(then, other_python).at(0).find("python 3.11.7") != std::string::npos);
    }

    TEST_CASE("the venv digest covers the interpreter and every distribution") {
        venv::Facts facts;
        facts.interpreter.version = "3.11.7";
        facts.distributions = {{"Torch", "torch", "2.10.0+cu128"}};
        auto a = plan::venv_state_of(facts);
        facts.distributions[0].version = "2.10.0+cu130";
        auto b = plan::venv_state_of(facts);
        facts.interpreter.version = "3.11.8";
        auto c = plan::venv_state_of(facts);
        CHECK(a.digest.size() == 64);
        CHECK(a.digest != b.digest);
        CHECK(b.digest != c.digest);
    }

    TEST_CASE("a bad saved plan says what and where") {
        CHECK(error_of("{not json").find("plan.json: not a saved plan") == 0);
        auto text = plan::to_json(sample());
        auto other_schema = text;
        other_schema.replace(other_schema.find("\"schema\": 1"), 11, "\"schema\": 9");
        CHECK(error_of(other_schema).find("schema 9; this stackup reads schema 1") != std::string::npos);
        auto no_sha = text;
        no_sha.replace(no_sha.find("\"sha256\": \"bbbb"), 10, "\"sha257\": ");
        CHECK(error_of(no_sha).find("steps[0].packages[0].sha256 is missing") != std::string::npos);
        auto bad_file = text;
        bad_file.replace(bad_file.find("\"filename\": \"torch-"), 19, "\"filename\": \"torch ");
        CHECK(error_of(bad_file).find("is not a wheel file name") != std::string::npos);
    }
}

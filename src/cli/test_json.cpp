#include <doctest/doctest.h>

#include "cli/json.hpp"

using namespace stackup;

namespace {

// Every document has these, `ok` exactly when the exit code is 0 (README: JSON).
void check_envelope(const cli::Json& j, const std::string& command, int exit_code) {
    CHECK(j["schema"] == cli::kJsonSchema);
    CHECK(j["command"] == command);
    CHECK(j["ok"] == (exit_code == 0));
    CHECK(j["exit_code"] == exit_code);
    CHECK(j.contains("venv"));
    REQUIRE(j["errors"].is_array());
    CHECK(j["errors"].empty() == (exit_code == 0));
}

}  // namespace

TEST_SUITE("cli") {
    TEST_CASE("the apply document of an interrupted run: interrupted_by, exit 128+N, the step interrupted") {
        txn::ApplyReport report;
        report.outcome = txn::Outcome::interrupted;
        report.signal = 2;
        report.failure = "interrupted by SIGINT";
        txn::StepReport step;
        step.name = "torch";
        step.status = txn::StepStatus::interrupted;
        report.steps = {step};
        CHECK(static_cast<int>(report.exit_code()) == 130);
        cli::Document doc;
        doc.set_command("apply");
        cli::add_apply(doc, report);
        auto j = doc.finish(130);
        check_envelope(j, "apply", 130);
        CHECK(j["interrupted_by"] == "SIGINT");
        CHECK(j["errors"][0]["code"] == "signal");
        CHECK(j["errors"][0]["message"] == "interrupted by SIGINT");
        CHECK(j["steps"][0]["status"] == "interrupted");
        CHECK(j["changed"] == false);

        txn::ApplyReport live;  // a signal after the switch: applied, and still 128+N
        live.outcome = txn::Outcome::applied;
        live.switched = true;
        live.signal = 15;
        CHECK(static_cast<int>(live.exit_code()) == 143);
        cli::Document after;
        after.set_command("apply");
        cli::add_apply(after, live);
        auto k = after.finish(143);
        check_envelope(k, "apply", 143);
        CHECK(k["interrupted_by"] == "SIGTERM");
        CHECK(k["switched"] == true);
        CHECK(k["errors"][0]["message"] == "interrupted by SIGTERM after the switch: the upgrade is live");
    }

    TEST_CASE("the apply document of a failed, rolled-back step: status, checks, removals, errors") {
        txn::ApplyReport report;
        report.outcome = txn::Outcome::verification_failed;
        report.failure = "verification failed: step 'torch': nvidia-cuda-runtime-cu12: removed: expected absent";
        report.snapshot_id = "20261203T000000Z-abcd";
        report.snapshot_path = "/s/snapshots/20261203T000000Z-abcd";
        report.rolled_back = true;
        txn::StepReport step;
        step.name = "torch";
        step.status = txn::StepStatus::verification_failed;
        step.remove_argv = {"uv", "pip", "uninstall", "nvidia-cuda-runtime-cu12"};
        step.argv = {"uv", "pip", "install"};
        step.packages = {{"nvidia-cuda-runtime-cu12", "12.8.90", ""}, {"torch", "2.10.0+cu128", "2.11.0+cu130"}};
        step.checks = {{"torch", "nvidia-cuda-runtime-cu12", "removed", "absent (remove: nvidia-*-cu12)", "12.8.90",
                        false},
                       {"torch", "", "requires", "every installed requirement still met", "none broken", true}};
        step.mismatches = verify::failures(step.checks);
        report.mismatches = step.mismatches;
        report.steps = {step};
        cli::Document doc;
        doc.set_command("apply");
        cli::add_apply(doc, report);
        auto j = doc.finish(1);
        check_envelope(j, "apply", 1);
        CHECK(j["errors"][0]["code"] == "verification_failed");
        CHECK(j["errors"][0]["step"] == "torch");
        CHECK(j["errors"][1]["field"] == "removed");
        CHECK(j["rolled_back"] == true);
        CHECK(j["changed"] == false);
        CHECK(j["would_change"].is_null());
        CHECK(j["snapshot"]["id"] == report.snapshot_id);
        const auto& s = j["steps"][0];
        CHECK(s["status"] == "verification failed");
        CHECK(s["remove_argv"][2] == "uninstall");
        CHECK(s["packages"][0]["change"] == "removed");
        CHECK(s["packages"][0]["after"].is_null());
        CHECK(s["packages"][1]["change"] == "upgrade");
        CHECK(s["checks"].size() == 2);
        CHECK(s["checks"][1]["ok"] == true);
    }

    TEST_CASE("the verify document: every judgement, python checks, unmet requirements as data") {
        txn::VerifyReport report;
        report.judgements = {{"", "", "cuda-builds", "no target CUDA given", "not judged; seen: CUDA 12: x 1", true}};
        report.broken = {{"lonely", "1.0", "absent-dependency>=1", "not installed", "absent-dependency", ""}};
        cli::Document doc;
        doc.set_command("verify");
        cli::add_verify(doc, report);
        auto j = doc.finish(0);
        check_envelope(j, "verify", 0);
        CHECK(j["checks"][0]["field"] == "cuda-builds");
        CHECK(j["checks"][0]["ok"] == true);
        CHECK(j["python_checks"].empty());
        CHECK(j["unmet_requirements"][0]["requirement"] == "absent-dependency>=1");
        CHECK(j["unmet_requirements"][0]["required"] == "absent-dependency");
        CHECK(j["unmet_requirements"][0]["installed"].is_null());
        CHECK(j["unmet_requirements"][0]["message"] ==
              "lonely 1.0 requires absent-dependency>=1, but absent-dependency is not installed");
    }

    TEST_CASE("the status document after a rollback: the last transaction and the snapshot restored to") {
        txn::StatusReport report;
        report.last = txn::LastTransaction{"2026-12-03T18:00:00Z", "/m.yaml", "rolled back",
                                     "stackup rollback: restored snapshot S", "S", "rollback"};
        cli::Document doc;
        doc.set_command("status");
        cli::add_status(doc, report, "/state");
        auto j = doc.finish(0);
        check_envelope(j, "status", 0);
        CHECK(j["lock"]["state"] == "never_taken");
        CHECK(j["interrupted"].is_null());
        CHECK(j["last_apply"]["command"] == "rollback");
        CHECK(j["restored_to"] == "S");
        report.last->result = "committed";
        report.last->command = "apply";
        cli::Document committed;
        cli::add_status(committed, report, "/state");
        CHECK(committed.finish(0)["restored_to"].is_null());
    }
}

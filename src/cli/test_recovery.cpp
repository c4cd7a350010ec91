#include <doctest/doctest.h>

#include "cli/json.hpp"
#include "cli/recovery.hpp"
#include "txn/recover.hpp"

using namespace stackup;
using namespace stackup::cli;

namespace {

// A run killed after `step_running 2` of an in-place apply.
txn::OpenTransaction killed_in_step_two() {
    txn::OpenTransaction open;
    open.manifest = "/m/upgrade.yaml";
    open.venv = "/v/env";
    open.pid = 4242;
    open.host = "gpu-07";
    open.started = "2026-12-02T16:05:00Z";
    open.snapshot_id = "20261202T160501Z-3fa9";
    open.step = 2;
    open.step_name = "sgl-kernel";
    open.last = txn::RecordKind::step_running;
    return open;
}

}  // namespace

TEST_SUITE("cli") {
    TEST_CASE("each advice names the command that is the way out") {
        using txn::Advice;
        CHECK(advice_words(Advice::staged_gone) == " (stage again with `stackup apply --stage`)");
        CHECK(advice_words(Advice::staged_stale) == ": stage it again with `stackup apply --stage`");
        CHECK(advice_words(Advice::no_such_snapshot) == " (see `stackup snapshots list`)");
        CHECK(advice_words(Advice::needed_for_recovery) == " (run `stackup rollback` first, or `stackup status`)");
        CHECK(advice_words(Advice::orphan_holds_lock) == ", then run `stackup status`");
    }

    TEST_CASE("where an interrupted run stopped, in words") {
        auto open = killed_in_step_two();
        CHECK(where(open) == "step 2 (sgl-kernel) running");
        open.last = txn::RecordKind::step_verified;
        CHECK(where(open) == "step 2 (sgl-kernel) verified");
        open.last = txn::RecordKind::rollback_failed;
        CHECK(where(open) == "rollback failed");
        open.last = txn::RecordKind::switching;
        CHECK(where(open) == "switching the verified generation in");
        open.last = txn::RecordKind::started;
        CHECK(where(open) == "before the snapshot (nothing touched)");
        open.last = txn::RecordKind::snapshot_taken;
        CHECK(where(open) == "after the snapshot, before the first step");
        open.blue_green = true;
        CHECK(where(open) == "after cloning the venv, before the first step");
    }

    TEST_CASE("command lines name --state-dir only when it is not the venv's default, quoted for a shell") {
        CHECK(command_for("rollback", "/v/env", "/v/.stackup/env-1234") == "stackup rollback --venv /v/env");
        CHECK(command_for("rollback", "/v/env", "/srv/state/env-1234", {"--to", "3"}) ==
              "stackup rollback --venv /v/env --state-dir /srv/state --to 3");
        CHECK(command_for("apply", "/v/my env", "/v/.stackup/x", {"/m/a b.yaml"}) ==
              "stackup apply --venv '/v/my env' '/m/a b.yaml'");
        CHECK(command_for(txn::NextCommand{txn::NextCommand::Verb::switch_staged, "/v/env", "/s/x", {}}) ==
              "stackup switch --venv /v/env --state-dir /s");
    }

    TEST_CASE("an interrupted run is described with its step, snapshot, pid and how to recover") {
        auto open = killed_in_step_two();
        auto message = describe_interrupted(open, "/v/.stackup/env-1");
        CHECK(message ==
              "an interrupted transaction is open in /v/.stackup/env-1/journal: apply of /m/upgrade.yaml, pid 4242 on "
              "gpu-07, started 2026-12-02T16:05:00Z, stopped step 2 (sgl-kernel) running; run `stackup rollback "
              "--venv /v/env` to restore snapshot 20261202T160501Z-3fa9, or `stackup status --venv /v/env`");
        open.why = "disk full";
        open.last = txn::RecordKind::rollback_failed;
        CHECK(describe_interrupted(open, "/v/.stackup/env-1").find("stopped rollback failed (disk full); run") !=
              std::string::npos);
    }

    TEST_CASE("each kind of recovery gets its own advice") {
        auto open = killed_in_step_two();
        open.snapshot_id.clear();
        open.last = txn::RecordKind::started;
        REQUIRE(open.recovery() == txn::Recovery::close_untouched);
        CHECK(recovery_hint(open, "/v/.stackup/e").find("not touched: run `stackup rollback --venv /v/env` to close") !=
              std::string::npos);
        CHECK(describe_interrupted(open, "/s/e").find("not touched") != std::string::npos);
        open.blue_green = true;
        open.snapshot_id = "g1";
        REQUIRE(open.recovery() == txn::Recovery::before_switch);
        CHECK(recovery_hint(open, "/v/.stackup/e").find("nothing was changed in /v/env") != std::string::npos);
        open.switching = true;
        REQUIRE(open.recovery() == txn::Recovery::while_switching);
        CHECK(recovery_hint(open, "/v/.stackup/e").find("died while switching") != std::string::npos);
        CHECK(recovery_hint(open, "/v/.stackup/e").find("to be back on generation g1") != std::string::npos);
    }

    TEST_CASE("errors that carry facts are said in full, on stderr and in --json") {
        auto open = killed_in_step_two();
        txn::InterruptedError interrupted(open, "/v/.stackup/env-1");
        CHECK(message_of(interrupted) == describe_interrupted(open, "/v/.stackup/env-1"));
        CHECK(error_json(interrupted)["message"] == describe_interrupted(open, "/v/.stackup/env-1"));
        CHECK(error_json(interrupted)["code"] == "interrupted");

        venv::ProcessScan scan;
        scan.using_venv.push_back({4243, "python -m sglang", "ml", "", "sglang.service", "executable", "/v/env/bin/python"});
        txn::RunningError running("not switched", scan,
                                  {txn::NextCommand::Verb::rollback, "/v/env", "/v/.stackup/e", {"--to", "2"}});
        auto message = message_of(running);
        CHECK(message.rfind("not switched: 1 process(es) use /v/env:", 0) == 0);
        CHECK(message.find("systemctl stop sglang.service && stackup rollback --venv /v/env --to 2 --wait-running 60") !=
              std::string::npos);
        CHECK(message.find("else stop them and run: stackup rollback --venv /v/env --to 2") != std::string::npos);
        CHECK(error_json(running)["message"] == message);

        txn::AdvisedError advised(ExitCode::usage, "no generation or snapshot '9' in /s", txn::Advice::no_such_generation,
                                  "; nothing was touched");
        CHECK(message_of(advised) == "no generation or snapshot '9' in /s (`stackup history` shows them); nothing was touched");
        CHECK(error_json(advised)["message"] == message_of(advised));
        CHECK(error_json(advised)["code"] == "usage");
        CHECK(message_of(txn::AdvisedError(ExitCode::usage, "nothing is staged for /v", txn::Advice::nothing_staged)) ==
              "nothing is staged for /v; `stackup apply --stage MANIFEST` builds the next generation");

        Error plain(ExitCode::usage, SourceLocation{"m.yaml", 3, 5}, "bad");
        CHECK(message_of(plain) == "m.yaml:3:5: bad");
    }
}

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "temp_dir.hpp"
#include "txn/journal.hpp"

namespace fs = std::filesystem;
using namespace stackup::txn;
using stackup::Error;
using stackup::ExitCode;

namespace {

Record step_running(std::size_t n, const std::string& name) {
    Record r;
    r.kind = RecordKind::step_running;
    r.step = n;
    r.name = name;
    return r;
}

Record taken(const std::string& id) {
    Record r;
    r.kind = RecordKind::snapshot_taken;
    r.snapshot_id = id;
    return r;
}

Record of_kind(RecordKind kind, std::size_t n = 0) {
    Record r;
    r.kind = kind;
    r.step = n;
    return r;
}

// A journal as a run killed after `step_running 2` leaves it.
Journal killed_in_step_two(const fs::path& state) {
    auto j = Journal::begin(state, "/m/upgrade.yaml", "/v/env");
    j.append(taken("20261202T160501Z-3fa9"));
    j.append(step_running(1, "torch"));
    j.append(of_kind(RecordKind::step_verified, 1));
    j.append(step_running(2, "sgl-kernel"));
    return j;
}

}  // namespace

TEST_SUITE("txn") {
    TEST_CASE("journal records round-trip, the first one carrying the version") {
        stackup::testing::TempDir dir;
        { auto j = killed_in_step_two(dir.path()); }
        auto text = stackup::base::read_file(journal_path(dir.path()));
        CHECK(text.find("\"version\":1") < text.find('\n'));
        auto records = parse_journal(text, "journal");
        REQUIRE(records.size() == 5);
        CHECK(records[0].kind == RecordKind::started);
        CHECK(records[0].manifest == "/m/upgrade.yaml");
        CHECK(records[0].venv == "/v/env");
        CHECK(records[0].pid > 0);
        CHECK_FALSE(records[0].time.empty());
        CHECK(records[1].snapshot_id == "20261202T160501Z-3fa9");
        CHECK(records[4].step == 2);
        CHECK(records[4].name == "sgl-kernel");
        Record back = records[3];
        CHECK(parse_journal(record_to_line(records[0], true) + record_to_line(back, false), "j")[1] == back);
    }

    TEST_CASE("an interrupted run is found, with its step and snapshot") {
        stackup::testing::TempDir dir;
        CHECK_FALSE(open_transaction(dir.path()));
        { auto j = killed_in_step_two(dir.path()); }
        auto open = open_transaction(dir.path());
        REQUIRE(open);
        CHECK(open->manifest == "/m/upgrade.yaml");
        CHECK(open->snapshot_id == "20261202T160501Z-3fa9");
        CHECK(open->step == 2);
        CHECK(open->step_name == "sgl-kernel");
        CHECK_FALSE(open->step_verified);
        CHECK(open->touched());
        CHECK(open->where() == "step 2 (sgl-kernel) running");
        auto message = describe_interrupted(*open, dir.path());
        CHECK(message.find("stackup rollback") != std::string::npos);
        CHECK(message.find("20261202T160501Z-3fa9") != std::string::npos);
        CHECK(message.find(std::to_string(open->pid)) != std::string::npos);
    }

    TEST_CASE("a torn last line is dropped; a bad line before it is an error") {
        std::string good = record_to_line(Record{}, true) + record_to_line(taken("s1"), false);
        auto torn = good + R"({"record":"step_run)";
        CHECK(parse_journal(torn, "j").size() == 2);
        CHECK(parse_journal(good + "{\"record\":\n", "j").size() == 2);
        CHECK_THROWS_AS(parse_journal(good + "garbage\n" + record_to_line(taken("s2"), false), "j"),
                        std::runtime_error);
        CHECK_THROWS_AS(parse_journal(record_to_line(Record{}, false), "j"), std::runtime_error);
        // A step number too big for 64 bits (JSON reads it as a float: casting it was undefined) or
        // an unknown record kind, before the last line: the journal is unreadable, naming the line.
        auto huge = R"({"record": "step_running", "n": 100000000000000000000000000000000})" "\n";
        CHECK_THROWS_WITH_AS(parse_journal(good + huge + record_to_line(taken("s2"), false), "j"),
                             doctest::Contains("j line 3"), std::runtime_error);
        CHECK_THROWS_WITH_AS(parse_journal(good + "{\"record\": \"nonsense\"}\n" + record_to_line(taken("s2"), false), "j"),
                             doctest::Contains("j line 3"), std::runtime_error);
        CHECK(parse_journal(good + huge, "j").size() == 2);  // as the last line: torn
        auto open = open_transaction_of(parse_journal(torn, "j"));
        REQUIRE(open);
        CHECK(open->last == RecordKind::snapshot_taken);
    }

    TEST_CASE("reopening a torn journal cuts the torn line before appending") {
        stackup::testing::TempDir dir;
        { auto j = killed_in_step_two(dir.path()); }
        {
            std::ofstream out(journal_path(dir.path()), std::ios::app);
            out << R"({"record":"step_verif)";
        }
        Record failed = of_kind(RecordKind::rollback_failed);
        failed.why = "disk full";
        Journal::reopen(dir.path()).append(failed);
        auto open = open_transaction(dir.path());
        REQUIRE(open);
        CHECK(open->last == RecordKind::rollback_failed);
        CHECK(open->why == "disk full");
        CHECK(open->snapshot_id == "20261202T160501Z-3fa9");
    }

    TEST_CASE("terminal records end the transaction; rollback_failed does not") {
        std::string head = record_to_line(Record{}, true) + record_to_line(taken("s1"), false);
        for (auto kind : {RecordKind::committed, RecordKind::rolled_back}) {
            CHECK(is_terminal(kind));
            CHECK_FALSE(open_transaction_of(parse_journal(head + record_to_line(of_kind(kind), false), "j")));
        }
        for (auto kind : {RecordKind::started, RecordKind::snapshot_taken, RecordKind::step_running,
                          RecordKind::step_verified, RecordKind::rolling_back, RecordKind::rollback_failed}) {
            CHECK_FALSE(is_terminal(kind));
            CHECK(record_kind_from_string(to_string(kind)) == kind);
        }
        auto failed = open_transaction_of(parse_journal(head + record_to_line(of_kind(RecordKind::rollback_failed), false), "j"));
        REQUIRE(failed);
        CHECK(failed->where() == "rollback failed");
    }

    TEST_CASE("a run that died before its snapshot touched nothing") {
        auto open = open_transaction_of(parse_journal(record_to_line(Record{}, true), "j"));
        REQUIRE(open);
        CHECK_FALSE(open->touched());
        CHECK(describe_interrupted(*open, "/s").find("not touched") != std::string::npos);
    }

    TEST_CASE("close writes last-apply.json and removes the journal") {
        stackup::testing::TempDir dir;
        auto j = killed_in_step_two(dir.path());
        j.append(of_kind(RecordKind::step_verified, 2));
        j.close(RecordKind::committed, "");
        CHECK_FALSE(fs::exists(journal_path(dir.path())));
        CHECK_FALSE(open_transaction(dir.path()));
        auto last = last_apply(dir.path());
        REQUIRE(last);
        CHECK(last->result == "committed");
        CHECK(last->manifest == "/m/upgrade.yaml");
        CHECK(last->snapshot_id == "20261202T160501Z-3fa9");
        CHECK_FALSE(last->when.empty());

        auto k = Journal::begin(dir.path(), "/m/other.yaml", "/v/env");
        k.discard();
        CHECK_FALSE(fs::exists(journal_path(dir.path())));
        CHECK(last_apply(dir.path())->manifest == "/m/upgrade.yaml");
        CHECK(last_apply(dir.path())->command == "apply");
    }

    TEST_CASE("a rollback is recorded as the last transaction; a file without `command` was an apply") {
        stackup::testing::TempDir dir;
        LastApply rollback{"2026-12-03T18:00:00Z", "/m/upgrade.yaml", "rolled back", "stackup rollback: restored",
                           "20261202T160501Z-3fa9", "rollback"};
        record_last(dir.path(), rollback);
        CHECK(last_apply(dir.path()) == rollback);
        stackup::base::write_file_atomic(last_apply_path(dir.path()),
                                         R"({"version": 1, "when": "w", "manifest": "m", "result": "committed",)"
                                         R"( "detail": "", "snapshot_id": "s"})");
        CHECK(last_apply(dir.path())->command == "apply");
    }

    TEST_CASE("an unreadable journal is reported as interrupted, never as none") {
        stackup::testing::TempDir dir;
        dir.write("journal", "not json\n{}\n");
        try {
            (void)open_transaction(dir.path());
            FAIL("no error");
        } catch (const Error& e) {
            CHECK(e.code() == ExitCode::interrupted);
        }
    }

    TEST_CASE("a blue/green run is touched only once it reached its switch, whose record names both roots") {
        stackup::testing::TempDir dir;
        auto j = Journal::begin(dir.path(), "/m/upgrade.yaml", "/v/env", "blue-green");
        j.append(taken("20261202T160501Z-3fa9"));
        j.append(step_running(1, "torch"));
        auto open = open_transaction(dir.path());
        REQUIRE(open);
        CHECK(open->blue_green);
        CHECK_FALSE(open->touched());
        CHECK(recovery_hint(*open, dir.path()).find("nothing was changed in /v/env") != std::string::npos);
        Record switching;
        switching.kind = RecordKind::switching;
        switching.generation = "20261202T160502Z-0001";
        switching.clone_inode = 42;
        switching.live_inode = 7;
        j.append(switching);
        auto records = parse_journal(stackup::base::read_file(journal_path(dir.path())), "journal");
        CHECK(records.back().clone_inode == 42);
        CHECK(records.back().live_inode == 7);
        CHECK(records.back().generation == "20261202T160502Z-0001");
        CHECK(records.front().mode == "blue-green");
        open = open_transaction(dir.path());
        REQUIRE(open);
        CHECK(open->touched());
        CHECK(open->switching);
        CHECK(open->clone_inode == 42);
        CHECK(open->where() == "switching the verified generation in");
        j.close(RecordKind::discarded, "a check failed");
        CHECK_FALSE(open_transaction(dir.path()));
        CHECK(last_apply(dir.path())->result == "failed, nothing changed");
    }

    TEST_CASE("a journal written before modes were recorded is an in-place run") {
        stackup::testing::TempDir dir;
        dir.write("journal", R"({"record":"started","time":"t","manifest":"m","venv":"v","pid":1,"host":"h","version":1})"
                             "\n" R"({"record":"snapshot_taken","time":"t","id":"s"})" "\n");
        auto open = open_transaction(dir.path());
        REQUIRE(open);
        CHECK_FALSE(open->blue_green);
        CHECK(open->touched());
    }

    TEST_CASE("a staged generation is recorded whole and read back") {
        stackup::testing::TempDir dir;
        CHECK_FALSE(staged_generation(dir.path()));
        StagedGeneration staged{"20261202T160502Z-0001", "20261202T160501Z-3fa9", "/m/upgrade.yaml", "2026-12-02T16:05:02Z"};
        record_staged(dir.path(), staged);
        CHECK(staged_generation(dir.path()) == staged);
        clear_staged(dir.path());
        CHECK_FALSE(staged_generation(dir.path()));
    }
}

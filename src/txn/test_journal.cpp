#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "temp_dir.hpp"
#include "txn/journal.hpp"
#include "txn/recover.hpp"

namespace fs = std::filesystem;
using namespace stackup::txn;
using namespace stackup::txn::record;
using stackup::Error;
using stackup::ExitCode;

namespace {

Record started() { return Record{Started{"/m/upgrade.yaml", "/v/env", 42, "gpu-07", "in-place"}, "t0"}; }

std::string line(RecordData data) { return record_to_line(Record{std::move(data), "t"}, false); }

// A journal as a run killed after `step_running 2` leaves it.
Journal killed_in_step_two(const fs::path& state) {
    auto j = Journal::begin(state, "/m/upgrade.yaml", "/v/env");
    j.append(SnapshotTaken{"20261202T160501Z-3fa9"});
    j.append(StepRunning{1, "torch"});
    j.append(StepVerified{1});
    j.append(StepRunning{2, "sgl-kernel"});
    return j;
}

// `text` as the journal's second line, after a good first one, and a good third after it.
std::string between_good_lines(const std::string& text) {
    return record_to_line(started(), true) + text + "\n" + line(SnapshotTaken{"s2"});
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
        REQUIRE(kind_of(records[0].data) == RecordKind::started);
        const auto& first = std::get<Started>(records[0].data);
        CHECK(first.manifest == "/m/upgrade.yaml");
        CHECK(first.venv == "/v/env");
        CHECK(first.pid > 0);
        CHECK(first.mode == "in-place");
        CHECK_FALSE(records[0].time.empty());
        CHECK(std::get<SnapshotTaken>(records[1].data).id == "20261202T160501Z-3fa9");
        CHECK(std::get<StepRunning>(records[4].data) == StepRunning{2, "sgl-kernel"});
        Record back = records[3];
        CHECK(parse_journal(record_to_line(records[0], true) + record_to_line(back, false), "j")[1] == back);
    }

    TEST_CASE("every record kind round-trips with exactly its fields") {
        const std::vector<RecordData> all{
            Started{"/m.yaml", "/v", 7, "h", "blue-green"}, SnapshotTaken{"s1"}, StepRunning{3, "torch"},
            StepVerified{3}, RollingBack{"a check failed"}, Committed{}, RolledBack{"why"},
            RollbackFailed{"disk full"}, Switching{"g-2", 18446744073709551615ULL, 7}, Discarded{"no"},
            Staged{"staged"}};
        REQUIRE(all.size() == std::variant_size_v<RecordData>);
        for (std::size_t i = 0; i < all.size(); ++i) {
            CAPTURE(i);
            REQUIRE(all[i].index() == i);  // one of each, in RecordKind's order
            Record r{all[i], "2026-12-04T10:00:00Z"};
            auto text = record_to_line(started(), true) + record_to_line(r, false);
            auto back = parse_journal(text, "j");
            REQUIRE(back.size() == 2);
            CHECK(back[1] == r);
            CHECK(text.find("\"record\":\"" + std::string(to_string(kind_of(all[i]))) + "\"") != std::string::npos);
        }
        // Each kind writes its own fields and no other kind's.
        CHECK(line(Committed{}) == R"({"record":"committed","time":"t"})" "\n");
        CHECK(line(StepVerified{2}) == R"({"n":2,"record":"step_verified","time":"t"})" "\n");
        CHECK(line(SnapshotTaken{"s"}) == R"({"id":"s","record":"snapshot_taken","time":"t"})" "\n");
    }

    TEST_CASE("a record of an unknown kind, or with a field missing or mistyped, is a clear error") {
        CHECK_THROWS_WITH_AS(parse_journal(between_good_lines(R"({"record": "nonsense"})"), "j"),
                             "cannot read journal j line 2: unknown record 'nonsense'", std::runtime_error);
        CHECK_THROWS_WITH_AS(parse_journal(between_good_lines(R"({"record": "snapshot_taken"})"), "j"),
                             "cannot read journal j line 2: a snapshot_taken record: 'id' is missing",
                             std::runtime_error);
        CHECK_THROWS_WITH_AS(parse_journal(between_good_lines(R"({"record": "step_running", "n": 1})"), "j"),
                             doctest::Contains("a step_running record: 'name' is missing"), std::runtime_error);
        CHECK_THROWS_WITH_AS(parse_journal(between_good_lines(R"({"record": "step_verified", "n": "one"})"), "j"),
                             doctest::Contains("a step_verified record: 'n' is \"one\", not a whole number"),
                             std::runtime_error);
        CHECK_THROWS_WITH_AS(parse_journal(between_good_lines(R"({"record": "switching", "generation": "g", "clone": 1})"), "j"),
                             doctest::Contains("a switching record: 'live' is missing"), std::runtime_error);
        CHECK_THROWS_WITH_AS(parse_journal(between_good_lines(R"({"record": "rolling_back", "why": 3})"), "j"),
                             doctest::Contains("a rolling_back record: 'why' is 3, not a string"), std::runtime_error);
        CHECK_THROWS_WITH_AS(parse_journal(between_good_lines(R"({"time": "t"})"), "j"),
                             doctest::Contains("line 2: 'record' is missing"), std::runtime_error);
        CHECK_THROWS_WITH_AS(parse_journal(between_good_lines("[1, 2]"), "j"),
                             doctest::Contains("line 2: not a record"), std::runtime_error);
        CHECK_THROWS_WITH_AS(parse_journal(R"({"record": "started", "version": 1, "venv": "v", "pid": 1, "host": "h"})" "\n" +
                                               line(SnapshotTaken{"s"}), "j"),
                             doctest::Contains("a started record: 'manifest' is missing"), std::runtime_error);
        // The same as the last line: a write that was torn, dropped.
        CHECK(parse_journal(record_to_line(started(), true) + R"({"record": "snapshot_taken"})" "\n", "j").size() == 1);
        // What older writers left out: a started record's mode (in place), a time, a terminal record's why.
        auto old = parse_journal(R"({"record": "started", "version": 1, "manifest": "m", "venv": "v", "pid": 1, "host": "h"})"
                                 "\n" R"({"record": "rolled_back"})" "\n", "j");
        REQUIRE(old.size() == 2);
        CHECK(std::get<Started>(old[0].data).mode.empty());
        CHECK(old[1] == Record{RolledBack{""}, ""});
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
        CHECK(open->last == RecordKind::step_running);
        CHECK(open->touched());
        CHECK(open->recovery() == Recovery::restore_snapshot);
        InterruptedError error(*open, dir.path());
        CHECK(error.code() == ExitCode::interrupted);
        CHECK(error.open().pid == open->pid);
        CHECK(std::string(error.what()) == "an interrupted transaction is open in " + journal_path(dir.path()).string());
    }

    TEST_CASE("a torn last line is dropped; a bad line before it is an error") {
        std::string good = record_to_line(Record{}, true) + line(SnapshotTaken{"s1"});
        auto torn = good + R"({"record":"step_run)";
        CHECK(parse_journal(torn, "j").size() == 2);
        CHECK(parse_journal(good + "{\"record\":\n", "j").size() == 2);
        CHECK_THROWS_AS(parse_journal(good + "garbage\n" + line(SnapshotTaken{"s2"}), "j"), std::runtime_error);
        CHECK_THROWS_AS(parse_journal(record_to_line(Record{}, false), "j"), std::runtime_error);
        // A step number too big for 64 bits (JSON reads it as a float: casting it was undefined) or
        // an unknown record kind, before the last line: the journal is unreadable, naming the line.
        auto huge = R"({"record": "step_running", "n": 100000000000000000000000000000000, "name": "x"})" "\n";
        CHECK_THROWS_WITH_AS(parse_journal(good + huge + line(SnapshotTaken{"s2"}), "j"),
                             doctest::Contains("j line 3"), std::runtime_error);
        CHECK_THROWS_WITH_AS(parse_journal(good + "{\"record\": \"nonsense\"}\n" + line(SnapshotTaken{"s2"}), "j"),
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
        Journal::reopen(dir.path()).append(RollbackFailed{"disk full"});
        auto open = open_transaction(dir.path());
        REQUIRE(open);
        CHECK(open->last == RecordKind::rollback_failed);
        CHECK(open->why == "disk full");
        CHECK(open->snapshot_id == "20261202T160501Z-3fa9");
        CHECK(open->recovery() == Recovery::restore_snapshot);
    }

    TEST_CASE("terminal records end the transaction; rollback_failed does not") {
        std::string head = record_to_line(Record{}, true) + line(SnapshotTaken{"s1"});
        for (RecordData ending : {RecordData{Committed{}}, RecordData{RolledBack{}}, RecordData{Discarded{}},
                                  RecordData{Staged{}}}) {
            CHECK(is_terminal(kind_of(ending)));
            CHECK_FALSE(open_transaction_of(parse_journal(head + line(ending), "j")));
        }
        for (RecordData going : {RecordData{Started{}}, RecordData{SnapshotTaken{}}, RecordData{StepRunning{}},
                                 RecordData{StepVerified{}}, RecordData{RollingBack{}}, RecordData{RollbackFailed{}},
                                 RecordData{Switching{}}}) {
            CHECK_FALSE(is_terminal(kind_of(going)));
        }
        auto failed = open_transaction_of(parse_journal(head + line(RollbackFailed{"disk full"}), "j"));
        REQUIRE(failed);
        CHECK(failed->last == RecordKind::rollback_failed);
        CHECK(failed->why == "disk full");
    }

    TEST_CASE("a run that died before its snapshot touched nothing") {
        auto open = open_transaction_of(parse_journal(record_to_line(Record{}, true), "j"));
        REQUIRE(open);
        CHECK_FALSE(open->touched());
        CHECK(open->recovery() == Recovery::close_untouched);
    }

    TEST_CASE("close writes last-transaction.json and removes the journal") {
        stackup::testing::TempDir dir;
        auto j = killed_in_step_two(dir.path());
        j.append(StepVerified{2});
        j.close(Ending::committed, "");
        CHECK_FALSE(fs::exists(journal_path(dir.path())));
        CHECK_FALSE(open_transaction(dir.path()));
        CHECK(last_transaction_path(dir.path()) == dir.path() / "last-transaction.json");
        CHECK(fs::exists(dir.path() / "last-transaction.json"));
        CHECK_FALSE(fs::exists(dir.path() / "last-apply.json"));
        auto last = last_transaction(dir.path());
        REQUIRE(last);
        CHECK(last->result == "committed");
        CHECK(last->manifest == "/m/upgrade.yaml");
        CHECK(last->snapshot_id == "20261202T160501Z-3fa9");
        CHECK_FALSE(last->when.empty());

        auto k = Journal::begin(dir.path(), "/m/other.yaml", "/v/env");
        k.discard();
        CHECK_FALSE(fs::exists(journal_path(dir.path())));
        CHECK(last_transaction(dir.path())->manifest == "/m/upgrade.yaml");
        CHECK(last_transaction(dir.path())->command == "apply");
    }

    TEST_CASE("a rollback is recorded as the last transaction; a file without `command` was an apply") {
        stackup::testing::TempDir dir;
        LastTransaction rollback{"2026-12-03T18:00:00Z", "/m/upgrade.yaml", "rolled back", "stackup rollback: restored",
                                 "20261202T160501Z-3fa9", "rollback"};
        record_last(dir.path(), rollback);
        CHECK(last_transaction(dir.path()) == rollback);
        stackup::base::write_file_atomic(last_transaction_path(dir.path()),
                                         R"({"version": 1, "when": "w", "manifest": "m", "result": "committed",)"
                                         R"( "detail": "", "snapshot_id": "s"})");
        CHECK(last_transaction(dir.path())->command == "apply");
        stackup::base::write_file_atomic(last_transaction_path(dir.path()), R"({"version": 2})");
        CHECK_THROWS_WITH_AS((void)last_transaction(dir.path()), doctest::Contains("last-transaction.json: version 2"),
                             std::runtime_error);
    }

    TEST_CASE("the last-apply.json an earlier release wrote is read until the first new record replaces it") {
        stackup::testing::TempDir dir;
        dir.write("last-apply.json", R"({"version": 1, "when": "w", "manifest": "/m/old.yaml", "result": "rolled back",)"
                                     R"( "detail": "d", "snapshot_id": "s0"})");
        auto old = last_transaction(dir.path());
        REQUIRE(old);
        CHECK(*old == LastTransaction{"w", "/m/old.yaml", "rolled back", "d", "s0", "apply"});
        dir.write("last-apply.json", "not json");
        CHECK_THROWS_WITH_AS((void)last_transaction(dir.path()), doctest::Contains("last-apply.json"), std::runtime_error);
        LastTransaction now{"w2", "/m/new.yaml", "committed", "", "s1", "apply"};
        record_last(dir.path(), now);
        CHECK(last_transaction(dir.path()) == now);
        CHECK_FALSE(fs::exists(dir.path() / "last-apply.json"));  // written only under the new name
        CHECK(fs::exists(dir.path() / "last-transaction.json"));
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
        j.append(SnapshotTaken{"20261202T160501Z-3fa9"});
        j.append(StepRunning{1, "torch"});
        auto open = open_transaction(dir.path());
        REQUIRE(open);
        CHECK(open->blue_green);
        CHECK_FALSE(open->touched());
        CHECK(open->recovery() == Recovery::before_switch);
        j.append(Switching{"20261202T160502Z-0001", 42, 7});
        auto records = parse_journal(stackup::base::read_file(journal_path(dir.path())), "journal");
        CHECK(std::get<Switching>(records.back().data) == Switching{"20261202T160502Z-0001", 42, 7});
        CHECK(std::get<Started>(records.front().data).mode == "blue-green");
        open = open_transaction(dir.path());
        REQUIRE(open);
        CHECK(open->touched());
        CHECK(open->switching);
        CHECK(open->clone_inode == 42);
        CHECK(open->live_inode == 7);
        CHECK(open->generation == "20261202T160502Z-0001");
        CHECK(open->last == RecordKind::switching);
        CHECK(open->recovery() == Recovery::while_switching);
        j.close(Ending::discarded, "a check failed");
        CHECK_FALSE(open_transaction(dir.path()));
        CHECK(last_transaction(dir.path())->result == "failed, nothing changed");
        CHECK(last_transaction(dir.path())->detail == "a check failed");
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

    TEST_CASE("a staged generation is recorded whole, under the key \"version\", and read back") {
        stackup::testing::TempDir dir;
        CHECK_FALSE(staged_generation(dir.path()));
        StagedGeneration staged{"20261202T160502Z-0001", "20261202T160501Z-3fa9", "/m/upgrade.yaml", "2026-12-02T16:05:02Z"};
        record_staged(dir.path(), staged);
        CHECK(staged_generation(dir.path()) == staged);
        auto text = stackup::base::read_file(staged_path(dir.path()));
        CHECK(text.find("\"version\": 1") != std::string::npos);
        CHECK(text.find("\"format\"") == std::string::npos);
        clear_staged(dir.path());
        CHECK_FALSE(staged_generation(dir.path()));
    }

    TEST_CASE("a staged.json an earlier release wrote, its version keyed \"format\", is read") {
        stackup::testing::TempDir dir;
        dir.write("staged.json", R"({"format": 1, "generation": "g2", "base": "g1", "manifest": "/m.yaml", "created": "c"})");
        CHECK(staged_generation(dir.path()) == StagedGeneration{"g2", "g1", "/m.yaml", "c"});
        dir.write("staged.json", R"({"format": 2, "generation": "g2", "base": "g1"})");
        CHECK_THROWS_WITH_AS((void)staged_generation(dir.path()), doctest::Contains("format 2"), std::runtime_error);
        dir.write("staged.json", R"({"version": 1, "generation": "g2"})");
        CHECK_THROWS_WITH_AS((void)staged_generation(dir.path()), doctest::Contains("'base' is missing"),
                             std::runtime_error);
    }
}

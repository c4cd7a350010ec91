#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/lock.hpp"
#include "base/process.hpp"
#include "base/system.hpp"
#include "temp_dir.hpp"

using stackup::base::FileLock;

TEST_SUITE("base") {
    TEST_CASE("a second holder is refused until the first releases the lock") {
        stackup::testing::TempDir dir;
        auto path = dir / "state/lock";
        {
            auto first = FileLock::try_acquire(path, "apply m.yaml");
            REQUIRE(first);
            CHECK(FileLock::holder(path).find("pid " + std::to_string(::getpid())) != std::string::npos);
            CHECK(FileLock::holder(path).find("apply m.yaml") != std::string::npos);
            // flock is per open file description: another process is refused.
            auto other = stackup::base::run_process(
                {{"/usr/bin/flock", "--nonblock", path.string(), "true"}, {{"PATH", "/usr/bin:/bin"}}, std::nullopt});
            CHECK(other.exit_code == 1);
        }
        auto again = stackup::base::run_process(
            {{"/usr/bin/flock", "--nonblock", path.string(), "true"}, {{"PATH", "/usr/bin:/bin"}}, std::nullopt});
        CHECK(again.ok());
    }
}

TEST_SUITE("base") {
    TEST_CASE("a holder line parses back into pid, host, command and time; a foreign line does not") {
        auto h = stackup::base::parse_holder("pid 4242 on gpu1, running 'apply m, v.yaml' since 2026-12-02T16:05:01Z");
        REQUIRE(h);
        CHECK(h->pid == 4242);
        CHECK(h->host == "gpu1");
        CHECK(h->command == "apply m, v.yaml");
        CHECK(h->since == "2026-12-02T16:05:01Z");
        CHECK_FALSE(stackup::base::parse_holder(""));
        CHECK_FALSE(stackup::base::parse_holder("locked by somebody"));
        // A pid too big for a long (found by fuzz_tool_output: std::stol threw out_of_range).
        CHECK_FALSE(stackup::base::parse_holder("pid 4222222222222222222222222 on h, running 'x' since 0Z"));
    }

    TEST_CASE("liveness: our own pid runs, a reaped child does not, another host is unknown") {
        using stackup::base::Liveness;
        auto self = stackup::base::parse_holder("pid " + std::to_string(::getpid()) + " on " +
                                                stackup::base::host_name() + ", running 'x' since T");
        REQUIRE(self);
        CHECK(stackup::base::liveness_of(*self) == Liveness::running);
        // A child that printed its own pid and was reaped: that pid no longer runs.
        auto child = stackup::base::run_process({{"/bin/sh", "-c", "echo $$"}, {{"PATH", "/usr/bin:/bin"}}, std::nullopt});
        REQUIRE(child.ok());
        auto dead = *self;
        dead.pid = std::stol(child.output);
        CHECK(stackup::base::liveness_of(dead) == Liveness::not_running);
        auto far = *self;
        far.host = "another-host-" + stackup::base::host_name();
        CHECK(stackup::base::liveness_of(far) == Liveness::unknown);
    }

    TEST_CASE("probe reads the lock without taking it; a normal release empties the holder line") {
        stackup::testing::TempDir dir;
        auto path = dir / "state/lock";
        CHECK(FileLock::probe(path) == stackup::base::LockProbe::absent);
        CHECK_FALSE(std::filesystem::exists(dir / "state"));
        {
            auto lock = FileLock::try_acquire(path, "apply m.yaml");
            REQUIRE(lock);
            CHECK_FALSE(lock->stale_holder());
            // The probe is another open file description: it sees the flock.
            CHECK(FileLock::probe(path) == stackup::base::LockProbe::held);
        }
        CHECK(FileLock::probe(path) == stackup::base::LockProbe::free);
        CHECK(FileLock::holder(path).empty());
    }

    TEST_CASE("a holder line left by a run that never released the lock is reported when taken over") {
        stackup::testing::TempDir dir;
        auto path = dir / "lock";
        const std::string line = "pid 999999 on " + stackup::base::host_name() + ", running 'apply m.yaml' since T0";
        {
            std::ofstream(path) << line << "\n";
        }
        auto lock = FileLock::try_acquire(path, "apply n.yaml");
        REQUIRE(lock);
        REQUIRE(lock->stale_holder());
        CHECK(lock->stale_holder()->pid == 999999);
        CHECK(lock->stale_holder()->line == line);
        CHECK(FileLock::holder(path).find("apply n.yaml") != std::string::npos);
    }
}

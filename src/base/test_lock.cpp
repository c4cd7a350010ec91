#include <doctest/doctest.h>

#include <unistd.h>

#include <string>

#include "base/lock.hpp"
#include "base/process.hpp"
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

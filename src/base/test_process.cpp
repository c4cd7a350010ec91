#include <doctest/doctest.h>

#include <signal.h>

#include <vector>

#include "base/process.hpp"
#include "temp_dir.hpp"

using stackup::base::ProcessSpec;
using stackup::base::run_process;

namespace {
ProcessSpec sh(const std::string& script) {
    // The test's own child is a shell; stackup itself never runs one.
    return ProcessSpec{{"/bin/sh", "-c", script}, {{"PATH", "/usr/bin:/bin"}}, std::nullopt};
}
}  // namespace

TEST_SUITE("base") {
    TEST_CASE("stdout and stderr arrive merged, line by line, in order") {
        std::vector<std::string> lines;
        auto r = run_process(sh("echo one; echo two >&2; echo three"),
                             [&](std::string_view l) { lines.emplace_back(l); });
        CHECK(r.ok());
        CHECK(lines == std::vector<std::string>{"one", "two", "three"});
        CHECK(r.output == "one\ntwo\nthree\n");
    }

    TEST_CASE("exit status and signal are reported apart") {
        auto failed = run_process(sh("exit 3"));
        REQUIRE(failed.exit_code);
        CHECK(*failed.exit_code == 3);
        CHECK_FALSE(failed.signal);
        CHECK(failed.describe() == "exit status 3");

        auto killed = run_process(sh("kill -9 $$"));
        CHECK_FALSE(killed.exit_code);
        REQUIRE(killed.signal);
        CHECK(*killed.signal == SIGKILL);
        CHECK_FALSE(killed.ok());
    }

    TEST_CASE("the child gets exactly the given environment and no stdin") {
        ProcessSpec spec = sh("echo \"[$ONLY]\" \"[$HOME]\"; cat; echo done");
        spec.env["ONLY"] = "this";
        auto r = run_process(spec);
        CHECK(r.output == "[this] []\ndone\n");
    }

    TEST_CASE("the child runs in its own process group") {
        auto r = run_process(sh("ps -o pgid= -p $$; ps -o pid= -p $$"));
        REQUIRE(r.ok());
        std::istringstream in(r.output);
        long pgid = 0, pid = 0;
        in >> pgid >> pid;
        CHECK(pgid == pid);
    }

    TEST_CASE("a missing program is a start error, not a crash") {
        auto r = run_process(ProcessSpec{{"no-such-program-xyz"}, {{"PATH", "/usr/bin"}}, std::nullopt});
        CHECK_FALSE(r.ok());
        CHECK(r.describe().find("not found") != std::string::npos);
    }

    TEST_CASE("cwd is honoured") {
        stackup::testing::TempDir dir;
        ProcessSpec spec = sh("pwd");
        spec.cwd = dir.path();
        auto r = run_process(spec);
        CHECK(r.output == dir.path().string() + "\n");
    }
}

#include <fcntl.h>
#include <unistd.h>

TEST_SUITE("base") {
    TEST_CASE("our fds, even without O_CLOEXEC, stay out of the child") {
        int fd = ::open("/dev/null", O_RDONLY);  // deliberately inheritable
        REQUIRE(fd > 2);
        auto r = run_process(sh("test -e /proc/self/fd/" + std::to_string(fd) + " && echo leaked || echo closed"));
        ::close(fd);
        CHECK(r.output == "closed\n");
    }
}

TEST_SUITE("base") {
    TEST_CASE("an ignored SIGPIPE of ours is not passed on to the child") {
        auto saved = ::signal(SIGPIPE, SIG_IGN);
        auto r = run_process(sh("grep '^SigIgn' /proc/self/status"));
        ::signal(SIGPIPE, saved);
        REQUIRE(r.ok());
        // SigIgn is a hex mask; SIGPIPE (13) is bit 12.
        auto mask = std::stoull(r.output.substr(r.output.find(':') + 1), nullptr, 16);
        CHECK((mask & (1ull << (SIGPIPE - 1))) == 0);
    }
}

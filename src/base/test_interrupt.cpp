#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <doctest/doctest.h>

#include "base/interrupt.hpp"
#include "base/process.hpp"

namespace interrupts = stackup::base::interrupts;

TEST_SUITE("base") {
    TEST_CASE("interrupts: the first signal is kept, later ones are counted, none ends a Deferred scope") {
        interrupts::catch_signals();
        interrupts::reset_for_tests();
        interrupts::Deferred deferred;
        const int before = interrupts::caught();
        CHECK(interrupts::received() == 0);
        ::raise(SIGTERM);
        CHECK(interrupts::received() == SIGTERM);
        ::raise(SIGINT);  // the second: said on stderr and ignored
        CHECK(interrupts::received() == SIGTERM);
        CHECK(interrupts::caught() == before + 2);
        CHECK(std::string(interrupts::name(SIGINT)) == "SIGINT");
        CHECK(std::string(interrupts::name(SIGHUP)) == "SIGHUP");
        CHECK(interrupts::exit_status(SIGINT) == 130);
        interrupts::reset_for_tests();
        CHECK(interrupts::received() == 0);
    }

    TEST_CASE("interrupts: wait_for_signal misses no signal sent once it is ready") {
        interrupts::catch_signals();
        interrupts::reset_for_tests();
        interrupts::Deferred deferred;
        interrupts::wait_for_signal([] { ::raise(SIGHUP); });  // held back until the wait: never lost
        CHECK(interrupts::received() == SIGHUP);
        interrupts::reset_for_tests();
    }

    TEST_CASE("interrupts: the running child's group gets the first signal") {
        interrupts::catch_signals();
        interrupts::reset_for_tests();
        interrupts::Deferred deferred;
        std::thread sender([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            ::kill(::getpid(), SIGINT);
        });
        auto r = stackup::base::run_process({{"/bin/sleep", "30"}, stackup::base::current_environment(), std::nullopt});
        sender.join();
        CHECK(interrupts::received() == SIGINT);
        REQUIRE(r.signal.has_value());
        CHECK(*r.signal == SIGINT);
        interrupts::reset_for_tests();
    }
}

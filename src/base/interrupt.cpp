#include "base/interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace stackup::base::interrupts {
namespace {

std::atomic<int> g_signal{0};
std::atomic<int> g_caught{0};
std::atomic<int> g_child_group{0};
std::atomic<int> g_deferred{0};

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Only async-signal-safe calls: write, kill, _exit.
void say(const char* first, const char* second, const char* third) {
    for (const char* part : {first, second, third}) {
        ssize_t ignored = ::write(STDERR_FILENO, part, std::strlen(part));
        (void)ignored;
    }
}

extern "C" void on_signal(int sig) {
    ++g_caught;
    int expected = 0;
    const bool first = g_signal.compare_exchange_strong(expected, sig);
    if (!first) {
        if (g_deferred.load() > 0) {
            say("\nstackup: ", name(sig), " again: ignored while stackup cleans up (it exits by itself)\n");
        }
        return;
    }
    if (int group = g_child_group.load(); group > 0) {
        ::kill(-group, sig);
    }
    if (g_deferred.load() == 0) {
        say("\nstackup: interrupted by ", name(sig), "\n");
        ::_exit(exit_status(sig));
    }
    say("\nstackup: ", name(sig), ": stopping at the next safe point, then saying what became of the venv\n");
}

}  // namespace

void catch_signals() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : kSignals) {
        ::sigaction(sig, &sa, nullptr);
    }
}

int received() {
    return g_signal.load();
}

const char* name(int signal) {
    switch (signal) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        default: return "a signal";
    }
}

int caught() {
    return g_caught.load();
}

void wait_for_signal(const std::function<void()>& ready) {
    catch_signals();
    sigset_t blocked;
    sigset_t old;
    sigemptyset(&blocked);
    for (int sig : kSignals) {
        sigaddset(&blocked, sig);
    }
    ::sigprocmask(SIG_BLOCK, &blocked, &old);  // none slips in between the test and the wait
    const int seen = g_caught.load();
    ready();
    while (g_caught.load() == seen) {
        ::sigsuspend(&old);
    }
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

void set_child_group(int pgid) {
    g_child_group = pgid;
}

Deferred::Deferred() {
    ++g_deferred;
}

Deferred::~Deferred() {
    --g_deferred;
}

void reset_for_tests() {
    g_signal = 0;
}

}  // namespace stackup::base::interrupts

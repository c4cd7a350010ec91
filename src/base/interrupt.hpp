#pragma once
// SIGINT, SIGTERM and SIGHUP, caught once for the whole process.
//
// The first one is recorded and forwarded to the running child's process group (uv, the
// probe: each runs in its own group, base/process.cpp), so the child stops and the caller
// finds it stopped. What happens to stackup itself depends on the scope:
//  - outside a Deferred scope (plan, verify, inspect, status ...: nothing to clean up): it
//    says `stackup: interrupted by SIGINT` and exits 128+N at once;
//  - inside one (apply, switch, rollback): the transaction goes on to its next check point
//    (interrupted() != 0), discards the clone or restores the snapshot, writes its journal
//    and exits 128+N. A signal that comes while it does is ignored, with a line saying so.

#include <functional>

namespace stackup::base::interrupts {

// Installs the handlers (again, where something replaced them). The CLI calls it first;
// running a child calls it too.
void catch_signals();

// The first signal caught (SIGINT, ...), 0 when none was.
[[nodiscard]] int received();

// How many signals were caught so far (the first and every ignored one).
[[nodiscard]] int caught();

// Blocks until a signal is caught after `ready` ran (it runs with the signals held back,
// so one sent once it has run is never missed). The test failpoints wait so.
void wait_for_signal(const std::function<void()>& ready);

// "SIGINT", "SIGTERM", "SIGHUP", else "signal N".
[[nodiscard]] const char* name(int signal);

// The exit status of a run stopped by `signal`: 128 + N, as a shell reports it.
[[nodiscard]] inline int exit_status(int signal) { return 128 + signal; }

// The running child's process group, which receives the first signal (0: none).
void set_child_group(int pgid);

// While one lives, a signal does not end the process: the transaction checks received().
class Deferred {
public:
    Deferred();
    ~Deferred();
    Deferred(const Deferred&) = delete;
    Deferred& operator=(const Deferred&) = delete;
};

// For tests: forget a caught signal.
void reset_for_tests();

}  // namespace stackup::base::interrupts

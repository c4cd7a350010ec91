#include "txn/status.hpp"

#include "base/lock.hpp"
#include "txn/lock.hpp"
#include "txn/recover.hpp"
#include "txn/snapshots.hpp"

namespace stackup::txn {
namespace {

LockStatus status_of(base::LockProbe probe, const std::string& line) {
    auto holder = base::parse_holder(line);
    bool dead = holder && base::liveness_of(*holder) == base::Liveness::not_running;
    switch (probe) {
        case base::LockProbe::absent: return LockStatus::never_taken;
        case base::LockProbe::free: return line.empty() ? LockStatus::free : LockStatus::stale;
        case base::LockProbe::held: return dead ? LockStatus::orphaned : LockStatus::held;
    }
    return LockStatus::held;
}

LockState probe_lock(const std::filesystem::path& state_dir) {
    LockState lock;
    lock.path = state_dir / "lock";
    auto probe = base::FileLock::probe(lock.path);  // never creates the state dir just to look
    lock.holder = probe == base::LockProbe::absent ? std::string() : base::FileLock::holder(lock.path);
    lock.state = status_of(probe, lock.holder);
    lock.holder_description = describe_holder(lock.holder);
    if (lock.state == LockStatus::orphaned) {
        lock.holding_pids = base::FileLock::processes_with_open(lock.path);
    }
    return lock;
}

}  // namespace

StatusReport status(const Options& options) {
    StatusReport report;
    report.lock = probe_lock(options.state_dir);
    report.open = open_transaction(options.state_dir);
    report.last = last_transaction(options.state_dir);
    report.snapshots = list_snapshots(options);
    snapshot::Store store(options.state_dir);
    report.usage = store.usage();
    if (report.interrupted() && report.open->blue_green) {
        report.venv_state = blue_green_state(*report.open, options.venv);
    }
    try {
        report.live = store.live(options.venv);
        report.staged = staged_generation(options.state_dir);
    } catch (const std::exception&) {  // status reports what it can read
    }
    auto in_use = code_in_use(options.venv, options.state_dir);  // one walk of /proc for both
    report.running = std::move(in_use.live);
    report.old_code = std::move(in_use.old_code);
    report.old_code_unreadable = in_use.old_code_unreadable;
    return report;
}

}  // namespace stackup::txn

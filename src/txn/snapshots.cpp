#include "txn/snapshots.hpp"

#include "base/error.hpp"
#include "base/lock.hpp"
#include "installer/command.hpp"
#include "txn/common.hpp"
#include "venv/probe.hpp"

namespace stackup::txn {
namespace {

// The snapshot an interrupted run needs, "" for none.
std::string needed_snapshot(const Options& options) {
    auto open = open_transaction(options.state_dir);
    return open ? open->snapshot_id : std::string();
}

snapshot::SnapshotInfo find_own(const snapshot::Store& store, const Options& options, const std::string& id) {
    auto info = store.find(id);
    if (!info || info->venv != options.venv) {
        throw Error(ExitCode::usage, "no snapshot '" + id + "' of " + options.venv.string() + " in " +
                                         store.snapshots_dir().string() + " (see `stackup snapshots list`)");
    }
    return *info;
}

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

snapshot::SnapshotInfo create_snapshot(const Options& options, const manifest::Manifest* m, const std::string& label) {
    auto lock = acquire_lock(options.state_dir, "snapshots create");
    auto env = installer::child_environment(m != nullptr ? *m : manifest::Manifest{}, options.venv, options.caller_env);
    auto facts = venv::probe(options.venv, {}, env);
    snapshot::Store store(options.state_dir);
    std::string manifest = m != nullptr ? m->source.string() : std::string();
    return store.create(options.venv, {label, manifest, distribution_pairs(facts), options.snapshot_strategy});
}

std::vector<snapshot::SnapshotInfo> list_snapshots(const Options& options) {
    snapshot::Store store(options.state_dir);
    std::vector<snapshot::SnapshotInfo> out;
    for (auto& info : store.list()) {
        if (info.venv == options.venv) {
            out.push_back(std::move(info));
        }
    }
    return out;
}

snapshot::SnapshotInfo show_snapshot(const Options& options, const std::string& id) {
    snapshot::Store store(options.state_dir);
    return find_own(store, options, id);
}

void delete_snapshot(const Options& options, const std::string& id) {
    auto lock = acquire_lock(options.state_dir, "snapshots delete " + id);
    snapshot::Store store(options.state_dir);
    auto info = find_own(store, options, id);
    if (info.id == needed_snapshot(options)) {
        throw Error(ExitCode::interrupted, "snapshot " + id +
                                               " is the way back for an interrupted run; not deleting it (run "
                                               "`stackup rollback` first, or `stackup status`)");
    }
    if (!store.remove(info.id)) {
        throw Error(ExitCode::usage, "no snapshot '" + id + "' in " + store.snapshots_dir().string());
    }
}

std::vector<std::string> prune_snapshots(const Options& options, int keep) {
    auto lock = acquire_lock(options.state_dir, "snapshots prune");
    snapshot::Store store(options.state_dir);
    return prune(store, options.state_dir, options.venv, keep, "");
}

StatusReport status(const Options& options) {
    StatusReport report;
    report.lock = probe_lock(options.state_dir);
    report.open = open_transaction(options.state_dir);
    report.last = last_apply(options.state_dir);
    report.snapshots = list_snapshots(options);
    report.usage = snapshot::Store(options.state_dir).usage();
    return report;
}

}  // namespace stackup::txn

#include "txn/rollback.hpp"

#include "base/error.hpp"
#include "base/system.hpp"
#include "txn/journal.hpp"
#include "txn/lock.hpp"

namespace stackup::txn {

namespace {

snapshot::SnapshotInfo find_target(const snapshot::Store& store, const Options& options,
                                   const std::optional<std::string>& id) {
    std::optional<snapshot::SnapshotInfo> target;
    if (id) {
        target = store.find(*id);
        if (!target) {
            // A mistake, not a failed restore: nothing was touched.
            throw Error(ExitCode::usage, "no snapshot '" + *id + "' in " + options.state_dir.string() +
                                             " (`stackup snapshots list` shows them); nothing was touched");
        }
    } else {
        for (const auto& info : store.list()) {
            if (info.venv == options.venv) {
                target = info;
                break;
            }
        }
        if (!target) {
            throw Error(ExitCode::usage, "nothing to roll back to: no snapshot of " + options.venv.string() + " in " +
                                             options.state_dir.string() + "; nothing was touched");
        }
    }
    if (target->venv != options.venv) {
        throw Error(ExitCode::usage, "snapshot " + target->id + " is of " + target->venv.string() + ", not of " +
                                         options.venv.string() + "; nothing was touched");
    }
    return *target;
}

std::vector<std::string> restore(const snapshot::Store& store, const snapshot::SnapshotInfo& target,
                                 const Options& options) {
    try {
        return store.restore(target.id, options.venv).warnings;
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error(ExitCode::rollback_failed, "restoring snapshot " + target.id + " (" + target.dir.string() +
                                                   ") into " + options.venv.string() + " failed: " + e.what());
    }
}

// Closes an interrupted run that died before its snapshot: nothing to restore.
RollbackReport close_untouched(snapshot::Store& store, const Options& options, const OpenTransaction& open) {
    auto journal = Journal::reopen(options.state_dir);
    journal.close(RecordKind::rolled_back, "closed by stackup rollback: the run died before its snapshot");
    RollbackReport report;
    report.closed = open;
    for (const auto& id : store.cleanup_incomplete()) {
        report.warnings.push_back("removed the incomplete snapshot " + id + " that run left");
    }
    return report;
}

}  // namespace

RollbackReport rollback(const Options& options, const std::optional<std::string>& id) {
    auto lock = acquire_lock(options.state_dir, "rollback");
    snapshot::Store store(options.state_dir);
    auto open = open_transaction(options.state_dir);
    if (open && !open->touched() && !id) {
        return close_untouched(store, options, *open);
    }
    // An interrupted run's own snapshot is the state it left from, not merely the latest.
    auto wanted = id ? id : (open ? std::optional<std::string>(open->snapshot_id) : std::nullopt);
    auto target = find_target(store, options, wanted);
    std::vector<std::string> warnings;
    try {
        warnings = restore(store, target, options);
    } catch (const Error& e) {
        if (open) {
            try {
                Record failed;
                failed.kind = RecordKind::rollback_failed;
                failed.why = e.what();
                Journal::reopen(options.state_dir).append(failed);
            } catch (const std::exception&) {  // the restore's error is the one to report
            }
        }
        throw;
    }
    std::string detail = "stackup rollback" + (id ? " --to " + *id : std::string()) + ": restored snapshot " +
                         target.id + " (taken " + target.created + ")";
    if (open) {
        Journal::reopen(options.state_dir).close(RecordKind::rolled_back,
                                                 "closed by stackup rollback to snapshot " + target.id);
        detail += "; closed the interrupted apply of " + open->manifest;
    }
    // Best effort: the venv is restored; a status that cannot say so must not turn that into a failure.
    try {
        record_last(options.state_dir, {base::utc_now(), target.manifest, "rolled back", detail, target.id, "rollback"});
    } catch (const std::exception& e) {
        warnings.push_back(std::string("cannot record the rollback for `stackup status`: ") + e.what());
    }
    return {target.id, target.dir, target.created, warnings, open};
}

}  // namespace stackup::txn

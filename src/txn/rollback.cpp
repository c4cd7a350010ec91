#include "txn/rollback.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "base/log.hpp"
#include "base/system.hpp"
#include "base/text.hpp"
#include "txn/advice.hpp"
#include "txn/journal.hpp"
#include "txn/lock.hpp"
#include "txn/recover.hpp"
#include "txn/running.hpp"

namespace stackup::txn {

namespace {

// `text` is a generation number ("3") or a snapshot id.
std::optional<snapshot::SnapshotInfo> find_generation(const snapshot::Store& store, const std::string& text) {
    if (!text.empty() && std::all_of(text.begin(), text.end(), base::is_ascii_digit)) {
        for (const auto& info : store.list()) {
            if (std::to_string(info.generation) == text) {
                return info;
            }
        }
        return std::nullopt;
    }
    return store.find(text);
}

snapshot::SnapshotInfo find_target(const snapshot::Store& store, const Options& options,
                                   const std::optional<std::string>& id,
                                   const std::optional<snapshot::SnapshotInfo>& live) {
    std::optional<snapshot::SnapshotInfo> target;
    if (id) {
        target = find_generation(store, *id);
        if (!target) {
            // A mistake, not a failed restore: nothing was touched.
            throw AdvisedError(ExitCode::usage, "no generation or snapshot '" + *id + "' in " + options.state_dir.string(),
                               Advice::no_such_generation, "; nothing was touched");
        }
    } else if (live && !live->parent.empty()) {
        target = store.find(live->parent);  // the one the live generation was built from
        // A snapshot taken of the live generation as it was holds the same tree: go past it.
        while (target && target->tree_digest == live->tree_digest && !target->parent.empty()) {
            target = store.find(target->parent);
        }
        if (target && target->tree_digest == live->tree_digest) {
            target.reset();
        }
    }
    if (!target) {
        for (const auto& info : store.list()) {
            if (info.venv == options.venv && (!live || (info.id != live->id && info.tree_digest != live->tree_digest))) {
                target = info;
                break;
            }
        }
    }
    if (!target) {
        throw Error(ExitCode::usage, "nothing to roll back to: no snapshot of " + options.venv.string() + " in " +
                                         options.state_dir.string() + "; nothing was touched");
    }
    if (target->venv != options.venv) {
        throw Error(ExitCode::usage, "snapshot " + target->id + " is of " + target->venv.string() + ", not of " +
                                         options.venv.string() + "; nothing was touched");
    }
    return *target;
}

std::vector<std::string> restore(const snapshot::Store& store, const snapshot::SnapshotInfo& target,
                                 const Options& options, const std::string& keep_as,
                                 const std::optional<snapshot::SnapshotInfo>& believed) {
    try {
        return store.restore(target.id, options.venv, keep_as, believed).warnings;
    } catch (const Error&) {
        throw;
    } catch (const snapshot::VenvDrifted&) {
        throw;  // nothing changed: the caller chooses again
    } catch (const std::exception& e) {
        throw Error(ExitCode::rollback_failed, "restoring snapshot " + target.id + " (" + target.dir.string() +
                                                   ") into " + options.venv.string() + " failed: " + e.what());
    }
}

// Closes an interrupted run that died before its snapshot: nothing to restore.
RollbackReport close_untouched(snapshot::Store& store, const Options& options, const OpenTransaction& open) {
    auto journal = Journal::reopen(options.state_dir);
    journal.close(Ending::rolled_back, "closed by stackup rollback: the run died before its snapshot");
    RollbackReport report;
    report.closed = open;
    for (const auto& id : store.cleanup_incomplete()) {
        report.warnings.push_back("removed the incomplete snapshot " + id + " that run left");
    }
    return report;
}

// The generation the venv is now, so that the tree the rollback replaces stays one (and the
// rollback can be undone): the recorded one, or a snapshot taken now when the venv changed
// since (hard links: an lstat per entry and a link per new file). None where the venv cannot
// be exchanged: an in-place restore replaces the tree for good.
std::optional<snapshot::SnapshotInfo> generation_of_live(snapshot::Store& store, const Options& options,
                                                         RollbackReport& report) {
    if (auto live = store.live(options.venv)) {
        return live;
    }
    if (store.exchange_blocker(options.venv)) {
        return std::nullopt;
    }
    try {
        snapshot::CreateRequest request;
        request.label = "before rollback";
        request.strategy = snapshot::Strategy::hardlink;
        auto taken = store.create(options.venv, request);
        report.warnings.push_back("the venv had changed since its last generation: kept as generation " +
                                  std::to_string(taken.generation) + " (" + taken.id + ")");
        return taken;
    } catch (const std::exception& e) {
        report.warnings.push_back(std::string("the replaced tree is not kept (no generation of it): ") + e.what());
        return std::nullopt;
    }
}

// An interrupted run that never changed the venv (and no generation asked for): only its journal
// is closed, whatever the run left beside the venv removed.
std::optional<RollbackReport> close_unchanged(snapshot::Store& store, const Options& options,
                                              const std::optional<OpenTransaction>& open,
                                              const std::optional<std::string>& id) {
    if (!open || id) {
        return std::nullopt;
    }
    if (open->blue_green && !switched_in(*open, options.venv)) {
        RollbackReport report;
        report.closed = open;
        report.warnings.push_back(resolve_blue_green(store, options.state_dir, options.venv, *open));
        report.nothing_changed = true;
        return report;
    }
    if (!open->blue_green && !open->touched()) {
        return close_untouched(store, options, *open);
    }
    return std::nullopt;
}

// restore(); a failure is recorded in an interrupted run's journal (which stays open) and rethrown.
std::vector<std::string> restore_journaled(const snapshot::Store& store, const snapshot::SnapshotInfo& target,
                                           const Options& options, const std::string& keep_as, bool open,
                                           const std::optional<snapshot::SnapshotInfo>& believed) {
    try {
        return restore(store, target, options, keep_as, believed);
    } catch (const Error& e) {
        if (open) {
            try {
                Journal::reopen(options.state_dir).append(record::RollbackFailed{e.what()});
            } catch (const std::exception&) {  // the restore's error is the one to report
            }
        }
        throw;
    }
}

// What a rollback replaces and restores. `believed`: the live generation was found by the venv's
// root alone, and its drift is judged while the target is staged (one walk beside the other).
struct Choice {
    std::optional<snapshot::SnapshotInfo> live;
    snapshot::SnapshotInfo target;
    bool believed = false;
};

// `fast`: take the generation whose root the venv has as the live one, unjudged, when the target
// that follows from it is another; whatever hangs on the drift (no other target, or the target
// is that generation) is chosen with the drift judged now, as is everything after a VenvDrifted.
Choice choose(snapshot::Store& store, const Options& options, const std::optional<OpenTransaction>& open,
              const std::optional<std::string>& id, RollbackReport& report, bool fast) {
    if (fast && !open) {
        if (auto believed = store.candidate(options.venv)) {
            try {
                Choice c{believed, find_target(store, options, id, believed), true};
                if (c.target.id != believed->id) {
                    return c;
                }
            } catch (const Error&) {  // decided below, with the drift known
            }
        }
    }
    Choice c;
    if (open && open->blue_green) {
        c.live = store.find(open->generation);  // switched in, never committed
    } else if (!open) {
        c.live = generation_of_live(store, options, report);
    }  // an in-place run cut short leaves no tree worth keeping
    // An interrupted run's own snapshot is the state it left from, not merely the latest.
    auto wanted = id ? id : (open ? std::optional<std::string>(open->snapshot_id) : std::nullopt);
    c.target = find_target(store, options, wanted, c.live);
    if (c.live && c.live->id == c.target.id) {
        throw Error(ExitCode::usage, "generation " + std::to_string(c.target.generation) + " (" + c.target.id +
                                         ") is the venv already; nothing was touched");
    }
    return c;
}

// Closes an interrupted run's journal and records the rollback as the last transaction.
void record_rollback(const Options& options, const std::optional<std::string>& id,
                     const snapshot::SnapshotInfo& target, const std::optional<OpenTransaction>& open,
                     RollbackReport& report) {
    std::string detail = "stackup rollback" + (id ? " --to " + *id : std::string()) + ": restored snapshot " +
                         target.id + " (taken " + target.created + ")";
    if (open) {
        Journal::reopen(options.state_dir).close(Ending::rolled_back, "closed by stackup rollback to snapshot " + target.id);
        detail += "; closed the interrupted apply of " + open->manifest;
    }
    // Best effort: the venv is restored; a status that cannot say so must not turn that into a failure.
    try {
        record_last(options.state_dir, {base::utc_now(), target.manifest, "rolled back", detail, target.id, "rollback"});
    } catch (const std::exception& e) {
        report.warnings.push_back(std::string("cannot record the rollback for `stackup status`: ") + e.what());
    }
}

}  // namespace

RollbackReport rollback(const Options& options, const std::optional<std::string>& id) {
    auto lock = acquire_lock(options.state_dir, "rollback");
    snapshot::Store store(options.state_dir);
    auto open = open_transaction(options.state_dir);
    if (auto closed = close_unchanged(store, options, open, id)) {
        return *closed;
    }
    RollbackReport report;
    report.running = require_unused(options, "not rolled back, nothing was touched", NextCommand::Verb::rollback,
                                    id ? std::vector<std::string>{"--to", *id} : std::vector<std::string>{})
                         .using_venv;
    if (auto discarded = discard_staged(store, options.state_dir, "it was built from the venv this rollback replaces")) {
        report.warnings.push_back(*discarded);
    }
    Choice c = choose(store, options, open, id, report, true);
    std::vector<std::string> warnings;
    try {
        warnings = restore_journaled(store, c.target, options, c.live ? c.live->id : "", open.has_value(),
                                     c.believed ? c.live : std::nullopt);
    } catch (const snapshot::VenvDrifted&) {  // changed by hand since: kept as a generation of its own
        c = choose(store, options, open, id, report, false);
        warnings = restore_journaled(store, c.target, options, c.live ? c.live->id : "", open.has_value(), {});
    }
    report.warnings.insert(report.warnings.end(), warnings.begin(), warnings.end());
    const auto& target = c.target;
    const auto& live = c.live;
    record_rollback(options, id, target, open, report);
    report.snapshot_id = target.id;
    report.snapshot_path = target.dir;
    report.created = target.created;
    report.generation = target.generation;
    report.closed = open;
    if (live) {
        report.replaced_id = live->id;
        report.replaced_generation = live->generation;
    }
    return report;
}

}  // namespace stackup::txn

#include "txn/switch.hpp"

#include "base/error.hpp"
#include "base/failpoint.hpp"
#include "base/fs.hpp"
#include "base/log.hpp"
#include "snapshot/store.hpp"
#include "txn/advice.hpp"
#include "txn/journal.hpp"
#include "txn/lock.hpp"
#include "txn/recover.hpp"
#include "txn/running.hpp"

namespace stackup::txn {

namespace {

snapshot::SnapshotInfo find_or_refuse(const snapshot::Store& store, const std::filesystem::path& state_dir,
                                      const std::string& id, const char* what) {
    auto info = store.find(id);
    if (!info) {
        clear_staged(state_dir);
        throw AdvisedError(ExitCode::usage,
                           std::string("the staged generation's ") + what + " " + id + " is gone; nothing was touched",
                           Advice::staged_gone);
    }
    return *info;
}

// An earlier run's open journal: a blue/green one is resolved (the venv is whole, old or new);
// an in-place one stops the switch (exit 7).
void resolve_earlier(snapshot::Store& store, const Options& options) {
    if (auto open = open_transaction(options.state_dir)) {
        if (!open->blue_green) {
            throw InterruptedError(*open, options.state_dir);
        }
        base::log::warn(resolve_blue_green(store, options.state_dir, options.venv, *open));
    }
}

// The staged generation fits the venv only while the venv is still the generation it was built
// from, and its tree is as it was staged; else nothing is touched.
void require_current(const snapshot::Store& store, const Options& options, const snapshot::SnapshotInfo& base,
                     const snapshot::SnapshotInfo& next, const std::filesystem::path& clone) {
    auto live = store.live(options.venv);
    if (!live || live->id != base.id) {
        std::string now = live ? "it is generation " + std::to_string(live->generation) + " (" + live->id + ") now"
                               : "it changed since";
        if (!live) {
            auto drift = store.drift(base, options.venv);
            if (!drift.empty()) {
                now += " (" + std::to_string(drift.size()) + " change(s), first: " + drift.front() + ")";
            }
        }
        throw AdvisedError(ExitCode::preflight_failed,
                           "the staged generation " + std::to_string(next.generation) + " (" + next.id +
                               ") was built from generation " + std::to_string(base.generation) + " (" + base.id +
                               "), but the live venv is no longer that: " + now + "; nothing was touched",
                           Advice::staged_stale);
    }
    auto changed = store.drift(next, clone);
    if (!changed.empty()) {
        throw Error(ExitCode::preflight_failed, "the staged tree " + clone.string() + " changed since it was staged (" +
                                                    changed.front() + "); nothing was touched: stage it again");
    }
    if (auto blocker = store.exchange_blocker(options.venv)) {
        throw Error(ExitCode::preflight_failed, "cannot switch: " + *blocker + "; nothing was touched");
    }
}

// The exchange, between a journal's snapshot_taken and switching records and its close, as an
// apply's switch is journaled.
void exchange_journaled(snapshot::Store& store, const Options& options, const StagedGeneration& staged,
                        const snapshot::SnapshotInfo& base, const snapshot::SnapshotInfo& next,
                        const std::filesystem::path& clone) {
    auto journal = Journal::begin(options.state_dir, staged.manifest, options.venv.string(), "blue-green");
    journal.append(record::SnapshotTaken{base.id});
    journal.append(switching_record(next.id, clone, options.venv));
    base::failpoint("before-switch");
    try {
        store.exchange(base, options.venv);
    } catch (const std::exception& e) {
        journal.close(Ending::discarded, std::string("the switch failed: ") + e.what());
        throw Error(ExitCode::not_finished, std::string("the switch failed: ") + e.what() +
                                                 "; nothing was changed in " + options.venv.string());
    }
    base::failpoint("after-switch");
    journal.close(Ending::committed, "switched in generation " + next.id + " staged " + staged.created);
}

}  // namespace

SwitchReport switch_staged(const Options& options) {
    auto lock = acquire_lock(options.state_dir, "switch");
    snapshot::Store store(options.state_dir);
    resolve_earlier(store, options);
    auto staged = staged_generation(options.state_dir);
    if (!staged) {
        throw AdvisedError(ExitCode::usage, "nothing is staged for " + options.venv.string(), Advice::nothing_staged);
    }
    const auto base = find_or_refuse(store, options.state_dir, staged->base_id, "base");
    auto next = find_or_refuse(store, options.state_dir, staged->generation_id, "generation");
    const auto clone = store.tree_of(base);
    require_current(store, options, base, next, clone);
    auto running = require_unused(options,
                                  "not switched, generation " + std::to_string(next.generation) + " (" + next.id +
                                      ") stays staged",
                                  NextCommand::Verb::switch_staged);
    base::sync_filesystem(clone);  // the staged tree is on disk before it becomes the venv
    exchange_journaled(store, options, *staged, base, next, clone);
    clear_staged(options.state_dir);
    next.outcome = "applied";
    try {
        store.update(next);
    } catch (const std::exception& e) {
        base::log::warn(std::string("cannot record the switch in the generation's record: ") + e.what());
    }
    return {next.id, next.generation, base.id, base.generation, staged->manifest, std::move(running.using_venv)};
}

}  // namespace stackup::txn

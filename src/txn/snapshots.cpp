#include "txn/snapshots.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "manifest/environment.hpp"
#include "txn/advice.hpp"
#include "txn/journal.hpp"
#include "txn/lock.hpp"
#include "txn/retention.hpp"
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
        throw AdvisedError(ExitCode::usage,
                           "no snapshot '" + id + "' of " + options.venv.string() + " in " + store.snapshots_dir().string(),
                           Advice::no_such_snapshot);
    }
    return *info;
}

}  // namespace

snapshot::SnapshotInfo create_snapshot(const Options& options, const manifest::Manifest* m, const std::string& label) {
    auto lock = acquire_lock(options.state_dir, "snapshots create");
    auto env = manifest::child_environment(m != nullptr ? *m : manifest::Manifest{}, options.venv, options.caller_env);
    auto facts = venv::probe(options.venv, {}, env);
    snapshot::Store store(options.state_dir);
    std::string manifest = m != nullptr ? m->source.string() : std::string();
    snapshot::CreateRequest request{label, manifest, distribution_pairs(facts), options.snapshot_strategy};
    if (auto live = store.live(options.venv)) {
        request.parent = live->id;  // the same tree: a rollback goes past it to what came before
    }
    return store.create(options.venv, request);
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

History history(const Options& options) {
    History out;
    out.generations = list_snapshots(options);
    std::reverse(out.generations.begin(), out.generations.end());
    snapshot::Store store(options.state_dir);
    if (auto live = store.live(options.venv)) {
        out.live_id = live->id;
    }
    out.staged = staged_generation(options.state_dir);
    return out;
}

void delete_snapshot(const Options& options, const std::string& id) {
    auto lock = acquire_lock(options.state_dir, "snapshots delete " + id);
    snapshot::Store store(options.state_dir);
    auto info = find_own(store, options, id);
    if (auto live = store.live(options.venv); live && live->id == info.id) {
        throw Error(ExitCode::usage, "snapshot " + id + " is generation " + std::to_string(info.generation) +
                                         ", the live venv; not deleting it");
    }
    if (info.id == needed_snapshot(options)) {
        throw AdvisedError(ExitCode::interrupted, "snapshot " + id + " is the way back for an interrupted run; not deleting it",
                           Advice::needed_for_recovery);
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

}  // namespace stackup::txn

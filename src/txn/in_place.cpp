// In place: where the venv cannot be exchanged, the steps run in it after a snapshot, and a
// failure restores the snapshot.
#include <thread>

#include "base/log.hpp"
#include "txn/phases.hpp"
#include "txn/retention.hpp"

namespace stackup::txn::detail {

namespace {

void roll_back(snapshot::Store& store, const Options& options, Observer& observer, Journal& journal,
               ApplyReport& report) {
    observer.rolling_back(report.snapshot_id, report.failure);
    note(journal, record::RollingBack{report.failure});
    try {
        auto restored = store.restore(report.snapshot_id, options.venv);
        report.rolled_back = true;
        report.rollback_warnings = restored.warnings;
    } catch (const std::exception& e) {
        report.rollback_error = e.what();
        // The journal stays open: the next run refuses, and `stackup rollback` retries.
        note(journal, record::RollbackFailed{report.rollback_error});
        return;
    }
    note(journal, Ending::rolled_back, report.failure);
}

// Builds the snapshot's ready tree (Store::prepare) on a thread of its own
// while the steps run, so that a rollback finds it and need not make 2,000
// directories and 20,000 links then. A cache: when it fails, the restore
// builds it. Finished before anything else touches the snapshot.
class Preparer {
public:
    Preparer(const snapshot::Store& store, const std::string& id)
        : thread_([&store, id] {
              try {
                  (void)store.prepare(id);
              } catch (const std::exception& e) {
                  base::log::debug("snapshot " + id + ": no ready tree ahead of a rollback: " + e.what());
              }
          }) {}
    Preparer(const Preparer&) = delete;
    Preparer& operator=(const Preparer&) = delete;
    ~Preparer() { finish(); }

    void finish() {
        if (thread_.joinable()) {
            thread_.join();
        }
    }

private:
    std::thread thread_;
};

// A hard-link snapshot shares inodes with the venv: something that wrote a venv
// file in place during the apply changed the snapshot too. The integrity record
// tells at lstat cost; a copy has nothing to share.
std::vector<std::string> damage_after_apply(const snapshot::Store& store, const snapshot::SnapshotInfo& snap) {
    if (snap.strategy != snapshot::Strategy::hardlink) {
        return {};
    }
    auto damage = store.verify(snap.id);
    if (!damage.empty()) {
        base::log::warn("snapshot " + snap.id + " was changed in place during the apply (" +
                        std::to_string(damage.size()) + " file(s), first: " + damage.front() +
                        "): it will refuse to restore; take a fresh one with `stackup snapshots create`");
    }
    return damage;
}

}  // namespace

void apply_in_place(const manifest::Manifest& m, const Options& options, Observer& observer, snapshot::Store& store,
                    Journal& journal, venv::Facts facts, ApplyReport& report) {
    const venv::Facts before = facts;
    auto snap = take_snapshot(store, m, options, options.snapshot_strategy, facts, journal);
    report.snapshot_id = snap.id;
    report.snapshot_path = snap.dir;
    observer.snapshot_taken(snap.id, report.snapshot_path);
    Preparer preparer(store, snap.id);
    Options changing = options;
    changing.bytecode = {true, {}};  // the snapshot covers it, as it covers uv's writes
    run_all(m, changing, observer, journal, facts, report);
    preparer.finish();
    if (interrupted(report) || decide(report) != Outcome::applied) {
        roll_back(store, options, observer, journal, report);
        return;
    }
    note(journal, Ending::committed, "");
    report.snapshot_damage = damage_after_apply(store, snap);
    if (snap.strategy != snapshot::Strategy::hardlink) {
        return;  // a second copy of the venv only for its history would double the apply's cost
    }
    try {
        snapshot::CreateRequest request{"apply of " + m.name, m.source.string(), distribution_pairs(facts),
                                        snapshot::Strategy::hardlink};
        request.parent = snap.id;
        request.outcome = "applied";
        request.changes = changes_between(before, facts);
        request.plan = installs_of(report);
        auto generation = store.create(options.venv, request);
        report.generation_id = generation.id;
        report.generation = generation.generation;
    } catch (const std::exception& e) {
        base::log::warn(std::string("the apply committed, but its generation could not be recorded: ") + e.what());
    }
}

}  // namespace stackup::txn::detail

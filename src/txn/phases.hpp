#pragma once
// Internal to the executor (apply.cpp, blue_green.cpp, in_place.cpp): the phases both modes
// share. Each records what it found in the report; txn::decide() says what it means.

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "manifest/manifest.hpp"
#include "snapshot/store.hpp"
#include "txn/report.hpp"
#include "txn/journal.hpp"
#include "venv/probe.hpp"

namespace stackup::txn::detail {

// Appends a record, or closes the journal with a terminal one. Writes after the venv changed
// are best effort: a failing disk must not stop the restore.
void note(Journal& journal, RecordData record);
void note(Journal& journal, Ending ending, const std::string& why);

// Runs every step and then the checks against the tree in `options.venv`, each step between a
// step_running and a step_verified record, stopping at the first failure; whatever throws
// stops the run (stop()).
void run_all(const manifest::Manifest& m, const Options& options, Observer& observer, Journal& journal,
             venv::Facts& facts, ApplyReport& report);

void record_taken(Journal& journal, const std::string& id);
// Snapshots the venv as it is (`strategy`) and journals it; a failure discards the journal
// (nothing was touched) and is rethrown.
snapshot::SnapshotInfo take_snapshot(snapshot::Store& store, const manifest::Manifest& m, const Options& options,
                                     snapshot::Strategy strategy, const venv::Facts& facts, Journal& journal);

// What each step installed, and what the run changed, as the generation records them.
std::vector<snapshot::PlannedInstall> installs_of(const ApplyReport& report);
std::vector<snapshot::PackageChange> changes_between(const venv::Facts& before, const venv::Facts& after);

// Records how long each phase of a run took into the report, one lap at a time.
class Laps {
public:
    explicit Laps(ApplyReport& report) : report_(report) {}
    void lap(const char* name) {
        const auto now = std::chrono::steady_clock::now();
        report_.phases.emplace_back(name, std::chrono::duration<double>(now - last_).count());
        last_ = now;
    }

private:
    ApplyReport& report_;
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Blue/green (blue_green.cpp): the generation the venv is (or a snapshot of it) cloned beside
// it, every step and check run there, the verified clone switched in with one exchange.
void apply_blue_green(const manifest::Manifest& m, const Options& options, Observer& observer,
                      snapshot::Store& store, Journal& journal, venv::Facts facts, ApplyReport& report, Laps& laps);

// In place (in_place.cpp): a snapshot, every step in the venv itself, a restore on failure.
void apply_in_place(const manifest::Manifest& m, const Options& options, Observer& observer, snapshot::Store& store,
                    Journal& journal, venv::Facts facts, ApplyReport& report);

}  // namespace stackup::txn::detail

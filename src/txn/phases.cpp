#include "txn/phases.hpp"

#include <set>

#include "base/log.hpp"
#include "manifest/environment.hpp"
#include "txn/retention.hpp"
#include "txn/state_dir.hpp"
#include "txn/steps.hpp"

namespace stackup::txn::detail {

namespace {

void run_steps(StepRunner& run, Journal& journal, const manifest::Manifest& m, venv::Facts& facts,
               ApplyReport& report) {
    for (std::size_t i = 0; i < m.steps.size(); ++i) {
        journal.append(record::StepRunning{i + 1, m.steps[i].name});
        if (!run.step(i, facts, report)) {
            return;
        }
        journal.append(record::StepVerified{i + 1});
    }
}

}  // namespace

void note(Journal& journal, RecordData record) {
    try {
        journal.append(std::move(record));
    } catch (const std::exception& e) {
        base::log::warn(std::string("cannot write the journal: ") + e.what());
    }
}

void note(Journal& journal, Ending ending, const std::string& why) {
    try {
        journal.close(ending, why);
    } catch (const std::exception& e) {
        base::log::warn(std::string("cannot write the journal: ") + e.what());
    }
}

void run_all(const manifest::Manifest& m, const Options& options, Observer& observer, Journal& journal,
             venv::Facts& facts, ApplyReport& report) {
    auto env = manifest::child_environment(m, options.venv, options.caller_env);
    StepRunner run(m, options, observer, env, requirements_file(options.state_dir, 0).parent_path());
    run.set_baseline(facts);
    try {
        run_steps(run, journal, m, facts, report);
        if (decide(report) == Outcome::applied) {
            run.checks(report);
        }
    } catch (const std::exception& e) {
        stop(report, std::string("the run stopped: ") + e.what());
    }
}

void record_taken(Journal& journal, const std::string& id) {
    journal.append(record::SnapshotTaken{id});
}

snapshot::SnapshotInfo take_snapshot(snapshot::Store& store, const manifest::Manifest& m, const Options& options,
                                     snapshot::Strategy strategy, const venv::Facts& facts, Journal& journal) {
    snapshot::SnapshotInfo snap;
    try {
        snap = store.create(options.venv,
                            {"before apply of " + m.name, m.source.string(), distribution_pairs(facts), strategy});
    } catch (...) {
        journal.discard();  // nothing was touched
        throw;
    }
    record_taken(journal, snap.id);
    return snap;
}

std::vector<snapshot::PlannedInstall> installs_of(const ApplyReport& report) {
    std::vector<snapshot::PlannedInstall> out;
    for (const auto& step : report.steps) {
        out.push_back({step.name, step.requirements});
    }
    return out;
}

std::vector<snapshot::PackageChange> changes_between(const venv::Facts& before, const venv::Facts& after) {
    std::vector<snapshot::PackageChange> out;
    for (const auto& row : package_rows(nullptr, before, after)) {
        out.push_back({row.name, row.before, row.after});
    }
    return out;
}

}  // namespace stackup::txn::detail

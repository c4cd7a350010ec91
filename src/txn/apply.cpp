#include "txn/apply.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "base/lock.hpp"
#include "base/log.hpp"
#include "base/sha256.hpp"
#include "base/url.hpp"
#include "installer/command.hpp"
#include "installer/runner.hpp"
#include "manifest/environment.hpp"
#include "snapshot/store.hpp"
#include "txn/checks.hpp"
#include "txn/journal.hpp"
#include "txn/lock.hpp"
#include "txn/preflight.hpp"
#include "txn/retention.hpp"
#include "txn/saved_plan.hpp"
#include "txn/state_dir.hpp"
#include "txn/recover.hpp"
#include "txn/steps.hpp"
#include "venv/relocate.hpp"
#include "verify/requires.hpp"
#include "base/failpoint.hpp"
#include "base/text.hpp"

namespace stackup::txn {
namespace {

// Records what stopped the run (the first reason is the one the run reports); decide() says what it means.
void stop(ApplyReport& report, const std::string& why) {
    if (report.stopped.empty()) {
        report.stopped = why;
    }
    if (report.failure.empty()) {
        report.failure = why;
    }
}

// Journal writes after the venv changed are best effort: a failing disk must
// not stop the restore.
void note(Journal& journal, RecordKind kind, const std::string& why) {
    try {
        Record r;
        r.kind = kind;
        r.why = why;
        if (is_terminal(kind)) {
            journal.close(kind, why);
        } else {
            journal.append(r);
        }
    } catch (const std::exception& e) {
        base::log::warn(std::string("cannot write the journal: ") + e.what());
    }
}

void roll_back(snapshot::Store& store, const Options& options, Observer& observer, Journal& journal,
               ApplyReport& report) {
    observer.rolling_back(report.snapshot_id, report.failure);
    note(journal, RecordKind::rolling_back, report.failure);
    try {
        auto restored = store.restore(report.snapshot_id, options.venv);
        report.rolled_back = true;
        report.rollback_warnings = restored.warnings;
    } catch (const std::exception& e) {
        report.rollback_error = e.what();
        // The journal stays open: the next run refuses, and `stackup rollback` retries.
        note(journal, RecordKind::rollback_failed, report.rollback_error);
        return;
    }
    note(journal, RecordKind::rolled_back, report.failure);
}

// Each step between a step_running and a step_verified record; stops at the first failure.
// Everything before the first change, shared by apply and its dry run.
venv::Facts preflight(const manifest::Manifest& m, const Options& options, const base::Environment& env,
                      Observer& observer, ApplyReport& report) {
    report.uv_version = installer::uv_version(options.uv, env);
    venv::Facts facts = inspect_host(m, options.venv, env).facts;
    observer.preflight(facts, report.uv_version);
    if (options.saved_plan) {
        // `apply PLAN`: no re-resolving, and nothing of a venv that moved on since.
        check_saved_plan(*options.saved_plan, m, facts);
        report.plan = plan::plan_of(*options.saved_plan);
    } else {
        report.plan = plan_against_indexes(m, facts, options.http);
    }
    observer.planned(report.plan);
    require_plan_ok(report.plan);
    for (const auto& step : m.steps) {
        StepReport pending;
        pending.name = step.name;
        report.steps.push_back(std::move(pending));
    }
    return facts;
}

void run_steps(StepRunner& run, Journal& journal, const manifest::Manifest& m, venv::Facts& facts,
               ApplyReport& report) {
    for (std::size_t i = 0; i < m.steps.size(); ++i) {
        Record running;
        running.kind = RecordKind::step_running;
        running.step = i + 1;
        running.name = m.steps[i].name;
        journal.append(running);
        if (!run.step(i, facts, report)) {
            return;
        }
        Record verified;
        verified.kind = RecordKind::step_verified;
        verified.step = i + 1;
        journal.append(verified);
    }
}

// Runs every step and then the checks against the tree in `options.venv`; whatever
// throws is a failed run, reported as data (nothing here decides what it means for the venv).
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
    Record taken;
    taken.kind = RecordKind::snapshot_taken;
    taken.snapshot_id = id;
    journal.append(taken);
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

// What each step installed, as the generation records it.
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

// The mode an apply runs in, and why in place when it must be.
Mode choose_mode(const snapshot::Store& store, const Options& options, ApplyReport& report) {
    if (options.snapshot_strategy != snapshot::Strategy::automatic &&
        options.snapshot_strategy != snapshot::Strategy::hardlink) {
        report.mode_reason = "--snapshot-strategy " + snapshot::to_string(options.snapshot_strategy) +
                             " asks for a snapshot the venv cannot be switched with";
        return Mode::in_place;
    }
    if (auto blocker = store.exchange_blocker(options.venv)) {
        report.mode_reason = *blocker;
        return Mode::in_place;
    }
    return Mode::blue_green;
}

// An earlier run's open journal: a blue/green one is resolved here (the venv is whole, old
// or new); an in-place one stops this run with exit 7, its snapshot being the way back.
void resolve_earlier(snapshot::Store& store, const Options& options, ApplyReport& report) {
    auto open = open_transaction(options.state_dir);
    if (!open) {
        return;
    }
    if (!open->blue_green) {
        throw Error(ExitCode::interrupted, describe_interrupted(*open, options.state_dir));
    }
    report.recovered.push_back(resolve_blue_green(store, options.state_dir, options.venv, *open));
    base::log::warn(report.recovered.back());
}

// A staged generation is built from the venv as it is now; a new apply replaces it.
void discard_staged(snapshot::Store& store, const Options& options, ApplyReport& report) {
    std::optional<StagedGeneration> staged;
    try {
        staged = staged_generation(options.state_dir);
    } catch (const std::exception& e) {
        base::log::warn(e.what());
    }
    if (!staged) {
        return;
    }
    try {
        (void)store.remove(staged->generation_id);
    } catch (const std::exception& e) {
        base::log::warn("cannot remove the staged generation " + staged->generation_id + ": " + e.what());
    }
    clear_staged(options.state_dir);
    report.recovered.push_back("discarded the staged generation " + staged->generation_id + " (" +
                               staged->manifest + ", staged " + staged->created + "): this apply replaces it");
    base::log::warn(report.recovered.back());
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

// uv takes an environment's lock by creating <venv>/.lock, even for --dry-run:
// a dry run leaves the venv as it found it, the lock file and the folder's times included.
class LeaveLockFileAsFound {
public:
    explicit LeaveLockFileAsFound(const std::filesystem::path& venv) : venv_(venv), lock_(venv / ".lock") {
        std::error_code ec;
        existed_ = std::filesystem::exists(std::filesystem::symlink_status(lock_, ec));
        known_ = ::stat(venv_.c_str(), &before_) == 0;
    }
    LeaveLockFileAsFound(const LeaveLockFileAsFound&) = delete;
    LeaveLockFileAsFound& operator=(const LeaveLockFileAsFound&) = delete;
    ~LeaveLockFileAsFound() {
        std::error_code ec;
        if (existed_ || !known_ || !std::filesystem::exists(std::filesystem::symlink_status(lock_, ec))) {
            return;
        }
        if (::unlink(lock_.c_str()) != 0) {
            base::log::warn("cannot remove the lock file uv left in " + venv_.string() + ": " + std::strerror(errno));
            return;
        }
        const struct timespec times[2] = {before_.st_atim, before_.st_mtim};
        ::utimensat(AT_FDCWD, venv_.c_str(), times, 0);
    }

private:
    std::filesystem::path venv_;
    std::filesystem::path lock_;
    bool existed_ = true;
    bool known_ = false;
    struct stat before_ {};
};

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

// Blue/green: the generation the venv is (or a fresh snapshot of it), cloned into its
// ready tree, where every step runs and is verified; the live venv is only read.
class BlueGreen {
public:
    BlueGreen(const manifest::Manifest& m, const Options& options, Observer& observer, snapshot::Store& store,
              Journal& journal, ApplyReport& report, Laps& laps)
        : m_(m), options_(options), observer_(observer), store_(store), journal_(journal), report_(report),
          laps_(laps) {}

    void run(venv::Facts facts) {
        base_ = base_generation(facts);
        laps_.lap("base");
        report_.snapshot_id = base_.id;
        report_.snapshot_path = base_.dir;
        if (base_taken_) {
            observer_.snapshot_taken(base_.id, base_.dir);
        }
        if (!build(facts)) {
            discard();
            return;
        }
        report_.generation_id = generation_.id;
        report_.generation = generation_.generation;
        if (options_.stage) {
            record_staged(options_.state_dir, {generation_.id, base_.id, m_.source.string(), generation_.created});
            report_.staged = true;
            note(journal_, RecordKind::staged, "generation " + generation_.id + " staged; `stackup switch` puts it in");
            return;
        }
        switch_in();
    }

private:
    // The venv's own generation when it has not changed since; else a snapshot of it now.
    snapshot::SnapshotInfo base_generation(const venv::Facts& facts) {
        std::optional<snapshot::SnapshotInfo> live;
        try {
            live = store_.live(options_.venv);
        } catch (const std::exception& e) {
            base::log::debug(std::string("no live generation: ") + e.what());
        }
        if (live) {
            record_taken(journal_, live->id);
            return *live;
        }
        base_taken_ = true;
        return take_snapshot(store_, m_, options_, snapshot::Strategy::hardlink, facts, journal_);
    }

    // Clones, runs every step and check in the clone, and records it as a generation; false on failure.
    bool build(venv::Facts& facts) {
        const venv::Facts before = facts;
        try {
            (void)store_.prepare(base_.id, false);  // synced once, before the switch
            report_.clone = std::filesystem::canonical(store_.tree_of(base_));
        } catch (const std::exception& e) {
            stop(report_, std::string("cannot clone the venv: ") + e.what());
            return false;
        }
        laps_.lap("clone");
        observer_.cloned(report_.clone, base_.generation);
        base::failpoint("cloned");
        Options build = options_;
        build.venv = report_.clone;
        run_all(m_, build, observer_, journal_, facts, report_);
        laps_.lap("steps");
        if (decide(report_) != Outcome::applied) {
            return false;
        }
        try {
            if (!relocate()) {
                return false;
            }
            laps_.lap("relocate");
            if (!live_unchanged()) {
                return false;
            }
            laps_.lap("live check");
            record(before, facts);
            laps_.lap("record");
            return true;
        } catch (const std::exception& e) {
            stop(report_, std::string("cannot finish the next generation: ") + e.what());
            return false;
        }
    }

    // No file of the clone may name the clone's path once it is the venv. Only what the build
    // wrote can: the files whose inode the base does not have (its directories list them, no lstat).
    bool relocate() {
        std::set<std::uint64_t> unchanged;
        for (const auto& e : store_.index(base_).entries) {
            if (e.type == snapshot::EntryType::file) {
                unchanged.insert(e.inode);
            }
        }
        std::vector<std::string> written;
        for (const auto& e : snapshot::index_tree(report_.clone, snapshot::Contents::identity).entries) {
            if (e.type == snapshot::EntryType::file && unchanged.count(e.inode) == 0) {
                written.push_back(e.path);
            }
        }
        auto moved = venv::relocate(report_.clone, report_.clone.string(), options_.venv.string(), written);
        report_.relocated = moved.rewritten;
        report_.relocated.insert(report_.relocated.end(), moved.removed.begin(), moved.removed.end());
        if (!moved.refused.empty()) {
            stop(report_, "the next generation cannot be moved to " + options_.venv.string() + ": " +
                              base::join(moved.refused, ", ") + " name the build path " + report_.clone.string() +
                              " inside binary data");
            return false;
        }
        return true;
    }

    // What changed in the live venv since the clone was made. The clone shares every file it
    // did not replace with the venv (hard links), so an in-place write in the clone (a check
    // that appends to a file) lands in the venv too, as another process's write would.
    void check_live() {
        try {
            report_.live_drift = store_.drift(base_, options_.venv);
        } catch (const std::exception& e) {
            report_.live_drift = {std::string("cannot index the live venv: ") + e.what()};
        }
        if (!report_.live_drift.empty()) {
            try {
                report_.snapshot_damage = store_.verify(base_.id);
            } catch (const std::exception&) {
            }
        }
    }

    // Switching would lose what changed in the live venv meanwhile.
    bool live_unchanged() {
        check_live();
        if (report_.live_drift.empty()) {
            return true;
        }
        stop(report_, "the live venv " + options_.venv.string() + " changed while the next generation was built (" +
                          std::to_string(report_.live_drift.size()) + " change(s), first: " +
                          report_.live_drift.front() +
                          "): another process wrote to it, or something run in the clone wrote in place a file the "
                          "clone shares with it; switching would lose that change, so the new generation is discarded");
        return false;
    }

    void record(const venv::Facts& before, const venv::Facts& after) {
        snapshot::CreateRequest request;
        request.label = "apply of " + m_.name;
        request.manifest = m_.source.string();
        request.distributions = distribution_pairs(after);
        request.strategy = snapshot::Strategy::hardlink;
        request.venv = options_.venv;
        request.parent = base_.id;
        request.outcome = options_.stage ? "staged" : "applied";
        request.changes = changes_between(before, after);
        request.plan = installs_of(report_);
        generation_ = store_.create(report_.clone, request);
    }

    void switch_in() {
        try {
            base::sync_filesystem(report_.clone);  // the new tree is on disk before it becomes the venv
        } catch (const std::exception& e) {
            base::log::warn(std::string("cannot sync the next generation before the switch: ") + e.what());
        }
        laps_.lap("sync");
        struct stat clone {};
        struct stat live {};
        Record switching;
        switching.kind = RecordKind::switching;
        switching.generation = generation_.id;
        if (::lstat(report_.clone.c_str(), &clone) == 0 && ::lstat(options_.venv.c_str(), &live) == 0) {
            switching.clone_inode = static_cast<std::uint64_t>(clone.st_ino);
            switching.live_inode = static_cast<std::uint64_t>(live.st_ino);
        }
        journal_.append(switching);
        observer_.switching(options_.venv);
        base::failpoint("before-switch");
        try {
            store_.exchange(base_, options_.venv);
        } catch (const std::exception& e) {
            stop(report_, std::string("the switch failed: ") + e.what());
            discard();
            return;
        }
        report_.switched = true;
        base::failpoint("after-switch");
        note(journal_, RecordKind::committed, "");
        laps_.lap("switch");
    }

    // The live venv was never switched: the clone goes back to being the base's ready tree.
    void discard() {
        if (report_.live_drift.empty()) {
            check_live();  // a failed step or check may still have written through a shared file
        }
        if (!generation_.id.empty()) {
            try {
                (void)store_.remove(generation_.id);
            } catch (const std::exception& e) {
                base::log::warn("cannot remove the discarded generation " + generation_.id + ": " + e.what());
            }
        }
        try {
            (void)store_.prepare(base_.id);
        } catch (const std::exception& e) {
            base::log::debug("the discarded clone stays as it is until the next prepare: " + std::string(e.what()));
        }
        note(journal_, RecordKind::discarded,
             report_.failure + (report_.live_drift.empty()
                                    ? "; nothing was changed in " + options_.venv.string()
                                    : "; the live venv changed during the build: " + report_.live_drift.front()));
    }

    const manifest::Manifest& m_;
    const Options& options_;
    Observer& observer_;
    snapshot::Store& store_;
    Journal& journal_;
    ApplyReport& report_;
    Laps& laps_;
    snapshot::SnapshotInfo base_;
    bool base_taken_ = false;  // false: the venv was a recorded generation already
    snapshot::SnapshotInfo generation_;
};

// In place: a snapshot, every step in the venv itself, a restore on failure.
void apply_in_place(const manifest::Manifest& m, const Options& options, Observer& observer, snapshot::Store& store,
                    Journal& journal, venv::Facts facts, ApplyReport& report) {
    const venv::Facts before = facts;
    auto snap = take_snapshot(store, m, options, options.snapshot_strategy, facts, journal);
    report.snapshot_id = snap.id;
    report.snapshot_path = snap.dir;
    observer.snapshot_taken(snap.id, report.snapshot_path);
    Preparer preparer(store, snap.id);
    run_all(m, options, observer, journal, facts, report);
    preparer.finish();
    if (decide(report) != Outcome::applied) {
        roll_back(store, options, observer, journal, report);
        return;
    }
    note(journal, RecordKind::committed, "");
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

}  // namespace

Outcome decide(const ApplyReport& report) {
    if (!report.rollback_error.empty()) {
        return Outcome::rollback_failed;
    }
    if (const Outcome steps = outcome_of(report.steps); steps != Outcome::applied) {
        return steps;
    }
    if (std::any_of(report.checks.begin(), report.checks.end(), [](const CheckReport& c) { return !c.ok; })) {
        return Outcome::verification_failed;
    }
    return report.stopped.empty() ? Outcome::applied : Outcome::installer_failed;
}

std::string_view to_string(Mode mode) {
    return mode == Mode::blue_green ? "blue-green" : "in-place";
}

std::string_view to_string(StepStatus status) {
    switch (status) {
        case StepStatus::pending: return "not run";
        case StepStatus::ok: return "ok";
        case StepStatus::installer_failed: return "installer failed";
        case StepStatus::installer_no_op: return "installer no-op";
        case StepStatus::verification_failed: return "verification failed";
    }
    return "?";
}

ExitCode ApplyReport::exit_code() const {
    switch (outcome) {
        case Outcome::applied: return ExitCode::ok;
        case Outcome::verification_failed: return ExitCode::verification_failed;
        case Outcome::installer_failed: return ExitCode::installer_failed;
        case Outcome::rollback_failed: return ExitCode::rollback_failed;
    }
    return ExitCode::rollback_failed;
}

ApplyReport apply(const manifest::Manifest& m, const Options& options, Observer& observer) {
    auto lock = acquire_lock(options.state_dir, "apply " + m.source.string());
    snapshot::Store store(options.state_dir);
    ApplyReport report;
    Laps laps(report);
    // What the last apply's retention set aside is deleted while this one works.
    std::jthread trash([&store] {
        try {
            (void)store.empty_trash();
        } catch (const std::exception& e) {
            base::log::debug(std::string("the store's trash stays for the next run: ") + e.what());
        }
    });
    resolve_earlier(store, options, report);
    auto env = manifest::child_environment(m, options.venv, options.caller_env);
    venv::Facts facts = preflight(m, options, env, observer, report);
    report.mode = choose_mode(store, options, report);
    if (options.stage && report.mode != Mode::blue_green) {
        throw Error(ExitCode::preflight_failed, "cannot stage the next generation: " + report.mode_reason +
                                                    "; nothing was touched");
    }
    discard_staged(store, options, report);
    auto journal = Journal::begin(options.state_dir, m.source.string(), options.venv.string(),
                                  std::string(to_string(report.mode)));
    laps.lap("preflight");
    if (report.mode == Mode::blue_green) {
        BlueGreen(m, options, observer, store, journal, report, laps).run(std::move(facts));
    } else {
        apply_in_place(m, options, observer, store, journal, std::move(facts), report);
    }
    report.outcome = decide(report);
    if (report.outcome == Outcome::applied && !report.staged) {
        report.pruned = prune(store, options.state_dir, options.venv, m.snapshot_keep,
                              report.generation_id.empty() ? report.snapshot_id : report.generation_id, true);
        laps.lap("prune");
    }
    return report;
}

ApplyReport dry_run(const manifest::Manifest& m, const Options& options, Observer& observer) {
    auto env = manifest::child_environment(m, options.venv, options.caller_env);
    ApplyReport report;
    venv::Facts facts = preflight(m, options, env, observer, report);
    // No lock is taken, so nothing of a concurrent apply's state is written to.
    base::ScratchDir scratch("stackup-dry-run-");
    LeaveLockFileAsFound untouched(options.venv);
    StepRunner run(m, options, observer, env, scratch.path(), installer::Mode::dry_run);
    for (std::size_t i = 0; i < m.steps.size() && run.step(i, facts, report); ++i) {
    }
    report.outcome = decide(report);
    return report;
}

}  // namespace stackup::txn

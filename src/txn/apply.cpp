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
#include "verify/requires.hpp"

namespace stackup::txn {
namespace {

using Clock = std::chrono::steady_clock;

std::map<std::string, std::string> versions_of(const venv::Facts& facts) {
    std::map<std::string, std::string> out;
    for (const auto& d : facts.distributions) {
        out[d.normalized] = d.version;
    }
    return out;
}

// Every dist whose version changed, and the step's own packages even when they did not.
std::vector<PackageRow> package_rows(const manifest::Step& step, const venv::Facts& before,
                                     const venv::Facts& after) {
    auto was = versions_of(before);
    auto now = versions_of(after);
    std::set<std::string> names;
    for (const auto& req : step.packages) {
        names.insert(req.normalized_name());
    }
    for (const auto& [name, version] : now) {
        if (!was.count(name) || was[name] != version) {
            names.insert(name);
        }
    }
    for (const auto& [name, _] : was) {
        if (!now.count(name)) {
            names.insert(name);
        }
    }
    std::vector<PackageRow> rows;
    for (const auto& name : names) {
        rows.push_back({name, was.count(name) ? was[name] : "", now.count(name) ? now[name] : ""});
    }
    return rows;
}

// A mismatch on one of the step's own packages that uv left alone (same
// version, no " + " or " ~ " line) means the installer did nothing: the
// "Audited"/"Checked" no-op.
std::vector<std::string> unchanged_failing_packages(const manifest::Step& step, const StepReport& r) {
    std::vector<std::string> out;
    for (const auto& req : step.packages) {
        std::string name = req.normalized_name();
        auto row = std::find_if(r.packages.begin(), r.packages.end(), [&](const PackageRow& p) { return p.name == name; });
        bool unchanged = row != r.packages.end() && row->before == row->after && !row->after.empty();
        // A " ~ " reinstall did run: if it still fails, the build itself is wrong.
        const auto* change = r.summary.change_of(name);
        bool uv_touched = change != nullptr && change->kind != installer::PackageChange::Kind::removed;
        bool failing = std::any_of(r.mismatches.begin(), r.mismatches.end(),
                                   [&](const verify::Mismatch& m) { return m.dist == name; });
        if (unchanged && !uv_touched && failing) {
            out.push_back(name + " " + row->after);
        }
    }
    return out;
}

class Run {
public:
    // Each step's requirements file is written into `requirements_dir`.
    Run(const manifest::Manifest& m, const Options& o, Observer& obs, base::Environment env,
        std::filesystem::path requirements_dir, installer::Mode mode = installer::Mode::install)
        : m_(m), options_(o), observer_(obs), env_(std::move(env)), requirements_dir_(std::move(requirements_dir)),
          mode_(mode) {}

    // Returns false when the step failed; the report says how.
    bool step(std::size_t i, venv::Facts& facts, ApplyReport& report) {
        const manifest::Step& step = m_.steps[i];
        StepReport& r = report.steps[i];
        r.requirements = requirement_lines(report.plan.steps.at(i), step);
        auto removal = removal_invocation(step, facts, r);
        auto install = install_invocation(i, step, r);
        observer_.step_started(i, m_.steps.size(), r);
        auto started = Clock::now();
        bool ran = run_installer(r, removal) && run_installer(r, install);
        if (!ran) {
            r.status = StepStatus::installer_failed;
            report.failure = "step '" + step.name + "': the installer failed (" + r.installer_error + ")";
            r.seconds = seconds_since(started);
            observer_.step_finished(i, r);
            return false;
        }
        if (mode_ == installer::Mode::dry_run) {
            // uv changed nothing, so there is nothing to verify: its report is the result.
            r.status = StepStatus::ok;
            r.seconds = seconds_since(started);
            observer_.step_finished(i, r);
            return true;
        }
        venv::Facts after = probe_after(i, r);
        r.packages = package_rows(step, facts, after);
        if (r.mismatches.empty()) {
            r.checks = verify::judge_all(m_, i, after);
            auto broken = judge_requirements(step.name, after);
            r.checks.insert(r.checks.end(), broken.begin(), broken.end());
            r.mismatches = verify::failures(r.checks);
        }
        r.seconds = seconds_since(started);
        facts = std::move(after);
        judge(i, report);
        observer_.step_finished(i, r);
        return r.status == StepStatus::ok;
    }

    // What the venv's requirements looked like before the first step: only what a step breaks counts.
    void set_baseline(const venv::Facts& facts) {
        baseline_ = verify::broken_requirements(facts.distributions, facts.markers);
    }

    void checks(ApplyReport& report) {
        for (const auto& check : m_.checks) {
            CheckReport c = run_check(m_, options_.venv, env_, check);
            observer_.check_finished(c);
            if (!c.ok) {
                report.mismatches.push_back(check_mismatch(c));
            }
            report.checks.push_back(std::move(c));
        }
        if (!report.mismatches.empty()) {
            report.outcome = Outcome::verification_failed;
            report.failure = "a check failed after the last step: " + verify::describe(report.mismatches.front());
        }
    }

private:
    static double seconds_since(Clock::time_point t) {
        return std::chrono::duration<double>(Clock::now() - t).count();
    }

    static std::vector<std::string> redacted(const std::vector<std::string>& argv) {
        std::vector<std::string> out;
        for (const auto& arg : argv) {
            out.push_back(base::redact(arg));
        }
        return out;
    }

    // The uninstall of what the step's `remove:` matches in the venv as it is now (an
    // earlier step may have added some); nullopt when it matches nothing.
    std::optional<installer::Invocation> removal_invocation(const manifest::Step& step, const venv::Facts& facts,
                                                            StepReport& r) const {
        std::vector<std::string> names;
        for (const auto& removal : plan::resolve_removals(step, facts.distributions)) {
            if (!removal.name.empty() && std::find(names.begin(), names.end(), removal.name) == names.end()) {
                names.push_back(removal.name);
            }
        }
        if (names.empty()) {
            return std::nullopt;
        }
        auto invocation = installer::removal_invocation(m_, names, options_.uv, options_.venv, options_.caller_env, mode_);
        r.remove_argv = redacted(invocation.argv);
        return invocation;
    }

    // The step's uv install, its requirements file written; nullopt for a step that only removes.
    std::optional<installer::Invocation> install_invocation(std::size_t i, const manifest::Step& step, StepReport& r) {
        if (r.requirements.empty()) {
            return std::nullopt;  // it only removes, or every package's marker is false here
        }
        auto file = requirements_dir_ / requirements_file({}, i).filename();
        std::filesystem::create_directories(requirements_dir_);
        base::write_file_atomic(file, installer::requirements_text(r.requirements));
        auto invocation = installer::step_invocation(m_, step, file, options_.uv, options_.venv, options_.caller_env, mode_);
        r.argv = redacted(invocation.argv);
        return invocation;
    }

    // Runs one uv command (none: nothing to do); false, with the report's installer_error set, when it failed.
    bool run_installer(StepReport& r, const std::optional<installer::Invocation>& invocation) {
        if (!invocation) {
            return true;
        }
        auto run = installer::run(*invocation, [&](std::string_view line) { observer_.installer_line(line); });
        r.summary.merge(run.summary);
        if (!run.process.ok()) {
            r.installer_error = "uv " + run.process.describe();
            return false;
        }
        return true;
    }

    // Requirements the steps so far broke (pip check against the venv before the apply).
    std::vector<verify::Judgement> judge_requirements(const std::string& step, const venv::Facts& after) const {
        auto broken = verify::new_breakage(baseline_, verify::broken_requirements(after.distributions, after.markers));
        std::vector<verify::Judgement> out;
        for (const auto& b : broken) {
            bool allowed = std::find(m_.allow_unmet.begin(), m_.allow_unmet.end(), b.dist) != m_.allow_unmet.end();
            std::string found = b.version + " needs it; " + b.problem +
                                (allowed ? " (accepted: allow_unmet lists " + b.dist + ")"
                                         : " (to accept it, add " + b.dist + " to allow_unmet)");
            out.push_back({step, b.dist, "requires", b.requirement, found, allowed});
        }
        if (broken.empty()) {
            std::string found = baseline_.empty() ? "none broken"
                                                  : "none newly broken (" + std::to_string(baseline_.size()) +
                                                        " already broken before the apply, left as they were)";
            out.push_back({step, "", "requires", "every installed requirement still met", found, true});
        }
        return out;
    }

    // The venv after a step; a venv whose python no longer answers fails the step.
    venv::Facts probe_after(std::size_t i, StepReport& r) {
        auto requests = verify::import_requests(verify::expectations_through(m_, i));
        try {
            return venv::probe(options_.venv, requests, env_);
        } catch (const Error& e) {
            r.mismatches.push_back({m_.steps[i].name, "", "probe", "the venv's python answers", e.what()});
            return {};
        }
    }

    void judge(std::size_t i, ApplyReport& report) {
        StepReport& r = report.steps[i];
        if (r.mismatches.empty()) {
            r.status = StepStatus::ok;
            return;
        }
        report.mismatches = r.mismatches;
        auto unchanged = unchanged_failing_packages(m_.steps[i], r);
        if (!unchanged.empty()) {
            r.status = StepStatus::installer_no_op;
            std::string names;
            for (const auto& u : unchanged) {
                names += (names.empty() ? "" : ", ") + u;
            }
            report.failure = "step '" + r.name + "': installer no-op: " + names +
                             " did not change and does not meet the step (" + verify::describe(r.mismatches.front()) +
                             ")";
        } else {
            r.status = StepStatus::verification_failed;
            report.failure = "verification failed: " + verify::describe(r.mismatches.front());
        }
    }

    const manifest::Manifest& m_;
    const Options& options_;
    Observer& observer_;
    base::Environment env_;
    std::filesystem::path requirements_dir_;
    installer::Mode mode_;
    std::vector<verify::BrokenRequirement> baseline_;
};

Outcome outcome_of(const std::vector<StepReport>& steps) {
    for (const auto& s : steps) {
        if (s.status == StepStatus::installer_failed || s.status == StepStatus::installer_no_op) {
            return Outcome::installer_failed;
        }
        if (s.status == StepStatus::verification_failed) {
            return Outcome::verification_failed;
        }
    }
    return Outcome::applied;
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
        report.outcome = Outcome::rollback_failed;
        report.rollback_error = e.what();
        // The journal stays open: the next run refuses, and `stackup rollback` retries.
        note(journal, RecordKind::rollback_failed, report.rollback_error);
        return;
    }
    note(journal, RecordKind::rolled_back, report.failure);
}

// Exit 7 when an earlier run did not end: its snapshot is the way back.
void refuse_interrupted(const std::filesystem::path& state_dir) {
    if (auto open = open_transaction(state_dir)) {
        throw Error(ExitCode::interrupted, describe_interrupted(*open, state_dir));
    }
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

void run_steps(Run& run, Journal& journal, const manifest::Manifest& m, venv::Facts& facts, ApplyReport& report) {
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

snapshot::SnapshotInfo take_snapshot(snapshot::Store& store, const manifest::Manifest& m, const Options& options,
                                     const venv::Facts& facts, Journal& journal) {
    snapshot::SnapshotInfo snap;
    try {
        snap = store.create(options.venv,
                            {"before apply of " + m.name, m.source.string(), distribution_pairs(facts),
                             options.snapshot_strategy});
    } catch (...) {
        journal.discard();  // nothing was touched
        throw;
    }
    Record taken;
    taken.kind = RecordKind::snapshot_taken;
    taken.snapshot_id = snap.id;
    journal.append(taken);
    return snap;
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

}  // namespace

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
    refuse_interrupted(options.state_dir);
    auto env = manifest::child_environment(m, options.venv, options.caller_env);

    ApplyReport report;
    venv::Facts facts = preflight(m, options, env, observer, report);

    auto journal = Journal::begin(options.state_dir, m.source.string(), options.venv.string());
    snapshot::Store store(options.state_dir);
    auto snap = take_snapshot(store, m, options, facts, journal);
    report.snapshot_id = snap.id;
    report.snapshot_path = snap.dir;
    observer.snapshot_taken(snap.id, report.snapshot_path);
    Preparer preparer(store, snap.id);

    Run run(m, options, observer, env, requirements_file(options.state_dir, 0).parent_path());
    run.set_baseline(facts);
    try {
        run_steps(run, journal, m, facts, report);
        report.outcome = outcome_of(report.steps);
        if (report.outcome == Outcome::applied) {
            run.checks(report);
        }
    } catch (const std::exception& e) {
        // Whatever went wrong mid-run, the venv goes back to its snapshot.
        report.outcome = Outcome::installer_failed;
        report.failure = std::string("the run stopped: ") + e.what();
    }
    preparer.finish();
    if (report.outcome != Outcome::applied) {
        roll_back(store, options, observer, journal, report);
        return report;
    }
    note(journal, RecordKind::committed, "");
    report.snapshot_damage = damage_after_apply(store, snap);
    report.pruned = prune(store, options.state_dir, options.venv, m.snapshot_keep, snap.id);
    return report;
}

ApplyReport dry_run(const manifest::Manifest& m, const Options& options, Observer& observer) {
    auto env = manifest::child_environment(m, options.venv, options.caller_env);
    ApplyReport report;
    venv::Facts facts = preflight(m, options, env, observer, report);
    // No lock is taken, so nothing of a concurrent apply's state is written to.
    base::ScratchDir scratch("stackup-dry-run-");
    LeaveLockFileAsFound untouched(options.venv);
    Run run(m, options, observer, env, scratch.path(), installer::Mode::dry_run);
    for (std::size_t i = 0; i < m.steps.size() && run.step(i, facts, report); ++i) {
    }
    report.outcome = outcome_of(report.steps);
    return report;
}

}  // namespace stackup::txn

#include "txn/steps.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "base/fs.hpp"
#include "base/url.hpp"
#include "installer/runner.hpp"
#include "txn/checks.hpp"
#include "txn/preflight.hpp"
#include "txn/state_dir.hpp"
#include "pep/name.hpp"

namespace stackup::txn {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<std::string> redacted(const std::vector<std::string>& argv) {
    std::vector<std::string> out;
    for (const auto& arg : argv) {
        out.push_back(base::redact(arg));
    }
    return out;
}

std::map<std::string, std::string> versions_of(const venv::Facts& facts) {
    std::map<std::string, std::string> out;
    for (const auto& d : facts.distributions) {
        out[d.normalized] = d.version;
    }
    return out;
}

class RealTools : public Tools {
public:
    installer::RunResult install(const installer::Invocation& invocation, const base::LineSink& on_line) override {
        return installer::run(invocation, on_line);
    }
    venv::Facts probe(const std::filesystem::path& venv, const std::vector<venv::ImportRequest>& requests,
                      const base::Environment& env, const venv::Bytecode& bytecode) override {
        return venv::probe(venv, requests, env, bytecode);
    }
    CheckReport check(const manifest::Manifest& m, const std::filesystem::path& venv, const base::Environment& env,
                      const manifest::Check& check) override {
        return run_check(m, venv, env, check);
    }
};

}  // namespace

Tools& real_tools() {
    static RealTools tools;
    return tools;
}

std::vector<PackageRow> package_rows(const manifest::Step* step, const venv::Facts& before,
                                     const venv::Facts& after) {
    auto was = versions_of(before);
    auto now = versions_of(after);
    std::set<std::string> names;
    for (const auto& req : step ? step->packages : std::vector<pep::Requirement>{}) {
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

namespace {

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

}  // namespace

// Returns false when the step failed; the report says how.
bool StepRunner::step(std::size_t i, venv::Facts& facts, ApplyReport& report) {
    const manifest::Step& step = m_.steps[i];
    StepReport& r = report.steps[i];
    r.requirements = requirement_lines(report.plan.steps.at(i), step);
    auto removal = removal_invocation(step, facts, r);
    auto install = install_invocation(i, step, r);
    auto started = Clock::now();
    auto stopped_by_signal = [&] {
        if (!detail::interrupted(report)) {
            return false;
        }
        r.status = StepStatus::interrupted;
        r.seconds = seconds_since(started);
        return true;
    };
    if (stopped_by_signal()) {
        return false;  // not started
    }
    observer_.step_started(i, m_.steps.size(), r);
    bool ran = run_installer(r, removal) && run_installer(r, install);
    if (stopped_by_signal()) {  // uv was stopped by it: not the installer's failure
        observer_.step_finished(i, r);
        return false;
    }
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
    venv::Facts after = probe_after(i, facts, r);
    if (stopped_by_signal()) {  // the probe was stopped by it: not a verification failure
        r.mismatches.clear();
        observer_.step_finished(i, r);
        return false;
    }
    r.packages = package_rows(&step, facts, after);
    if (r.mismatches.empty()) {
        r.checks = verify::judge_all(m_, i, after, {&baseline_facts_, gpus_});
        auto broken = judge_requirements(i, after, r);
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
// So are the CUDA libraries its binaries miss; the GPUs the kernels must run on are asked once.
void StepRunner::set_baseline(const venv::Facts& facts) {
    baseline_ = verify::broken_requirements(facts.distributions, facts.markers);
    baseline_facts_ = facts;
    if (!(m_.cuda && !m_.cuda->arch.empty())) {
        gpus_ = venv::probe_gpus(env_);
    }
}

void StepRunner::checks(ApplyReport& report) {
    for (const auto& check : m_.checks) {
        if (detail::interrupted(report)) {
            return;
        }
        CheckReport c = tools_.check(m_, options_.venv, env_, check);
        if (detail::interrupted(report)) {
            return;  // the check was stopped by it: not its failure
        }
        observer_.check_finished(c);
        if (!c.ok) {
            report.mismatches.push_back(check_mismatch(c));
        }
        report.checks.push_back(std::move(c));
    }
    if (!report.mismatches.empty() && report.failure.empty()) {
        report.failure = "a check failed after the last step: " + verify::describe(report.mismatches.front());
    }
}

// The uninstall of what the step's `remove:` matches in the venv as it is now (an
// earlier step may have added some); nullopt when it matches nothing.
std::optional<installer::Invocation> StepRunner::removal_invocation(const manifest::Step& step, const venv::Facts& facts,
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
std::optional<installer::Invocation> StepRunner::install_invocation(std::size_t i, const manifest::Step& step, StepReport& r) {
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
bool StepRunner::run_installer(StepReport& r, const std::optional<installer::Invocation>& invocation) {
    if (!invocation) {
        return true;
    }
    auto run = tools_.install(*invocation, [&](std::string_view line) { observer_.installer_line(line); });
    r.summary.merge(run.summary);
    if (!run.process.ok()) {
        r.installer_error = "uv " + run.process.describe();
        return false;
    }
    return true;
}

// Requirements the steps so far broke (pip check against the venv before the apply), each judged
// by whether a later step can still repair it (verify::judge_breakage).
std::vector<verify::Judgement> StepRunner::judge_requirements(std::size_t i, const venv::Facts& after,
                                                              StepReport& r) const {
    r.broken = verify::judge_breakage(m_, i, baseline_, verify::broken_requirements(after.distributions, after.markers));
    const std::string& step = m_.steps[i].name;
    std::vector<verify::Judgement> out;
    for (const auto& v : r.broken) {
        out.push_back({step, v.broken.dist, "requires", v.broken.requirement, verify::describe(v), !v.fails()});
    }
    if (r.broken.empty()) {
        std::string found = baseline_.empty() ? "none broken"
                                              : "none newly broken (" + std::to_string(baseline_.size()) +
                                                    " already broken before the apply, left as they were)";
        out.push_back({step, "", "requires", "every installed requirement still met", found, true});
    }
    return out;
}

// The venv after a step; a venv whose python no longer answers fails the step.
// The tree after a step, one python run. Only the expectations that can have changed are
// imported again: their dist, or a dist it requires, is one uv changed in this step (uv's own
// " - ", " + ", " ~ " lines); the others keep the result of the last import. After the last
// step, every expectation is imported again. A tree whose python no longer answers fails the step.
venv::Facts StepRunner::probe_after(std::size_t i, const venv::Facts& before, StepReport& r) {
    const auto active = verify::expectations_through(m_, i);
    std::vector<verify::ActiveExpectation> ask;
    if (i + 1 == m_.steps.size() || r.summary.changes.empty()) {
        ask = active;  // the last round is whole; without uv's list nothing is known to be unchanged
    } else {
        std::set<std::string> changed;
        for (const auto& c : r.summary.changes) {
            changed.insert(pep::normalize_name(c.name));
        }
        const auto affected = verify::affected_by(before.distributions, changed);
        std::copy_if(active.begin(), active.end(), std::back_inserter(ask), [&](const verify::ActiveExpectation& a) {
            return affected.count(a.expectation.dist) != 0 || before.import_of(a.expectation.dist) == nullptr;
        });
    }
    r.imported = ask.size();
    r.carried = active.size() - ask.size();
    venv::Facts after;
    try {
        after = tools_.probe(options_.venv, verify::import_requests(ask), env_, options_.bytecode);
    } catch (const Error& e) {
        r.mismatches.push_back({m_.steps[i].name, "", "probe", "the venv's python answers", e.what()});
        return {};
    }
    for (const auto& a : active) {
        if (after.import_of(a.expectation.dist) == nullptr) {
            if (const auto* earlier = before.import_of(a.expectation.dist)) {
                after.imports.push_back(*earlier);
            }
        }
    }
    return after;
}

void StepRunner::judge(std::size_t i, ApplyReport& report) {
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

}  // namespace stackup::txn

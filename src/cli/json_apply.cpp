// The plan and apply documents of `--json` (plan, apply, apply --dry-run).
#include "cli/json.hpp"

#include "base/interrupt.hpp"
#include "base/url.hpp"
#include "cli/json_parts.hpp"
#include "cli/render.hpp"

namespace stackup::cli {
namespace {

using detail::broken_json;
using detail::or_null;

// One requested package as the plan chose it: before is what is installed now, after the planned version.
Json planned_package_json(const plan::PlannedPackage& p) {
    Json j{{"name", p.name},
           {"requirement", p.requirement},
           {"before", or_null(p.installed)},
           {"after", p.choice ? Json(p.choice->wheel.version.str()) : Json(nullptr)},
           {"change", p.choice ? Json(p.change()) : Json(nullptr)},
           {"index", or_null(p.index)}};
    if (p.choice) {
        j["local"] = or_null(p.choice->wheel.version.local());
        j["file"] = p.choice->file.filename;
        j["url"] = base::without_credentials(p.choice->file.url);
        j["sha256"] = or_null(p.choice->file.sha256());
    }
    if (!p.problem.empty()) {
        j["problem"] = p.problem;
    }
    if (!p.skipped.empty()) {
        j["change"] = p.change();
        j["skipped"] = p.skipped;
    }
    return j;
}

// One dist a step's `remove:` matched: it goes before the step installs.
Json planned_removal_json(const plan::PlannedRemoval& r) {
    return {{"name", r.name},   {"requirement", nullptr}, {"pattern", r.pattern}, {"before", r.installed},
            {"after", nullptr}, {"change", "remove"},     {"index", nullptr}};
}

Json planned_step_json(const plan::PlannedStep& step) {
    Json packages = Json::array();
    bool missing = false;
    for (const auto& r : step.removals) {
        if (!r.name.empty()) {
            packages.push_back(planned_removal_json(r));
        }
    }
    for (const auto& p : step.packages) {
        packages.push_back(planned_package_json(p));
        missing = missing || (!p.choice && p.skipped.empty());
    }
    return {{"name", step.name},
            {"index", step.index},
            {"status", missing ? "no wheel" : "planned"},
            {"packages", packages},
            {"checks", Json::array()}};
}

// The file the plan chose for `name` in this step, if it chose one.
const plan::PlannedPackage* planned(const plan::Plan& plan, std::size_t step, const std::string& name) {
    if (step >= plan.steps.size()) {
        return nullptr;
    }
    for (const auto& p : plan.steps[step].packages) {
        if (p.name == name && p.choice) {
            return &p;
        }
    }
    return nullptr;
}

Json row_json(const txn::PackageRow& row, const plan::PlannedPackage* chosen) {
    Json j{{"name", row.name},
           {"before", or_null(row.before)},
           {"after", or_null(row.after)},
           {"change", change_kind(row)}};
    if (chosen) {
        j["file"] = chosen->choice->file.filename;
    }
    return j;
}

// Who can repair a broken requirement: "step", "dependencies", or null (nothing can).
Json repair_json(const verify::Repair& r) {
    switch (r.by) {
        case verify::Repair::By::step: return "step";
        case verify::Repair::By::dependencies: return "dependencies";
        case verify::Repair::By::nothing: break;
    }
    return nullptr;
}

// What the plan sees broken between steps, and when it is no longer seen.
Json between_json(const plan::Plan& plan) {
    Json out = Json::array();
    for (const auto& b : plan.between) {
        Json j = broken_json(b.broken);
        j["after_step"] = plan.steps[b.step].name;
        j["accepted"] = b.accepted;
        j["repair"] = repair_json(b.repair);
        j["repaired_by"] = b.gone ? Json(plan.steps[*b.gone].name) : Json(nullptr);
        j["message"] = b.text;
        out.push_back(j);
    }
    return out;
}

// A requirement broken after a step: who can repair it, and whether it failed the step.
Json verdict_json(const verify::RequirementVerdict& v) {
    Json j = broken_json(v.broken);
    j["accepted"] = v.accepted;
    j["fails"] = v.fails();
    j["repair"] = repair_json(v.repair);
    j["repaired_by"] = or_null(v.repair.step);
    j["message"] = verify::describe(v);
    return j;
}

// A step that ran: what uv changed and every check after it. One that did not run: the plan's rows.
Json step_json(const txn::ApplyReport& report, std::size_t i) {
    const bool dry_run = report.dry_run;
    const txn::StepReport& step = report.steps[i];
    Json j = i < report.plan.steps.size() ? planned_step_json(report.plan.steps[i]) : Json{{"name", step.name}};
    j["status"] = dry_run && step.status == txn::StepStatus::ok ? "dry run ok" : std::string(txn::to_string(step.status));
    if (step.status != txn::StepStatus::pending && !dry_run) {
        Json rows = Json::array();
        for (const auto& row : step.packages) {
            rows.push_back(row_json(row, planned(report.plan, i, row.name)));
        }
        j["packages"] = rows;
    }
    Json checks = Json::array();
    for (const auto& judged : step.checks) {
        checks.push_back(judgement_json(judged));
    }
    j["checks"] = checks;
    if (!dry_run) {
        Json broken = Json::array();
        for (const auto& v : step.broken) {
            broken.push_back(verdict_json(v));
        }
        j["broken_requirements"] = broken;
    }
    j["remove_argv"] = step.remove_argv;
    j["argv"] = step.argv;
    j["requirements"] = step.requirements;
    j["seconds"] = step.seconds;
    if (!dry_run) {
        j["imported"] = step.imported;
        j["carried"] = step.carried;
    }
    if (!step.installer_error.empty()) {
        j["installer_error"] = step.installer_error;
    }
    return j;
}

ExitCode code_of_step(txn::StepStatus status) {
    switch (status) {
        case txn::StepStatus::installer_failed:
        case txn::StepStatus::installer_no_op: return ExitCode::installer_failed;
        default: return ExitCode::verification_failed;
    }
}

void add_apply_errors(Document& doc, const txn::ApplyReport& report) {
    if (report.outcome == txn::Outcome::applied && report.blocked) {
        doc.add_error(error_json(ExitCode::running, std::to_string(report.running.size()) +
                                                        " process(es) use the venv: generation " +
                                                        report.generation_id + " is staged, not switched in"));
    }
    if (report.outcome == txn::Outcome::applied) {
        if (report.signal != 0) {
            doc.add_error(error_json(report.exit_code(), std::string("interrupted by ") +
                                                             base::interrupts::name(report.signal) +
                                                             " after the switch: the upgrade is live"));
        }
        return;
    }
    Json first = error_json(report.exit_code(), report.failure);
    for (const auto& step : report.steps) {
        if (step.status != txn::StepStatus::ok && step.status != txn::StepStatus::pending) {
            first["step"] = step.name;
            if (step.status != txn::StepStatus::interrupted) {  // else the run's own: "signal"
                first["code"] = code_name(code_of_step(step.status));
            }
        }
    }
    doc.add_error(first);
    for (const auto& m : report.mismatches) {
        doc.add_error(mismatch_json(ExitCode::verification_failed, m));
    }
    if (report.outcome == txn::Outcome::rollback_failed) {
        doc.add_error(error_json(ExitCode::rollback_failed, report.rollback_error));
    }
}

bool packages_changed(const txn::ApplyReport& report) {
    for (const auto& step : report.steps) {
        for (const auto& row : step.packages) {
            if (row.before != row.after) {
                return true;
            }
        }
    }
    return false;
}

// What a dry run would change: a requested package whose planned version is not the installed one.
bool plan_changes(const plan::Plan& plan) {
    for (const auto& step : plan.steps) {
        for (const auto& r : step.removals) {
            if (!r.name.empty()) {
                return true;
            }
        }
        for (const auto& p : step.packages) {
            if (p.choice && p.installed != p.choice->wheel.version.str()) {
                return true;
            }
        }
    }
    return false;
}

// Each requirement broken by one step and repaired by a later one.
Json repaired_json(const txn::ApplyReport& report) {
    Json repaired = Json::array();
    for (const auto& r : txn::repaired_between_steps(report)) {
        Json j = broken_json(r.broken);
        j["broken_by"] = r.broken_by;
        j["repaired_by"] = r.repaired_by;
        j["message"] = txn::describe(r);
        repaired.push_back(j);
    }
    return repaired;
}

// What only a real run has: its mode, generation, switch, drift, phases, relocations.
void add_run_fields(Json& body, const txn::ApplyReport& report) {
    body["mode"] = std::string(txn::to_string(report.mode));
    body["mode_reason"] = or_null(report.mode_reason);
    body["clone"] = report.clone.empty() ? Json(nullptr) : Json(report.clone.string());
    body["generation"] = report.generation_id.empty()
                             ? Json(nullptr)
                             : Json{{"id", report.generation_id}, {"number", report.generation}};
    body["switched"] = report.switched;
    body["staged"] = report.staged;
    body["blocked_by_running"] = report.blocked;
    body["venv_changed"] = txn::changed(txn::venv_fate(report));
    body["live_drift"] = report.live_drift;
    Json phases = Json::object();
    for (const auto& [name, seconds] : report.phases) {
        phases[name] = seconds;
    }
    body["phases"] = phases;
    body["relocated"] = report.relocated;
    body["recovered"] = report.recovered;
}

}  // namespace

void add_plan(Document& doc, const plan::Plan& plan) {
    Json steps = Json::array();
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
        steps.push_back(planned_step_json(plan.steps[i]));
        for (const auto& p : plan.steps[i].packages) {
            if (!p.problem.empty()) {
                Json e = error_json(ExitCode::preflight_failed, p.problem);
                e["step"] = plan.steps[i].name;
                e["dist"] = p.name;
                doc.add_error(e);
            }
        }
    }
    if (!plan.end_state.empty()) {
        doc.add_error(error_json(ExitCode::preflight_failed, plan.end_state));
    }
    doc.body()["steps"] = steps;
    doc.body()["between_steps"] = between_json(plan);
    doc.body()["warnings"] = plan.warnings;
    doc.body()["notes"] = plan.notes;
}

void add_apply(Document& doc, const txn::ApplyReport& report) {
    const bool dry_run = report.dry_run;
    Json steps = Json::array();
    for (std::size_t i = 0; i < report.steps.size(); ++i) {
        steps.push_back(step_json(report, i));
    }
    Json checks = Json::array();
    for (const auto& c : report.checks) {
        checks.push_back(check_json(c));
    }
    Json& body = doc.body();
    body["dry_run"] = dry_run;
    body["steps"] = steps;
    body["checks"] = checks;
    body["between_steps"] = between_json(report.plan);
    body["repaired_between_steps"] = dry_run ? Json::array() : repaired_json(report);
    body["warnings"] = report.plan.warnings;
    body["notes"] = report.plan.notes;
    body["uv"] = or_null(report.uv_version);
    body["snapshot"] = report.snapshot_id.empty()
                           ? Json(nullptr)
                           : Json{{"id", report.snapshot_id}, {"path", report.snapshot_path.string()}};
    body["rolled_back"] = report.rolled_back;
    body["venv_fate"] = std::string(txn::to_string(txn::venv_fate(report)));
    body["interrupted_by"] = report.signal ? Json(base::interrupts::name(report.signal)) : Json(nullptr);
    body["changed"] = !dry_run && !report.staged && report.outcome == txn::Outcome::applied && packages_changed(report);
    body["would_change"] = dry_run ? Json(report.outcome == txn::Outcome::applied && plan_changes(report.plan))
                                   : Json(nullptr);
    body["running"] = running_json(report.running);  // dry run: the processes that would block the switch
    body["running_unreadable"] = report.running_unreadable;
    body["pruned"] = report.pruned;
    body["snapshot_damage"] = report.snapshot_damage;
    body["rollback_warnings"] = report.rollback_warnings;
    if (!dry_run) {
        add_run_fields(body, report);
    }
    add_apply_errors(doc, report);
}

}  // namespace stackup::cli

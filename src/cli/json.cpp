#include "cli/json.hpp"

#include <algorithm>

#include "base/interrupt.hpp"

#include "base/lock.hpp"
#include "base/url.hpp"
#include "cli/recovery.hpp"
#include "cli/json_parts.hpp"
#include "cli/render.hpp"

namespace stackup::cli {
namespace detail {

Json or_null(const std::string& text) {
    return text.empty() ? Json(nullptr) : Json(text);
}

Json broken_json(const verify::BrokenRequirement& b) {
    return {{"dist", b.dist},
            {"version", b.version},
            {"requirement", b.requirement},
            {"required", or_null(b.required)},
            {"installed", or_null(b.installed)},
            {"problem", b.problem},
            {"message", verify::describe(b)}};
}

}  // namespace detail

namespace {

using detail::broken_json;
using detail::or_null;

Json open_json(const txn::OpenTransaction& open) {
    return {{"manifest", open.manifest},   {"venv", open.venv},
            {"pid", open.pid},             {"host", open.host},
            {"started", open.started},     {"snapshot", or_null(open.snapshot_id)},
            {"step", open.step},           {"step_name", or_null(open.step_name)},
            {"where", where(open)},        {"touched", open.touched()},
            {"mode", open.blue_green ? "blue-green" : "in-place"},
            {"switching", open.switching}, {"generation", or_null(open.generation)}};
}

std::string lock_state_name(txn::LockStatus state) {
    switch (state) {
        case txn::LockStatus::never_taken: return "never_taken";
        case txn::LockStatus::free: return "free";
        case txn::LockStatus::stale: return "stale";
        case txn::LockStatus::held: return "held";
        case txn::LockStatus::orphaned: return "orphaned";
    }
    return "unknown";
}

}  // namespace

Json running_json(const std::vector<venv::ProcessUse>& running) {
    Json out = Json::array();
    for (const auto& p : running) {
        out.push_back({{"pid", p.pid},
                       {"command", p.command},
                       {"user", p.user},
                       {"started", p.started.empty() ? Json(nullptr) : Json(p.started)},
                       {"unit", p.unit.empty() ? Json(nullptr) : Json(p.unit)},
                       {"how", p.how},
                       {"path", p.path}});
    }
    return out;
}

Json old_code_json(const std::vector<txn::OldCodeProcess>& old_code) {
    Json out = Json::array();
    for (const auto& p : old_code) {
        Json one = running_json({p.use})[0];
        one["generation"] = p.generation_id.empty() ? Json(nullptr) : Json(p.generation_id);
        out.push_back(std::move(one));
    }
    return out;
}

std::string code_name(ExitCode code) {
    switch (code) {
        case ExitCode::ok: return "ok";
        case ExitCode::verification_failed: return "verification_failed";
        case ExitCode::usage: return "usage";
        case ExitCode::preflight_failed: return "preflight_failed";
        case ExitCode::installer_failed: return "installer_failed";
        case ExitCode::rollback_failed: return "rollback_failed";
        case ExitCode::locked: return "locked";
        case ExitCode::interrupted: return "interrupted";
        case ExitCode::running: return "running";
        case ExitCode::not_finished: return "not_finished";
    }
    return static_cast<int>(code) > 128 ? "signal" : "unknown";
}

Json Document::finish(int exit_code) const {
    Json doc{{"schema", kJsonSchema},
             {"command", command_},
             {"ok", exit_code == 0},
             {"exit_code", exit_code},
             {"venv", venv_ ? Json(*venv_) : Json(nullptr)},
             {"errors", errors_}};
    if (exit_code != 0 && errors_.empty()) {
        // Every failure says why, even one that printed its reason only for people.
        doc["errors"].push_back(error_json(static_cast<ExitCode>(exit_code), "failed with exit code " +
                                                                                 std::to_string(exit_code)));
    }
    for (const auto& [key, value] : body_.items()) {
        doc[key] = value;
    }
    return doc;
}

Json error_json(ExitCode code, const std::string& message) {
    return {{"code", code_name(code)}, {"message", base::redact(message)}};
}

Json error_json(const Error& error) {
    Json j = error_json(error.code(), message_of(error));
    if (const auto& where = error.where()) {
        j["file"] = where->file;
        j["line"] = where->line;
        j["column"] = where->column;
    }
    return j;
}

Json mismatch_json(ExitCode code, const verify::Mismatch& m) {
    Json j = error_json(code, verify::describe(m));
    j["step"] = or_null(m.step);
    j["dist"] = or_null(m.dist);
    j["field"] = m.field;
    j["expected"] = m.expected;
    j["found"] = m.found;
    return j;
}

Json judgement_json(const verify::Judgement& j) {
    return {{"step", or_null(j.step)}, {"dist", or_null(j.dist)}, {"field", j.field},
            {"expected", j.expected},  {"found", j.found},        {"ok", j.ok}, {"warning", j.warning}};
}

Json check_json(const txn::CheckReport& check) {
    return {{"name", check.name}, {"ok", check.ok}, {"output", check.output}};
}

void add_verify(Document& doc, const txn::VerifyReport& report) {
    Json checks = Json::array();
    for (const auto& j : report.judgements) {
        checks.push_back(judgement_json(j));
    }
    Json python = Json::array();
    for (const auto& c : report.checks) {
        python.push_back(check_json(c));
    }
    Json broken = Json::array();
    for (const auto& b : report.broken) {
        broken.push_back(broken_json(b));
    }
    doc.body()["checks"] = checks;
    doc.body()["python_checks"] = python;
    doc.body()["unmet_requirements"] = broken;
    for (const auto& m : report.mismatches) {
        doc.add_error(mismatch_json(ExitCode::verification_failed, m));
    }
}

void add_rollback(Document& doc, const txn::RollbackReport& report) {
    Json& body = doc.body();
    body["snapshot"] = report.snapshot_id.empty() ? Json(nullptr)
                                                  : Json{{"id", report.snapshot_id},
                                                         {"path", report.snapshot_path.string()},
                                                         {"created", report.created}};
    body["closed"] = report.closed ? open_json(*report.closed) : Json(nullptr);
    body["warnings"] = report.warnings;
    body["generation"] = report.generation == 0 ? Json(nullptr) : Json(report.generation);
    body["replaced"] = report.replaced_id.empty()
                           ? Json(nullptr)
                           : Json{{"id", report.replaced_id}, {"number", report.replaced_generation}};
    body["nothing_changed"] = report.nothing_changed;
    body["running"] = running_json(report.running);
}

void add_status(Document& doc, const txn::StatusReport& r, const std::filesystem::path& state_dir) {
    Json& body = doc.body();
    body["state_dir"] = state_dir.string();
    Json lock{{"state", lock_state_name(r.lock.state)},
              {"held", r.lock.held()},
              {"path", r.lock.path.string()},
              {"holder", or_null(r.lock.holder)},
              {"holding_pids", r.lock.holding_pids}};
    if (auto holder = base::parse_holder(r.lock.holder)) {
        lock["pid"] = holder->pid;
        lock["host"] = holder->host;
        lock["command"] = holder->command;
        lock["since"] = holder->since;
    }
    body["lock"] = lock;
    body["interrupted"] = r.interrupted() ? open_json(*r.open) : Json(nullptr);
    body["in_progress"] = r.open && !r.interrupted() ? open_json(*r.open) : Json(nullptr);
    body["last_apply"] = r.last ? Json{{"when", r.last->when},
                                       {"command", r.last->command},
                                       {"manifest", r.last->manifest},
                                       {"result", r.last->result},
                                       {"detail", or_null(r.last->detail)},
                                       {"snapshot", or_null(r.last->snapshot_id)}}
                                : Json(nullptr);
    body["restored_to"] = r.last && r.last->result == "rolled back" ? or_null(r.last->snapshot_id) : Json(nullptr);
    body["running"] = running_json(r.running.using_venv);
    body["running_unreadable"] = std::max(r.running.unreadable, r.old_code_unreadable);
    body["running_old_code"] = old_code_json(r.old_code);
    Json snapshots = Json::array();
    for (const auto& info : r.snapshots) {
        Json s = snapshot_json(info);
        for (const auto& u : r.usage.snapshots) {
            if (u.id == info.id) {
                s["apparent_bytes"] = u.apparent_bytes;
                s["own_bytes"] = u.own_bytes;
            }
        }
        snapshots.push_back(s);
    }
    body["snapshots"] = snapshots;
    body["store_disk_bytes"] = r.usage.disk_bytes;
    body["venv_state"] = or_null(r.venv_state);
    body["live_generation"] = r.live ? Json{{"id", r.live->id}, {"number", r.live->generation}} : Json(nullptr);
    body["staged"] = r.staged ? Json{{"id", r.staged->generation_id}, {"base", r.staged->base_id},
                                     {"manifest", r.staged->manifest}, {"created", r.staged->created}}
                              : Json(nullptr);
    if (r.interrupted()) {
        doc.add_error(error_json(ExitCode::interrupted, describe_interrupted(*r.open, state_dir)));
    }
}

Json changes_json(const std::vector<snapshot::PackageChange>& changes) {
    Json out = Json::array();
    for (const auto& c : changes) {
        out.push_back({{"name", c.name}, {"before", or_null(c.before)}, {"after", or_null(c.after)}});
    }
    return out;
}

Json plan_json(const std::vector<snapshot::PlannedInstall>& plan) {
    Json out = Json::array();
    for (const auto& p : plan) {
        out.push_back({{"step", p.step}, {"requirements", p.requirements}});
    }
    return out;
}

Json snapshot_json(const snapshot::SnapshotInfo& info) {
    Json dists = Json::object();
    for (const auto& [name, version] : info.distributions) {
        dists[name] = version;
    }
    return {{"id", info.id},
            {"created", info.created},
            {"label", info.label},
            {"manifest", or_null(info.manifest)},
            {"venv", info.venv.string()},
            {"strategy", snapshot::to_string(info.strategy)},
            {"strategy_reason", or_null(info.strategy_reason)},
            {"entries", info.entries},
            {"file_bytes", info.file_bytes},
            {"tree_digest", info.tree_digest},
            {"path", info.dir.string()},
            {"distributions", dists},
            {"generation", info.generation},
            {"parent", or_null(info.parent)},
            {"outcome", or_null(info.outcome)},
            {"changes", changes_json(info.changes)},
            {"plan", plan_json(info.plan)}};
}

}  // namespace stackup::cli

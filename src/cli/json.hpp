#pragma once
// `--json`: one document per command on stdout. Builders are pure (report in,
// JSON out); Document collects what a command adds and finishes with the exit
// code, so `ok` is true exactly when the exit code is 0.

#include <filesystem>
#include <optional>
#include <string>

#include "base/error.hpp"
#include "cli/json_value.hpp"
#include "plan/planner.hpp"
#include "snapshot/store.hpp"
#include "txn/report.hpp"
#include "txn/rollback.hpp"
#include "txn/snapshots.hpp"
#include "txn/status.hpp"
#include "txn/verify_env.hpp"
#include "verify/verify.hpp"

namespace stackup::cli {

// The document's schema version: a consumer checks it before reading anything else.
inline constexpr int kJsonSchema = 1;

// "verification_failed", "usage", ... (the exit code's name).
std::string code_name(ExitCode code);

class Document {
public:
    void set_command(std::string command) { command_ = std::move(command); }
    // The top-level name, unless a nested command ("snapshots list") already said more.
    void set_command_once(std::string command) {
        if (command_.empty()) {
            command_ = std::move(command);
        }
    }
    void set_venv(const std::filesystem::path& venv) { venv_ = venv.string(); }
    // The command's own fields (steps, snapshot, lock, ...).
    Json& body() { return body_; }
    void add_error(Json error) { errors_.push_back(std::move(error)); }
    bool has_errors() const { return !errors_.empty(); }
    // The whole document: command, schema, ok, exit_code, venv, errors, then the body.
    [[nodiscard]] Json finish(int exit_code) const;

private:
    std::string command_;
    std::optional<std::string> venv_;
    Json body_ = Json::object();
    Json errors_ = Json::array();
};

// {code, message} plus file/line/column when the error has a location; the message is
// message_of(error) (cli/recovery.hpp).
Json error_json(const Error& error);
// What every process using the venv is (pid, command, user, started, unit, how, path).
Json running_json(const std::vector<venv::ProcessUse>& running);
// Each process still running a replaced generation's code, with that generation's id.
Json old_code_json(const std::vector<txn::OldCodeProcess>& old_code);
Json error_json(ExitCode code, const std::string& message);
// {code, message, step, dist, field, expected, found}
Json mismatch_json(ExitCode code, const verify::Mismatch& mismatch);

Json judgement_json(const verify::Judgement& judgement);
Json check_json(const txn::CheckReport& check);

// plan: {steps: [{name, index, status, packages: [...], checks: []}], warnings}; errors for each near miss.
void add_plan(Document& doc, const plan::Plan& plan);
// apply and apply --dry-run.
void add_apply(Document& doc, const txn::ApplyReport& report);  // a dry run's by its report.dry_run
void add_verify(Document& doc, const txn::VerifyReport& report);
void add_rollback(Document& doc, const txn::RollbackReport& report);
void add_status(Document& doc, const txn::StatusReport& report, const std::filesystem::path& state_dir);

Json snapshot_json(const snapshot::SnapshotInfo& info);
Json changes_json(const std::vector<snapshot::PackageChange>& changes);
Json plan_json(const std::vector<snapshot::PlannedInstall>& plan);

}  // namespace stackup::cli

#include "txn/inspect.hpp"

#include "base/error.hpp"
#include "installer/command.hpp"
#include "txn/common.hpp"

namespace stackup::txn {

VerifyReport verify_env(const manifest::Manifest& m, const Options& options) {
    auto env = installer::child_environment(m, options.venv, options.caller_env);
    VerifyReport report;
    std::size_t last = m.steps.empty() ? 0 : m.steps.size() - 1;
    report.expectations = verify::expectations_through(m, last);
    report.facts = venv::probe(options.venv, verify::import_requests(report.expectations), env);
    report.mismatches = verify::check_all(m, last, report.facts);
    for (const auto& check : m.checks) {
        CheckReport c = run_check(m, options.venv, env, check);
        if (!c.ok) {
            report.mismatches.push_back(check_mismatch(c));
        }
        report.checks.push_back(std::move(c));
    }
    return report;
}

RollbackReport rollback(const Options& options, const std::optional<std::string>& id) {
    auto lock = acquire_lock(options.state_dir, "rollback");
    snapshot::Store store(options.state_dir);
    std::optional<snapshot::SnapshotInfo> target;
    if (id) {
        target = store.find(*id);
        if (!target) {
            throw Error(ExitCode::rollback_failed, "no snapshot '" + *id + "' in " + options.state_dir.string());
        }
    } else {
        for (const auto& info : store.list()) {
            if (info.venv == options.venv) {
                target = info;
                break;
            }
        }
        if (!target) {
            throw Error(ExitCode::rollback_failed,
                        "no snapshot of " + options.venv.string() + " in " + options.state_dir.string());
        }
    }
    if (target->venv != options.venv) {
        throw Error(ExitCode::rollback_failed, "snapshot " + target->id + " is of " + target->venv.string() +
                                                   ", not of " + options.venv.string());
    }
    std::vector<std::string> warnings;
    try {
        auto restored = store.restore(target->id, options.venv);
        warnings = restored.warnings;
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error(ExitCode::rollback_failed, "restoring snapshot " + target->id + " (" +
                                                   target->dir.string() + ") into " +
                                                   options.venv.string() + " failed: " + e.what());
    }
    return {target->id, target->dir, target->created, warnings};
}

}  // namespace stackup::txn

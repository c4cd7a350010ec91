#include "cli/recovery.hpp"

#include <algorithm>

#include "base/argv.hpp"
#include "txn/advice.hpp"
#include "txn/recover.hpp"

namespace stackup::cli {

std::string command_for(const std::string& verb, const std::filesystem::path& venv,
                        const std::filesystem::path& state_dir, const std::vector<std::string>& more) {
    std::vector<std::string> argv{"stackup", verb, "--venv", venv.string()};
    // state_dir is <root>/<venv name>-<hash> (state_dir_for); the default root is beside the venv.
    auto root = state_dir.lexically_normal().parent_path();
    if (root != (venv.parent_path() / ".stackup").lexically_normal()) {
        argv.insert(argv.end(), {"--state-dir", root.string()});
    }
    argv.insert(argv.end(), more.begin(), more.end());
    return base::render_argv(argv);
}

std::string command_for(const txn::NextCommand& next) {
    using Verb = txn::NextCommand::Verb;
    const char* verb = next.verb == Verb::apply ? "apply" : next.verb == Verb::switch_staged ? "switch" : "rollback";
    return command_for(verb, next.venv, next.state_dir, next.args);
}

std::string where(const txn::OpenTransaction& open) {
    using Kind = txn::RecordKind;
    std::string step_text =
        "step " + std::to_string(open.step) + (open.step_name.empty() ? "" : " (" + open.step_name + ")");
    switch (open.last) {
        case Kind::started: return "before the snapshot (nothing touched)";
        case Kind::snapshot_taken:
            return open.blue_green ? "after cloning the venv, before the first step"
                                   : "after the snapshot, before the first step";
        case Kind::switching: return "switching the verified generation in";
        case Kind::step_running: return step_text + " running";
        case Kind::step_verified: return step_text + " verified";
        case Kind::rolling_back: return "rolling back";
        case Kind::rollback_failed: return "rollback failed";
        case Kind::committed:
        case Kind::rolled_back:
        case Kind::discarded:
        case Kind::staged: break;
    }
    return "ended";
}

std::string recovery_hint(const txn::OpenTransaction& open, const std::filesystem::path& state_dir) {
    const std::string rollback = "`" + command_for("rollback", open.venv, state_dir) + "`";
    const std::string status = "`" + command_for("status", open.venv, state_dir) + "`";
    switch (open.recovery()) {
        case txn::Recovery::before_switch:
            return "it died before its switch, so nothing was changed in " + open.venv +
                   ": the next apply cleans up its clone, or run " + rollback + " to close the journal, or " + status;
        case txn::Recovery::while_switching:
            return "it died while switching: the venv holds the whole old or the whole new generation, " + status +
                   " says which; run " + rollback + " to be back on generation " + open.snapshot_id +
                   ", or the next apply keeps what is live";
        case txn::Recovery::restore_snapshot:
            return "run " + rollback + " to restore snapshot " + open.snapshot_id + ", or " + status;
        case txn::Recovery::close_untouched: break;
    }
    return "it died before its snapshot, so the venv was not touched: run " + rollback +
           " to close the journal, or " + status;
}

std::string describe_interrupted(const txn::OpenTransaction& open, const std::filesystem::path& state_dir) {
    std::string text = "an interrupted transaction is open in " + txn::journal_path(state_dir).string() +
                       ": apply of " + (open.manifest.empty() ? std::string("(unknown manifest)") : open.manifest) +
                       ", pid " + std::to_string(open.pid) + (open.host.empty() ? "" : " on " + open.host) +
                       ", started " + open.started + ", stopped " + where(open);
    if (!open.why.empty()) {
        text += " (" + open.why + ")";
    }
    return text + "; " + recovery_hint(open, state_dir);
}

std::string describe_running(const venv::ProcessScan& scan, const std::filesystem::path& venv, const std::string& then) {
    std::string out = std::to_string(scan.using_venv.size()) + " process(es) use " + venv.string() + ":";
    std::vector<std::string> units;
    for (const auto& p : scan.using_venv) {
        out += "\n    " + venv::describe(p);
        if (!p.unit.empty() && std::find(units.begin(), units.end(), p.unit) == units.end()) {
            units.push_back(p.unit);
        }
    }
    if (scan.unreadable > 0) {
        out += "\n    (and " + std::to_string(scan.unreadable) + " process(es) could not be read: another user's, or protected)";
    }
    out += "\n  a switch under them would mix the old code they loaded with the new files they load next;";
    for (const auto& u : units) {
        out += "\n  for " + u + ": systemctl stop " + u + " && " + then + " --wait-running 60 && systemctl start " + u;
    }
    out += "\n  else stop them and run: " + then +
           "\n  (--wait-running SECONDS waits for them to end; --switch-running switches anyway, naming them for a restart)";
    return out;
}

// The words after an AdvisedError's what(): the command that is the way out.
std::string advice_words(txn::Advice advice) {
    switch (advice) {
        case txn::Advice::staged_gone: return " (stage again with `stackup apply --stage`)";
        case txn::Advice::staged_stale: return ": stage it again with `stackup apply --stage`";
        case txn::Advice::nothing_staged: return "; `stackup apply --stage MANIFEST` builds the next generation";
        case txn::Advice::no_such_generation: return " (`stackup history` shows them)";
        case txn::Advice::no_such_snapshot: return " (see `stackup snapshots list`)";
        case txn::Advice::needed_for_recovery: return " (run `stackup rollback` first, or `stackup status`)";
        case txn::Advice::orphan_holds_lock: return ", then run `stackup status`";
    }
    return "";
}

std::string message_of(const Error& error) {
    if (const auto* advised = dynamic_cast<const txn::AdvisedError*>(&error)) {
        return advised->what() + advice_words(advised->advice()) + advised->then();
    }
    if (const auto* interrupted = dynamic_cast<const txn::InterruptedError*>(&error)) {
        return describe_interrupted(interrupted->open(), interrupted->state_dir());
    }
    if (const auto* running = dynamic_cast<const txn::RunningError*>(&error)) {
        return std::string(running->what()) + ": " +
               describe_running(running->scan(), running->again().venv, command_for(running->again()));
    }
    return error.describe();
}

}  // namespace stackup::cli

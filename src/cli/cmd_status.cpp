// stackup status [MANIFEST]: lock, interrupted transaction (exit 7), last apply, snapshots.
#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/recovery.hpp"
#include "cli/render.hpp"
#include "txn/status.hpp"

namespace stackup::cli {
namespace {

void print_lock(std::ostream& out, const txn::LockState& lock) {
    switch (lock.state) {
        case txn::LockStatus::never_taken:
            out << "lock:        free (never taken: " << lock.path.string() << ")\n";
            return;
        case txn::LockStatus::free: out << "lock:        free\n"; return;
        case txn::LockStatus::stale:
            out << "lock:        STALE (free, but its last holder never released it): " << lock.holder_description
                << "; the next run takes it over\n";
            return;
        case txn::LockStatus::held:
            out << "lock:        HELD by " << (lock.holder.empty() ? "an unknown holder" : lock.holder) << "\n";
            return;
        case txn::LockStatus::orphaned: break;
    }
    out << "lock:        HELD, but its holder " << lock.holder_description
        << ": a process it started still holds the lock";
    for (std::size_t i = 0; i < lock.holding_pids.size(); ++i) {
        out << (i == 0 ? " (pid " : ", ") << lock.holding_pids[i];
    }
    out << (lock.holding_pids.empty() ? "" : ")") << "; nothing can run until it ends\n";
}

void print_open(std::ostream& out, const txn::StatusReport& r, const std::filesystem::path& state_dir) {
    if (!r.open) {
        out << "transaction: none open\n";
        return;
    }
    const auto& open = *r.open;
    out << (r.interrupted() ? "transaction: INTERRUPTED\n" : "transaction: in progress (the lock is held)\n");
    out << "  manifest:  " << open.manifest << "\n"
        << "  pid:       " << open.pid << (open.host.empty() ? "" : " on " + open.host) << "\n"
        << "  started:   " << open.started << "\n"
        << "  stopped:   " << where(open) << (open.why.empty() ? "" : " (" + open.why + ")") << "\n"
        << "  mode:      " << (open.blue_green ? "blue-green (the steps ran in a clone beside the venv)" : "in place")
        << "\n"
        << "  snapshot:  "
        << (!open.snapshot_id.empty() ? open.snapshot_id
                                      : std::string("none taken: the venv was not touched")) << "\n";
    if (!r.venv_state.empty()) {
        out << "  venv:      " << r.venv_state << "\n";
    }
    if (r.interrupted()) {
        out << "  to recover: " << recovery_hint(open, state_dir) << " (journal: " << txn::journal_path(state_dir).string()
            << ")\n";
    }
}

void print_last(std::ostream& out, const txn::StatusReport& r) {
    if (!r.last) {
        out << "last apply:  none recorded\n";
        return;
    }
    if (r.last->command == "rollback") {
        out << "last:        rolled back at " << r.last->when << " by " << r.last->detail << "\n";
    } else {
        out << "last apply:  " << r.last->result << " at " << r.last->when << ", manifest " << r.last->manifest
            << (r.last->snapshot_id.empty() ? "" : ", snapshot " + r.last->snapshot_id)
            << (r.last->detail.empty() ? "" : " (" + r.last->detail + ")") << "\n";
    }
    // Restored means equal to that snapshot then; a committed apply moved the venv past its snapshot.
    if (r.last->result == "rolled back" && !r.last->snapshot_id.empty()) {
        out << "venv:        equal to snapshot " << r.last->snapshot_id << " when it was restored (" << r.last->when
            << "); changed since only if something else wrote to it\n";
    }
}

// Each row with its real disk use: hard links share blocks with the venv and with each other.
void print_snapshots(std::ostream& out, const txn::StatusReport& r) {
    out << "snapshots:   " << r.snapshots.size() << " (store on disk: " << render_bytes(r.usage.disk_bytes)
        << ", shared blocks counted once)\n";
    for (const auto& info : r.snapshots) {
        out << "  " << render_snapshot_row(info);
        for (const auto& u : r.usage.snapshots) {
            if (u.id == info.id) {
                out << " [apparent " << render_bytes(u.apparent_bytes) << ", only in this snapshot "
                    << render_bytes(u.own_bytes) << "]";
            }
        }
        out << "\n";
    }
}

std::string generation_name(const txn::StatusReport& r, const std::string& id) {
    for (const auto& info : r.snapshots) {
        if (info.id == id) {
            return "generation " + std::to_string(info.generation) + " (" + id + ")";
        }
    }
    return id.empty() ? std::string("a removed generation") : id;
}

// Who uses the venv now, and who still runs a replaced generation's code (needrestart's question).
void print_processes(std::ostream& out, const txn::StatusReport& r) {
    if (r.running.using_venv.empty()) {
        out << "processes:   none use the venv";
    } else {
        out << "processes:   " << r.running.using_venv.size() << " use the venv (a switch waits for them):";
        for (const auto& p : r.running.using_venv) {
            out << "\n  " << venv::describe(p);
        }
    }
    const auto unreadable = std::max(r.running.unreadable, r.old_code_unreadable);
    out << (unreadable > 0 ? "\n  (" + std::to_string(unreadable) + " process(es) could not be read: another user's)" : "")
        << "\n";
    if (r.old_code.empty()) {
        return;
    }
    out << "old code:    " << r.old_code.size()
        << " process(es) still run the code of a generation that is no longer live: restart them";
    for (const auto& p : r.old_code) {
        out << "\n  " << venv::describe(p.use) << " [" << generation_name(r, p.generation_id) << "]";
    }
    out << "\n";
}

}  // namespace

std::function<int()> setup_status(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    add_venv_manifest(sub, *manifest_path);
    return [manifest_path, &common] {
        auto options = venv_options(*manifest_path, common);
        auto report = txn::status(options);
        add_status(*common.doc, report, options.state_dir);
        std::ostream& out = std::cout;
        out << "venv:        " << options.venv.string() << "\n"
            << "state:       " << options.state_dir.string() << "\n";
        print_lock(out, report.lock);
        print_open(out, report, options.state_dir);
        print_last(out, report);
        out << "generation:  "
            << (report.live ? std::to_string(report.live->generation) + " (" + report.live->id + ") is live"
                            : std::string("the venv is no recorded generation (changed since, or none taken)"))
            << "\n";
        if (report.staged) {
            out << "staged:      generation " << report.staged->generation_id << " (" << report.staged->manifest
                << ", " << report.staged->created << "): `stackup switch` puts it in\n";
        }
        print_processes(out, report);
        print_snapshots(out, report);
        return report.interrupted() ? static_cast<int>(ExitCode::interrupted) : 0;
    };
}

}  // namespace stackup::cli

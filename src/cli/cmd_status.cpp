// stackup status [MANIFEST]: lock, interrupted transaction (exit 7), last apply, snapshots.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/render.hpp"
#include "txn/snapshots.hpp"

namespace stackup::cli {
namespace {

void print_lock(std::ostream& out, const txn::LockState& lock) {
    if (!lock.exists) {
        out << "lock:        free (never taken: " << lock.path.string() << ")\n";
    } else if (lock.held) {
        out << "lock:        HELD by " << (lock.holder.empty() ? "an unknown holder" : lock.holder) << "\n";
    } else {
        out << "lock:        free" << (lock.holder.empty() ? "" : " (last held by " + lock.holder + ")") << "\n";
    }
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
        << "  stopped:   " << open.where() << (open.why.empty() ? "" : " (" + open.why + ")") << "\n"
        << "  snapshot:  " << (open.touched() ? open.snapshot_id : "none taken: the venv was not touched") << "\n";
    if (r.interrupted()) {
        out << "  to recover: " << txn::recovery_hint(open) << " (journal: " << txn::journal_path(state_dir).string()
            << ")\n";
    }
}

void print_last(std::ostream& out, const txn::StatusReport& r) {
    if (!r.last) {
        out << "last apply:  none recorded\n";
        return;
    }
    out << "last apply:  " << r.last->result << " at " << r.last->when << ", manifest " << r.last->manifest
        << (r.last->snapshot_id.empty() ? "" : ", snapshot " + r.last->snapshot_id)
        << (r.last->detail.empty() ? "" : " (" + r.last->detail + ")") << "\n";
}

}  // namespace

std::function<int()> setup_status(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    sub.add_option("manifest", *manifest_path, "a manifest naming the venv (or pass --venv)");
    return [manifest_path, &common] {
        std::optional<manifest::Manifest> m;
        if (!manifest_path->empty()) {
            m = load_manifest(*manifest_path, common);
        }
        auto options = txn_options(common, m ? &*m : nullptr);
        auto report = txn::status(options);
        std::ostream& out = std::cout;
        out << "venv:        " << options.venv.string() << "\n"
            << "state:       " << options.state_dir.string() << "\n";
        print_lock(out, report.lock);
        print_open(out, report, options.state_dir);
        print_last(out, report);
        out << "snapshots:   " << report.snapshots.size() << "\n";
        for (const auto& info : report.snapshots) {
            out << "  " << render_snapshot_row(info) << "\n";
        }
        return report.interrupted() ? static_cast<int>(ExitCode::interrupted) : 0;
    };
}

}  // namespace stackup::cli

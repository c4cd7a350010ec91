// stackup rollback [MANIFEST] [--to ID]: restore a snapshot exactly; closes an interrupted journal.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "txn/rollback.hpp"

namespace stackup::cli {

std::function<int()> setup_rollback(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    sub.add_option("manifest", *manifest_path, "a manifest naming the venv (or pass --venv)")->type_name("MANIFEST");
    sub.add_option("--to", *id, "the snapshot id, from `stackup snapshots list` (default: the interrupted run's, else the latest of this venv)")->type_name("ID");
    return [manifest_path, id, &common] {
        std::optional<manifest::Manifest> m;
        if (!manifest_path->empty()) {
            m = load_manifest(*manifest_path, common);
        }
        auto options = txn_options(common, m ? &*m : nullptr);
        auto report = txn::rollback(options, id->empty() ? std::nullopt : std::optional<std::string>(*id));
        add_rollback(*common.doc, report);
        if (common.verbosity == Verbosity::quiet) {
            return 0;
        }
        if (report.closed) {
            std::cout << "the interrupted apply of " << report.closed->manifest << " (pid " << report.closed->pid
                      << ", started " << report.closed->started << ", stopped " << report.closed->where()
                      << ") is closed.\n";
        }
        for (const auto& warning : report.warnings) {
            std::cout << "note: " << warning << "\n";
        }
        if (report.snapshot_id.empty()) {
            std::cout << "nothing to restore: that run died before its snapshot, so the venv was not touched.\n";
            return 0;
        }
        std::cout << "rolled back " << options.venv.string() << " to snapshot " << report.snapshot_id
                  << " (taken " << report.created << "); the tree was re-checked against it.\n";
        return 0;
    };
}

}  // namespace stackup::cli

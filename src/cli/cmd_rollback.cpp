// stackup rollback [MANIFEST] [--to ID]: restore a snapshot exactly; closes an interrupted journal.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/recovery.hpp"
#include "txn/rollback.hpp"

namespace stackup::cli {

std::function<int()> setup_rollback(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    auto running = std::make_shared<RunningOptions>();
    add_venv_manifest(sub, *manifest_path);
    add_running_options(sub, *running);
    sub.add_option("--to", *id, "a generation number or snapshot id, from `stackup history` (default: the interrupted run's, else the generation the live one was built from)")->type_name("ID");
    return [manifest_path, id, running, &common] {
        auto options = venv_options(*manifest_path, common);
        set_running(options, *running);
        auto report = txn::rollback(options, id->empty() ? std::nullopt : std::optional<std::string>(*id));
        add_rollback(*common.doc, report);
        if (common.verbosity == Verbosity::quiet) {
            return 0;
        }
        if (report.closed) {
            std::cout << "the interrupted apply of " << report.closed->manifest << " (pid " << report.closed->pid
                      << ", started " << report.closed->started << ", stopped " << where(*report.closed)
                      << ") is closed.\n";
        }
        for (const auto& warning : report.warnings) {
            std::cout << "note: " << warning << "\n";
        }
        if (report.snapshot_id.empty()) {
            std::cout << (report.nothing_changed
                              ? "nothing to restore: that run died before its switch, so the venv was never changed.\n"
                              : "nothing to restore: that run died before its snapshot, so the venv was not touched.\n");
            return 0;
        }
        print_needs_restart(std::cerr, report.running, common.paint);
        std::cout << "rolled back " << options.venv.string() << " to generation " << report.generation << " ("
                  << report.snapshot_id << ", taken " << report.created << "); the tree was re-checked against it.\n";
        if (!report.replaced_id.empty()) {
            std::cout << "the replaced tree is kept as generation " << report.replaced_generation << "; to undo: "
                      << command_for("rollback", options.venv, options.state_dir,
                                          {"--to", std::to_string(report.replaced_generation)})
                      << "\n";
        }
        return 0;
    };
}

}  // namespace stackup::cli

// stackup switch [MANIFEST]: puts the generation `apply --stage` built into the venv.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/recovery.hpp"
#include "txn/switch.hpp"

namespace stackup::cli {

std::function<int()> setup_switch(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    auto running = std::make_shared<RunningOptions>();
    add_venv_manifest(sub, *manifest_path);
    add_running_options(sub, *running);
    return [manifest_path, running, &common] {
        auto options = venv_options(*manifest_path, common);
        set_running(options, *running);
        auto r = txn::switch_staged(options);
        common.doc->body()["running"] = running_json(r.running);
        common.doc->body()["generation"] = {{"id", r.generation_id}, {"number", r.generation}};
        common.doc->body()["previous"] = {{"id", r.previous_id}, {"number", r.previous}};
        common.doc->body()["manifest"] = r.manifest;
        if (common.verbosity != Verbosity::quiet) {
            std::cout << "switched: " << options.venv.string() << " is generation " << r.generation << " ("
                      << r.generation_id << ", staged from " << r.manifest << "), exchanged in one rename.\n"
                      << "to undo: " << command_for("rollback", options.venv, options.state_dir) << "\n";
        }
        print_needs_restart(std::cerr, r.running, common.paint);
        return 0;
    };
}

}  // namespace stackup::cli

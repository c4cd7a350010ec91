// stackup plan MANIFEST: preflight only; says exactly what each step will install.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/render.hpp"
#include "installer/command.hpp"
#include "txn/preflight.hpp"

namespace stackup::cli {

std::function<int()> setup_plan(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    sub.add_option("manifest", *manifest_path, "the manifest (YAML)")->required();
    return [manifest_path, &common] {
        auto m = load_manifest(*manifest_path, common);
        auto options = txn_options(common, &m);
        auto env = installer::child_environment(m, options.venv, options.caller_env);
        auto facts = venv::probe(options.venv, {}, env);
        txn::check_interpreter(m, facts, options.venv);
        txn::check_toolkit(m, env);
        txn::check_driver(m, env);
        auto plan = txn::plan_against_indexes(m, facts, options.http);
        std::cout << "plan for " << options.venv.string() << " (python " << facts.interpreter.version << "):\n"
                  << render_plan(plan);
        if (!plan.ok()) {
            std::cerr << "stackup: preflight failed: " << plan.problems.size()
                      << " requested package(s) have no wheel for this venv; nothing was touched\n";
            return static_cast<int>(ExitCode::preflight_failed);
        }
        return 0;
    };
}

}  // namespace stackup::cli

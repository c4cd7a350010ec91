// stackup plan MANIFEST: preflight only; says exactly what each step will install.
#include <iostream>

#include <CLI/CLI.hpp>

#include "base/argv.hpp"
#include "base/error.hpp"
#include "base/fs.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/recovery.hpp"
#include "cli/render.hpp"
#include "manifest/environment.hpp"
#include "txn/preflight.hpp"
#include "txn/running.hpp"
#include "txn/saved_plan.hpp"
#include "venv/processes.hpp"

namespace stackup::cli {
namespace {

void save_plan(const std::string& path, const plan::SavedPlan& saved) {
    try {
        base::write_file_atomic(path, plan::to_json(saved));
    } catch (const std::exception& e) {
        throw Error(ExitCode::usage, "cannot write the plan to " + path + ": " + e.what());
    }
    std::cout << "plan saved to " << path << "; apply exactly it with: "
              << base::render_argv({"stackup", "apply", path}) << "\n";
}

}  // namespace

std::function<int()> setup_plan(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    auto out_path = std::make_shared<std::string>();
    sub.add_option("manifest", *manifest_path, "the manifest (YAML)")->required()->type_name("MANIFEST");
    sub.add_option("--out", *out_path, "save the plan (JSON) for `stackup apply FILE`")->type_name("FILE");
    return [manifest_path, out_path, &common] {
        auto m = load_manifest(*manifest_path, common);
        auto options = txn_options(common, &m);
        auto env = manifest::child_environment(m, options.venv, options.caller_env);
        auto [host, plan] = txn::inspect_and_plan(m, options.venv, env, options.http, options.page_cache);
        const auto& [facts, seen] = host;
        add_plan(*common.doc, plan);
        Json& body = common.doc->body();
        body["manifest"] = m.source.string();
        body["python"] = facts.interpreter.version;
        body["toolkit"] = seen.toolkit.empty() ? Json(nullptr) : Json(seen.toolkit);
        body["driver"] = seen.driver.empty() ? Json(nullptr) : Json(seen.driver);
        body["saved_to"] = nullptr;
        std::cout << "plan for " << options.venv.string() << " (python " << facts.interpreter.version << "):\n"
                  << render_plan(plan, common.paint);
        const auto running = venv::processes_using(options.venv);  // what would block apply's switch
        body["running"] = running_json(running.using_venv);
        body["running_unreadable"] = running.unreadable;
        if (!running.using_venv.empty()) {
            std::cout << common.paint("note", Color::yellow) << ": an apply would build and stage, but not switch now: "
                      << describe_running(running, options.venv,
                                               command_for("switch", options.venv, options.state_dir, {}))
                      << "\n";
        }
        if (!plan.ok()) {
            std::cerr << "stackup: preflight failed: " << plan.problems.size() << " problem(s) above ("
                      << (plan.end_state.empty() ? plan.problems.size() : plan.problems.size() - 1)
                      << " requested package(s) without a wheel for this venv"
                      << (plan.end_state.empty() ? "" : "; the end state would mix CUDA builds") << "); nothing was touched\n";
            return static_cast<int>(ExitCode::preflight_failed);
        }
        if (!out_path->empty()) {
            save_plan(*out_path, txn::make_saved_plan(m, options, facts, seen, plan));
            body["saved_to"] = std::filesystem::absolute(*out_path).string();
        }
        return 0;
    };
}

}  // namespace stackup::cli

// stackup init --venv DIR: writes a manifest describing the venv as it is (the
// baseline), or with --target-cuda the draft of an upgrade; touches nothing.
#include <iostream>

#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "manifest/environment.hpp"
#include "plan/draft.hpp"
#include "venv/toolkit.hpp"

namespace stackup::cli {
namespace {

struct InitOptions {
    std::string out;           // --out FILE; "" for stdout
    bool force = false;        // --force: overwrite FILE
    std::string target_cuda;   // --target-cuda X.Y; "" for the baseline
};

// The toolkit where $CUDA_HOME, else /usr/local/cuda, points: only one whose nvcc reports a release.
std::optional<plan::DraftToolkit> find_toolkit(const base::Environment& env) {
    std::vector<std::filesystem::path> homes;
    if (auto it = env.find("CUDA_HOME"); it != env.end() && !it->second.empty()) {
        homes.emplace_back(it->second);
    }
    homes.emplace_back("/usr/local/cuda");
    for (const auto& home : homes) {
        auto found = venv::probe_toolkit(home, env);
        if (found.release) {
            return plan::DraftToolkit{*found.release, home};
        }
    }
    return std::nullopt;
}

void refuse_overwrite(const std::string& path, bool force) {
    if (!path.empty() && !force && std::filesystem::exists(std::filesystem::symlink_status(path))) {
        throw Error(ExitCode::usage, path + " exists; pass --force to overwrite it");
    }
}

void save(const std::string& path, const std::string& text) {
    try {
        base::write_file_atomic(path, text);
    } catch (const std::exception& e) {
        throw Error(ExitCode::usage, "cannot write the manifest to " + path + ": " + e.what());
    }
}

}  // namespace

// The JSON Schema editors check the manifest with (yaml-language-server reads the first
// line): the installed copy, else the source tree's beside an in-tree build; "" when neither.
std::string schema_path() {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    for (const std::filesystem::path& candidate :
         {std::filesystem::path(STACKUP_SCHEMA_PATH), exe.parent_path().parent_path() / "manifests/schema-v1.json"}) {
        if (!candidate.empty() && std::filesystem::is_regular_file(candidate, ec)) {
            return std::filesystem::canonical(candidate, ec).string();
        }
    }
    return "";
}

std::function<int()> setup_init(CLI::App& sub, const CommonOptions& common) {
    auto o = std::make_shared<InitOptions>();
    sub.add_option("--out", o->out, "write the manifest to FILE (default: stdout); never over an existing one")
        ->type_name("FILE");
    sub.add_flag("--force", o->force, "overwrite the --out FILE when it exists");
    sub.add_option("--target-cuda", o->target_cuda,
                   "draft the upgrade to this CUDA instead: steps, remove: lines and index URLs to check")
        ->type_name("X.Y");
    return [o, &common] {
        if (common.venv.empty()) {
            throw Error(ExitCode::usage, "which venv? init needs --venv DIR");
        }
        refuse_overwrite(o->out, o->force);
        auto options = txn_options(common, nullptr);
        manifest::Manifest bare;
        bare.venv = options.venv;
        auto env = manifest::child_environment(bare, options.venv, options.caller_env);
        auto facts = venv::probe(options.venv, {}, env);
        plan::DraftInput in{options.venv, facts.interpreter, facts.distributions, find_toolkit(options.caller_env)};
        std::string text = o->target_cuda.empty() ? plan::draft_baseline(in) : plan::draft_upgrade(in, o->target_cuda);
        if (auto schema = schema_path(); !schema.empty()) {
            text = "# yaml-language-server: $schema=" + schema + "\n" + text;
        }
        Json& body = common.doc->body();
        body["manifest"] = text;
        body["saved_to"] = nullptr;
        if (o->out.empty()) {
            if (!common.json) {
                std::cout << text << std::flush;
            }
            return 0;
        }
        save(o->out, text);
        body["saved_to"] = std::filesystem::absolute(o->out).string();
        if (common.verbosity != Verbosity::quiet) {
            std::cout << (o->target_cuda.empty() ? "baseline of " : "draft of the CUDA " + o->target_cuda + " upgrade of ")
                      << options.venv.string() << " written to " << o->out << "; "
                      << (o->target_cuda.empty() ? "check it with: stackup verify " : "review it, then: stackup plan ")
                      << o->out << "\n";
        }
        return 0;
    };
}

}  // namespace stackup::cli

#include "cli/common.hpp"

#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "txn/state_dir.hpp"

namespace stackup::cli {

manifest::Manifest load_manifest(const std::string& path, const CommonOptions& common) {
    manifest::ParseOptions options;
    if (!common.venv.empty()) {
        options.venv_override = common.venv;
    }
    return manifest::load(path, options);
}

ApplyInput load_manifest_or_plan(const std::string& path, const CommonOptions& common) {
    std::string text = manifest::read_input(path, "manifest or plan");
    if (!plan::looks_like_saved_plan(text)) {
        manifest::ParseOptions options;
        if (!common.venv.empty()) {
            options.venv_override = common.venv;
        }
        return {manifest::parse(text, path, options), std::nullopt};
    }
    auto saved = plan::parse_saved_plan(text, path);
    if (!common.venv.empty() &&
        std::filesystem::weakly_canonical(std::filesystem::absolute(common.venv)) != saved.venv) {
        throw Error(ExitCode::usage, path + " is a plan for the venv " + saved.venv + ", not " + common.venv +
                                         ": make a plan for that venv");
    }
    manifest::ParseOptions options;
    options.venv_override = saved.venv;
    return {manifest::load(saved.manifest, options), std::move(saved)};
}

void add_running_options(CLI::App& sub, RunningOptions& running) {
    sub.add_flag("--switch-running", running.switch_running,
                 "switch even while processes use the venv (they are named: they need a restart)");
    sub.add_option("--wait-running", running.wait_running_s,
                   "wait up to SECONDS for the processes using the venv to end before the switch")
        ->type_name("SECONDS")
        ->check(CLI::Range(0, 24 * 3600));
}

void set_running(txn::Options& options, const RunningOptions& running) {
    options.switch_running = running.switch_running;
    options.wait_running_s = running.wait_running_s;
}

void print_needs_restart(std::ostream& out, const std::vector<venv::ProcessUse>& running, const Paint& paint) {
    if (running.empty()) {
        return;
    }
    out << paint("warning", Color::yellow) << ": switched under " << running.size()
        << " running process(es): they keep the code they loaded and load the new files next; restart them:\n";
    for (const auto& p : running) {
        out << "    " << venv::describe(p)
            << (p.unit.empty() ? std::string() : "  ->  systemctl restart " + p.unit) << "\n";
    }
}

void add_venv_manifest(CLI::App& sub, std::string& manifest_path) {
    sub.add_option("manifest", manifest_path, "a manifest naming the venv (or pass --venv)")->type_name("MANIFEST");
}

txn::Options venv_options(const std::string& manifest_path, const CommonOptions& common) {
    std::optional<manifest::Manifest> m;
    if (!manifest_path.empty()) {
        m = load_manifest(manifest_path, common);
    }
    return txn_options(common, m ? &*m : nullptr);
}

txn::Options txn_options(const CommonOptions& common, const manifest::Manifest* m) {
    txn::Options o;
    if (!common.venv.empty()) {
        o.venv = std::filesystem::absolute(common.venv).lexically_normal();
    } else if (m != nullptr) {
        o.venv = m->venv;
    } else {
        throw Error(ExitCode::usage, "which venv? pass --venv DIR or a manifest");
    }
    if (!o.venv.has_filename()) {
        o.venv = o.venv.parent_path();
    }
    // Snapshots record the venv with symlinks resolved; so do we.
    o.venv = std::filesystem::weakly_canonical(o.venv);
    std::filesystem::path root = common.state_dir.empty() ? std::filesystem::path() : std::filesystem::absolute(common.state_dir);
    o.state_dir = txn::state_dir_for(o.venv, root);
    o.uv = common.uv.empty() ? "uv" : common.uv;
    o.caller_env = base::current_environment();
    o.http.timeout_seconds = common.http_timeout;
    o.page_cache.mode = common.no_cache  ? index::CacheMode::off
                        : common.refresh ? index::CacheMode::refresh
                                         : index::CacheMode::use;
    o.page_cache.dir = common.cache_dir.empty() ? index::default_cache_dir(o.caller_env)
                                                : std::filesystem::absolute(common.cache_dir);
    auto strategy = snapshot::strategy_from_string(common.snapshot_strategy);
    if (!strategy) {
        throw Error(ExitCode::usage, "--snapshot-strategy: '" + common.snapshot_strategy +
                                         "' is not one of automatic, reflink, hardlink, copy");
    }
    o.snapshot_strategy = *strategy;
    common.doc->set_venv(o.venv);
    return o;
}

}  // namespace stackup::cli

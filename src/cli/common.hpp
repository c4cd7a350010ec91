#pragma once
// What every command shares: the common options, and turning them plus a
// manifest into the transaction's options.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli/json.hpp"
#include "cli/terminal.hpp"

#include "manifest/manifest.hpp"
#include "plan/plan_file.hpp"
#include "txn/report.hpp"

namespace CLI {
class App;
}

namespace stackup::cli {

enum class Verbosity { quiet, normal, verbose };

struct CommonOptions {
    std::string venv;        // --venv
    std::string state_dir;   // --state-dir / STACKUP_STATE_DIR
    std::string uv;          // --uv / STACKUP_UV
    long http_timeout = 30;  // --http-timeout SECONDS, per request attempt
    std::string cache_dir;   // --cache-dir / STACKUP_CACHE_DIR
    bool no_cache = false;   // --no-cache: index pages neither read from nor written to the cache
    bool refresh = false;    // --refresh: every cached index page revalidated
    std::string snapshot_strategy = "automatic";  // --snapshot-strategy
    std::string log_file;    // --log-file
    Verbosity verbosity = Verbosity::normal;
    bool json = false;       // --json: `doc` goes to stdout, everything else to stderr
    Paint paint;             // colour: only on a terminal, never with NO_COLOR
    bool live = false;       // a live status line: only on a terminal
    std::shared_ptr<Document> doc = std::make_shared<Document>();  // filled by the command, printed by cli::run
};

manifest::Manifest load_manifest(const std::string& path, const CommonOptions& common);

// What `apply` was given: a manifest, or a saved plan and the manifest it names.
struct ApplyInput {
    manifest::Manifest manifest;
    std::optional<plan::SavedPlan> saved_plan;
};
// A saved plan brings its own venv; --venv naming another one is a usage error.
ApplyInput load_manifest_or_plan(const std::string& path, const CommonOptions& common);

// The venv from --venv, else the manifest's; throws Error(usage) when neither says.
txn::Options txn_options(const CommonOptions& common, const manifest::Manifest* m);

// The commands that only need to know which venv: an optional MANIFEST argument naming it.
void add_venv_manifest(CLI::App& sub, std::string& manifest_path);

// --switch-running and --wait-running SECONDS (apply, switch): the switch rule's two ways out.
struct RunningOptions {
    bool switch_running = false;
    int wait_running_s = 0;
};
void add_running_options(CLI::App& sub, RunningOptions& running);
void set_running(txn::Options& options, const RunningOptions& running);

// --switch-running: the processes a switch went on under, each named as needing a restart.
void print_needs_restart(std::ostream& out, const std::vector<venv::ProcessUse>& running, const Paint& paint);
// txn_options() of that manifest when one was given (loaded, so its errors say where), else of --venv.
txn::Options venv_options(const std::string& manifest_path, const CommonOptions& common);

}  // namespace stackup::cli

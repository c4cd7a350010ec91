#pragma once
// The command table: one entry per command, each defined in its own cmd_*.cpp.

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace stackup::cli {

struct CommonOptions;

// Adds the command's options to `sub` and returns what runs it (an exit code).
using CommandSetup = std::function<std::function<int()>(CLI::App& sub, const CommonOptions& common)>;

struct Command {
    const char* name;
    const char* summary;
    CommandSetup setup;
    // It changes the venv or the state dir: a signal lets it finish or undo its work
    // (base/interrupt.hpp), then it exits 128+N; any other command exits 128+N at once.
    bool transactional = false;
};

std::function<int()> setup_plan(CLI::App& sub, const CommonOptions& common);
std::function<int()> setup_apply(CLI::App& sub, const CommonOptions& common);
std::function<int()> setup_verify(CLI::App& sub, const CommonOptions& common);
std::function<int()> setup_rollback(CLI::App& sub, const CommonOptions& common);
std::function<int()> setup_init(CLI::App& sub, const CommonOptions& common);
std::function<int()> setup_snapshots(CLI::App& sub, const CommonOptions& common);
std::function<int()> setup_status(CLI::App& sub, const CommonOptions& common);
std::function<int()> setup_history(CLI::App& sub, const CommonOptions& common);
std::function<int()> setup_switch(CLI::App& sub, const CommonOptions& common);
std::function<int()> setup_inspect(CLI::App& sub, const CommonOptions& common);

inline const std::vector<Command>& commands() {
    static const std::vector<Command> table{
        {"plan", "preflight: every requested wheel on its index, the exact file each step installs", setup_plan},
        {"apply", "build the next generation beside the venv, verify each step there, switch it in with one rename", setup_apply, true},
        {"switch", "switch in the generation `apply --stage` built (refused when the venv moved on)", setup_switch, true},
        {"verify", "check the venv against the manifest's expectations (touches nothing)", setup_verify},
        {"inspect", "per dist: the CUDA its binaries need, their GPU kernels, the libraries missing (touches nothing)", setup_inspect},
        {"rollback", "switch back to the previous (or --to the named) generation, exactly; can be undone", setup_rollback, true},
        {"history", "the generations: number, time, manifest, what changed, outcome, which is live", setup_history},
        {"init", "write a manifest of the venv as it is (a baseline), or --target-cuda: draft an upgrade", setup_init},
        {"snapshots", "the snapshot store: create, list, show, delete, prune", setup_snapshots, true},
        {"status", "lock holder, interrupted transaction (then exit 7), last apply, snapshots", setup_status},
    };
    return table;
}

}  // namespace stackup::cli

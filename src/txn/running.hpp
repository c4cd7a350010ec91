#pragma once
// The switch rule (PRODUCT.md: a running process is never mixed): before the venv is switched
// (apply, `switch`) or changed in place, the processes using it are found
// (venv/processes.hpp); by default they stop the switch, with what to do said.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "base/error.hpp"

#include "txn/report.hpp"
#include "venv/processes.hpp"

namespace stackup::txn {

// The processes using the venv, waiting up to options.wait_running_s for them to end (a
// SIGINT/SIGTERM/SIGHUP ends the wait). A switch_running run does not wait.
venv::ProcessScan processes_at_switch(const Options& options);

// One line per process (PID, command, user, unit, since, how), and what to do: for a unit's,
// `systemctl stop UNIT && THEN --wait-running 60 && systemctl start UNIT`; else stop them and
// run `then` (the command that would switch: `stackup switch ...`, `stackup rollback ...`).
std::string describe_running(const venv::ProcessScan& scan, const Options& options, const std::string& then);

// What keeps a switch from happening under running processes: exit 8, the processes named in
// the message and kept for --json.
class RunningError : public Error {
public:
    RunningError(std::string message, venv::ProcessScan scan)
        : Error(ExitCode::running, std::move(message)), scan_(std::move(scan)) {}
    const venv::ProcessScan& scan() const { return scan_; }

private:
    venv::ProcessScan scan_;
};

// Throws RunningError (`what`: what did not happen; `again`: the command to run once they stop) naming them when processes use the venv and the run may not
// switch under them; returns the scan (what switch_running goes on with).
venv::ProcessScan require_unused(const Options& options, const std::string& what, const std::string& again);

// A process still running the code of a generation that is no longer live (needrestart's
// question): after an exchange, the files a process had mapped or open live on under the old
// tree's new name, <state>/snapshots/<id>/ready/..., and /proc shows them there.
struct OldCodeProcess {
    venv::ProcessUse use;
    std::string generation_id;   // "" when the path names no generation (a pruned one's object)
};

// The processes whose executable, maps, working directory or open files are in a generation's
// tree in `state_dir` (none: no state dir), and how many could not be read.
std::vector<OldCodeProcess> processes_on_old_generations(const std::filesystem::path& state_dir,
                                                          std::size_t* unreadable = nullptr);

}  // namespace stackup::txn

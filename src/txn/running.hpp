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

// The stackup command that does what a refusal did not, as facts: the CLI spells it out.
struct NextCommand {
    enum class Verb { apply, switch_staged, rollback };
    Verb verb = Verb::apply;
    std::filesystem::path venv;
    std::filesystem::path state_dir;
    std::vector<std::string> args;  // after the options: the manifest, `--to ID`
};

// What keeps a switch from happening under running processes: exit 8. what() says what did not
// happen; the processes are kept for the message and --json, with the command to run once they stop.
class RunningError : public Error {
public:
    RunningError(std::string what, venv::ProcessScan scan, NextCommand again)
        : Error(ExitCode::running, std::move(what)), scan_(std::move(scan)), again_(std::move(again)) {}
    const venv::ProcessScan& scan() const { return scan_; }
    const NextCommand& again() const { return again_; }

private:
    venv::ProcessScan scan_;
    NextCommand again_;
};

// Throws RunningError (`what`: what did not happen; `verb` and `args`: the command that would do
// it once they stop) when processes use the venv and the run may not switch under them; returns
// the scan (what switch_running goes on with).
venv::ProcessScan require_unused(const Options& options, const std::string& what, NextCommand::Verb verb,
                                 std::vector<std::string> args = {});

// A process still running the code of a generation that is no longer live (needrestart's
// question): after an exchange, the files a process had mapped or open live on under the old
// tree's new name, <state>/snapshots/<id>/ready/..., and /proc shows them there.
struct OldCodeProcess {
    venv::ProcessUse use;
    std::string generation_id;   // "" when the path names no generation (a pruned one's object)
};

// Who runs which generation's code (`status`, `history`), in one walk of /proc: the processes
// using the venv (the live generation), and those whose executable, maps, working directory or
// open files are in a generation's tree in `state_dir` (none: no state dir), with how many of
// those could not be read.
struct CodeInUse {
    venv::ProcessScan live;
    std::vector<OldCodeProcess> old_code;
    std::size_t old_code_unreadable = 0;
};
CodeInUse code_in_use(const std::filesystem::path& venv, const std::filesystem::path& state_dir);

}  // namespace stackup::txn

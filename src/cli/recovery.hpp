#pragma once
// What to do next, in words: how an interrupted run stopped and how to recover from it, who
// keeps a switch from happening, and the stackup command lines that do it, quoted to paste into
// a shell. txn gives the facts (OpenTransaction, InterruptedError, RunningError); this says them.

#include <filesystem>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "txn/advice.hpp"
#include "txn/journal.hpp"
#include "txn/running.hpp"
#include "venv/processes.hpp"

namespace stackup::cli {

// `stackup VERB --venv V [--state-dir ROOT] MORE...`, quoted to paste into a shell; --state-dir
// only when `state_dir` (this venv's own folder) is not under the venv's default root.
std::string command_for(const std::string& verb, const std::filesystem::path& venv,
                        const std::filesystem::path& state_dir, const std::vector<std::string>& more = {});
std::string command_for(const txn::NextCommand& next);

// "step 2 (sgl-kernel) running", "rolling back", ...
std::string where(const txn::OpenTransaction& open);
// "run `stackup rollback --venv V` to restore snapshot X, or `stackup status --venv V`" (or to
// close an untouched run, or what a blue/green run left).
std::string recovery_hint(const txn::OpenTransaction& open, const std::filesystem::path& state_dir);
// Why a new run cannot start: names the manifest, the step, the snapshot, the pid and start
// time, and how to recover.
std::string describe_interrupted(const txn::OpenTransaction& open, const std::filesystem::path& state_dir);

// One line per process (PID, command, user, unit, since, how), and what to do: for a unit's,
// `systemctl stop UNIT && THEN --wait-running 60 && systemctl start UNIT`; else stop them and
// run `then` (the command that would switch: `stackup switch ...`, `stackup rollback ...`).
std::string describe_running(const venv::ProcessScan& scan, const std::filesystem::path& venv, const std::string& then);

// The words an AdvisedError's advice adds after its what(): the command that is the way out.
std::string advice_words(txn::Advice advice);

// What an error says to people and in --json: describe() (file:line:col: what()), and for the
// errors that carry facts, those facts said: the interrupted run and how to recover, the
// processes and the command to run once they stop.
std::string message_of(const Error& error);

}  // namespace stackup::cli

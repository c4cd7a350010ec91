#pragma once
// A refusal whose way out is another stackup command: the situation as a fact, for the CLI to
// say what to run (cli/recovery.cpp: message_of), so that txn never spells a command.

#include <string>
#include <utility>

#include "base/error.hpp"

namespace stackup::txn {

enum class Advice {
    staged_gone,          // the staged generation (or its base) is gone: stage again
    staged_stale,         // the venv moved on since it was staged: stage again
    nothing_staged,       // `switch` with nothing staged: stage first
    no_such_generation,   // `rollback --to` a generation that is not there: the history lists them
    no_such_snapshot,     // a snapshot id that is not this venv's: the snapshot list has them
    needed_for_recovery,  // the snapshot is an interrupted run's way back: recover first
    orphan_holds_lock,    // the lock's holder died, a child of it holds the lock: look again once it ends
};

class AdvisedError : public Error {
public:
    // The message: `what`, the advice said, then `then`.
    AdvisedError(ExitCode code, std::string what, Advice advice, std::string then = {})
        : Error(code, std::move(what)), advice_(advice), then_(std::move(then)) {}
    Advice advice() const { return advice_; }
    const std::string& then() const { return then_; }

private:
    Advice advice_;
    std::string then_;
};

}  // namespace stackup::txn

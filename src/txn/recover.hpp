#pragma once
// What an interrupted blue/green run left, and how the next run resolves it.
// A blue/green run changes the venv only by one exchange, so the venv is
// either its old tree or the verified new one; the venv's root inode against
// the journal's `switching` record tells which.

#include <filesystem>
#include <optional>
#include <string>

#include "base/error.hpp"
#include "snapshot/store.hpp"
#include "txn/journal.hpp"

namespace stackup::txn {

// An earlier run's journal is open and stops this one (exit 7). It carries the facts; the CLI
// says how to recover (what() names only the journal).
class InterruptedError : public Error {
public:
    InterruptedError(OpenTransaction open, const std::filesystem::path& state_dir)
        : Error(ExitCode::interrupted, "an interrupted transaction is open in " + journal_path(state_dir).string()),
          open_(std::move(open)), state_dir_(state_dir) {}
    const OpenTransaction& open() const { return open_; }
    const std::filesystem::path& state_dir() const { return state_dir_; }

private:
    OpenTransaction open_;
    std::filesystem::path state_dir_;
};

// Whether the interrupted blue/green run `open` had switched its generation in:
// the venv's root directory is the clone it recorded. Looks, changes nothing.
[[nodiscard]] bool switched_in(const OpenTransaction& open, const std::filesystem::path& venv);

// "the venv is the new generation 4 (switched in before the run died)" or "nothing was changed in V".
[[nodiscard]] std::string blue_green_state(const OpenTransaction& open, const std::filesystem::path& venv);

// Closes the journal of an interrupted blue/green run and keeps what is live: committed
// when it had switched (its generation is verified and recorded), discarded when it had
// not (a generation it recorded but never switched in is removed). Returns one line
// saying what was found and done.
std::string resolve_blue_green(snapshot::Store& store, const std::filesystem::path& state_dir,
                               const std::filesystem::path& venv, const OpenTransaction& open);

// The journal's `switching` record for exchanging `clone` (to be recorded as `generation`)
// with `venv`: both root inodes, which switched_in() compares later.
[[nodiscard]] record::Switching switching_record(const std::string& generation, const std::filesystem::path& clone,
                                      const std::filesystem::path& venv);

// Removes the generation `apply --stage` left (it was built from the venv as it is now, which
// the caller is about to replace) and its staged.json; returns what it did, or why it could not
// read staged.json, for the caller to report; nullopt when nothing was staged. `why` ends the line.
std::optional<std::string> discard_staged(snapshot::Store& store, const std::filesystem::path& state_dir,
                                          const std::string& why);

}  // namespace stackup::txn

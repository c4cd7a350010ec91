#pragma once
// The durable journal of one apply: <state>/journal, JSON lines, each state change appended and
// fsynced, so that a run killed at any point (kill -9, power loss) leaves a record of where it
// was. The records, one struct per kind, and their format are in journal_format.hpp.
//
// A journal whose last record is not terminal is an interrupted transaction. A run that ends
// normally writes <state>/last-transaction.json and removes the journal, so the next run
// starts clean.
//
// A journal holding `started` but no `snapshot_taken` means the run died before it touched the
// venv: it is still reported as interrupted, and a rollback resolves it by closing it (there is
// nothing to restore).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/fs.hpp"
#include "txn/journal_format.hpp"

namespace stackup::txn {

// What an interrupted run needs, judged from its journal alone (the venv's root inode may say
// more: recover.hpp).
enum class Recovery {
    close_untouched,    // in place, died before its snapshot: the venv was not touched; close the journal
    restore_snapshot,   // in place, died after its snapshot: restore it
    before_switch,      // blue/green, died before its switch: nothing was changed; the next apply cleans up
    while_switching,    // blue/green, reached the exchange: the venv is wholly old or wholly new
};

// What a journal that did not end says about its run.
struct OpenTransaction {
    std::string manifest;
    std::string venv;
    long pid = 0;
    std::string host;
    std::string started;             // time of the started record
    std::string snapshot_id;         // "" when it died before the snapshot: nothing touched
    std::size_t step = 0;            // the last step named, 0 for none
    std::string step_name;
    bool step_verified = false;      // whether that step passed
    RecordKind last = RecordKind::started;
    std::string why;                 // of rolling_back / rollback_failed
    std::string last_time;
    bool blue_green = false;         // the run built the next generation beside the venv
    bool switching = false;          // blue/green: it reached the exchange (switching record)
    std::string generation;          // switching: the generation being switched in
    std::uint64_t clone_inode = 0;
    std::uint64_t live_inode = 0;
    // Whether the venv may differ from the run's snapshot: in place once the snapshot
    // exists; blue/green only once it reached the exchange.
    bool touched() const { return blue_green ? switching : !snapshot_id.empty(); }
    Recovery recovery() const {
        if (blue_green) {
            return switching ? Recovery::while_switching : Recovery::before_switch;
        }
        return touched() ? Recovery::restore_snapshot : Recovery::close_untouched;
    }
};

// The records folded into the state of their run; nullopt when they end with a terminal one
// (or there are none).
[[nodiscard]] std::optional<OpenTransaction> open_transaction_of(const std::vector<Record>& records);

std::filesystem::path journal_path(const std::filesystem::path& state_dir);
std::filesystem::path last_transaction_path(const std::filesystem::path& state_dir);
std::filesystem::path staged_path(const std::filesystem::path& state_dir);

// The run a journal in `state_dir` says was interrupted; nullopt when there is
// no journal or it ended. Throws Error(interrupted) for an unreadable journal.
[[nodiscard]] std::optional<OpenTransaction> open_transaction(const std::filesystem::path& state_dir);

// <state>/last-transaction.json, else the last-apply.json an earlier release wrote; nullopt
// when neither exists. Throws std::runtime_error naming the file it cannot read.
[[nodiscard]] std::optional<LastTransaction> last_transaction(const std::filesystem::path& state_dir);
// Records `last` as the last transaction (whole file, atomically; an earlier release's
// last-apply.json, now outdated, is removed).
void record_last(const std::filesystem::path& state_dir, const LastTransaction& last);

[[nodiscard]] std::optional<StagedGeneration> staged_generation(const std::filesystem::path& state_dir);
void record_staged(const std::filesystem::path& state_dir, const StagedGeneration& staged);
void clear_staged(const std::filesystem::path& state_dir);

// How a run ended normally: the journal's terminal record and the last transaction's result.
enum class Ending { committed, rolled_back, discarded, staged };

// The writer. Not copyable; one per run, under the venv lock.
class Journal {
public:
    // Creates <state>/journal afresh with its started record.
    // `mode`: "blue-green" or "in-place".
    [[nodiscard]] static Journal begin(const std::filesystem::path& state_dir, const std::string& manifest,
                                       const std::string& venv, const std::string& mode = "in-place");
    // Reopens an existing journal to append to it (rollback closing an interrupted run).
    [[nodiscard]] static Journal reopen(const std::filesystem::path& state_dir);

    // Stamps the time and appends.
    void append(RecordData data);
    // Appends the terminal record, writes last-transaction.json atomically (`why` is its
    // detail), removes the journal.
    void close(Ending ending, const std::string& why);
    // Removes the journal without a record: the run ended before it touched anything.
    void discard();

    const std::string& manifest() const { return manifest_; }
    const std::string& snapshot_id() const { return snapshot_id_; }

private:
    Journal(std::filesystem::path state_dir, base::UniqueFd fd) : state_dir_(std::move(state_dir)), fd_(std::move(fd)) {}

    std::filesystem::path state_dir_;
    base::UniqueFd fd_;
    std::string manifest_;
    std::string snapshot_id_;
    bool first_ = true;
};

}  // namespace stackup::txn

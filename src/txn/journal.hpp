#pragma once
// The durable journal of one apply: <state>/journal, JSON lines, each state
// change appended and fsynced, so that a run killed at any point (kill -9,
// power loss) leaves a record of where it was.
//
// States of a run, one record each (the first also carries "version"):
//   started{manifest, venv, pid, host, mode}  lock held, preflight passed, nothing touched yet
//   snapshot_taken{id}                   the generation the run starts from (in place: from here
//                                        on the venv may differ from it)
//   step_running{n, name}                step n (1-based) is installing (blue/green: into the clone)
//   step_verified{n}                     step n installed and every expectation so far holds
//   switching{generation, clone, live}   blue/green: the clone is verified and recorded as
//                                        generation `generation`; the exchange of the clone (root
//                                        inode `clone`) with the venv (root inode `live`) may have
//                                        happened: the venv's root inode tells which tree it holds
//   rolling_back{why}                    the restore of the snapshot has begun
//   committed | rolled_back | discarded | staged   terminal: the run ended normally (discarded:
//                                        blue/green failed, the venv was never changed; staged:
//                                        built and verified, waiting for `stackup switch`)
//   rollback_failed{why}                 NOT terminal: the venv needs `stackup rollback`
// A journal whose last record is not terminal is an interrupted transaction.
// A run that ends normally writes <state>/last-apply.json and removes the
// journal, so the next run starts clean.
//
// A journal holding `started` but no `snapshot_taken` means the run died
// before it touched the venv: it is still reported as interrupted, and
// `stackup rollback` resolves it by closing it (there is nothing to restore).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/fs.hpp"

namespace stackup::txn {

inline constexpr int kJournalVersion = 1;

enum class RecordKind {
    started,
    snapshot_taken,
    step_running,
    step_verified,
    rolling_back,
    committed,
    rolled_back,
    rollback_failed,
    switching,
    discarded,
    staged,
};

std::string_view to_string(RecordKind kind);
std::optional<RecordKind> record_kind_from_string(std::string_view text);
bool is_terminal(RecordKind kind);

struct Record {
    RecordKind kind = RecordKind::started;
    std::string time;          // ISO-8601 UTC, set by the writer
    std::string manifest;      // started
    std::string venv;          // started
    long pid = 0;              // started
    std::string host;          // started
    std::string snapshot_id;   // snapshot_taken
    std::size_t step = 0;      // step_running, step_verified (1-based)
    std::string name;          // step_running
    std::string why;           // rolling_back, rollback_failed, rolled_back (optional)
    std::string mode;          // started: "blue-green" or "in-place" ("" in journals written before: in place)
    std::string generation;    // switching: the id of the generation being switched in
    std::uint64_t clone_inode = 0;  // switching: the root inode of the clone
    std::uint64_t live_inode = 0;   // switching: the root inode of the venv before the switch
    friend bool operator==(const Record&, const Record&) = default;
};

// One journal line, newline included; `with_version` for the first record.
std::string record_to_line(const Record& record, bool with_version);
// Every complete record of a journal's text. A torn last line (no newline, or
// not JSON) is dropped; a bad line before it, or a version other than ours,
// throws std::runtime_error naming `source`.
[[nodiscard]] std::vector<Record> parse_journal(std::string_view text, const std::string& source);

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
    // "step 2 (sgl-kernel) running", "rolling back", ...
    std::string where() const;
};

// nullopt when the records end with a terminal one (or there are none).
[[nodiscard]] std::optional<OpenTransaction> open_transaction_of(const std::vector<Record>& records);

// Why a new run cannot start: names the manifest, the step, the snapshot, the
// pid and start time, and how to recover.
std::string describe_interrupted(const OpenTransaction& open, const std::filesystem::path& state_dir);
// "run `stackup rollback --venv V` to restore snapshot X, or `stackup status --venv V`" (or to
// close an untouched run); --state-dir is added when `state_dir` is not the venv's default one.
std::string recovery_hint(const OpenTransaction& open, const std::filesystem::path& state_dir);
// `stackup VERB --venv V [--state-dir ROOT] MORE...`, quoted to paste into a shell; --state-dir
// only when `state_dir` (this venv's own folder) is not under the venv's default root.
std::string command_for(const std::string& verb, const std::filesystem::path& venv,
                        const std::filesystem::path& state_dir, const std::vector<std::string>& more = {});

std::filesystem::path journal_path(const std::filesystem::path& state_dir);
std::filesystem::path last_apply_path(const std::filesystem::path& state_dir);

// The run a journal in `state_dir` says was interrupted; nullopt when there is
// no journal or it ended. Throws Error(interrupted) for an unreadable journal.
[[nodiscard]] std::optional<OpenTransaction> open_transaction(const std::filesystem::path& state_dir);

// How the last transaction that ended normally ended (<state>/last-apply.json,
// format 1): an apply (committed or rolled back) or a `stackup rollback`.
struct LastApply {
    std::string when;
    std::string manifest;
    std::string result;        // "committed", "rolled back", "failed, nothing changed", "staged"
    std::string detail;        // why it rolled back, or who closed it
    std::string snapshot_id;   // the apply's snapshot, or the one a rollback restored
    std::string command = "apply";  // "apply" or "rollback" (files written before it was recorded: apply)
    friend bool operator==(const LastApply&, const LastApply&) = default;
};

[[nodiscard]] std::optional<LastApply> last_apply(const std::filesystem::path& state_dir);
// Records `last` as the last transaction (whole file, atomically).
void record_last(const std::filesystem::path& state_dir, const LastApply& last);

// A generation `apply --stage` built and verified, waiting for `stackup switch`
// (<state>/staged.json, format 1). Its tree is the ready folder of its base.
struct StagedGeneration {
    std::string generation_id;  // the staged generation
    std::string base_id;        // the generation the venv was when it was built: switch refuses any other
    std::string manifest;
    std::string created;
    friend bool operator==(const StagedGeneration&, const StagedGeneration&) = default;
};

[[nodiscard]] std::optional<StagedGeneration> staged_generation(const std::filesystem::path& state_dir);
void record_staged(const std::filesystem::path& state_dir, const StagedGeneration& staged);
void clear_staged(const std::filesystem::path& state_dir);

// The writer. Not copyable; one per run, under the venv lock.
class Journal {
public:
    // Creates <state>/journal afresh with its started record.
    // `mode`: "blue-green" or "in-place".
    [[nodiscard]] static Journal begin(const std::filesystem::path& state_dir, const std::string& manifest,
                                       const std::string& venv, const std::string& mode = "in-place");
    // Reopens an existing journal to append to it (rollback closing an interrupted run).
    [[nodiscard]] static Journal reopen(const std::filesystem::path& state_dir);

    void append(Record record);
    // Appends the terminal record, writes last-apply.json atomically, removes the journal.
    void close(RecordKind terminal, const std::string& why);
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

#pragma once
// The three files a venv's state dir keeps about its transactions, as values, and their one
// reader/writer (journal_format.cpp, the only file of txn/ that knows JSON):
//   journal                JSON lines, one record per state change of a run (journal.hpp)
//   last-transaction.json  how the last transaction that ended normally ended (apply or rollback);
//                          (earlier releases wrote last-apply.json: still read, never written)
//   staged.json            the generation `apply --stage` built (earlier releases keyed its version
//                          "format": still read, never written)
// Each is versioned: the journal's first record carries "version", the others a "version" key.
//
// Records, one struct per kind, each with exactly its fields (and the time the writer stamps):
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
//   rollback_failed{why}                 NOT terminal: the venv still needs a rollback
//   committed | rolled_back{why} | discarded{why} | staged{why}   terminal: the run ended normally
//                                        (discarded: blue/green failed, the venv was never changed;
//                                        staged: built and verified, waiting for a switch)

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace stackup::txn {

inline constexpr int kJournalVersion = 1;

namespace record {

struct Started {
    static constexpr std::string_view kName = "started";
    std::string manifest;
    std::string venv;
    long pid = 0;
    std::string host;
    std::string mode;  // "blue-green" or "in-place" ("" in journals written before modes: in place)
    friend bool operator==(const Started&, const Started&) = default;
};
struct SnapshotTaken {
    static constexpr std::string_view kName = "snapshot_taken";
    std::string id;
    friend bool operator==(const SnapshotTaken&, const SnapshotTaken&) = default;
};
struct StepRunning {
    static constexpr std::string_view kName = "step_running";
    std::size_t n = 0;  // 1-based
    std::string name;
    friend bool operator==(const StepRunning&, const StepRunning&) = default;
};
struct StepVerified {
    static constexpr std::string_view kName = "step_verified";
    std::size_t n = 0;
    friend bool operator==(const StepVerified&, const StepVerified&) = default;
};
struct RollingBack {
    static constexpr std::string_view kName = "rolling_back";
    std::string why;
    friend bool operator==(const RollingBack&, const RollingBack&) = default;
};
struct Committed {
    static constexpr std::string_view kName = "committed";
    friend bool operator==(const Committed&, const Committed&) = default;
};
struct RolledBack {
    static constexpr std::string_view kName = "rolled_back";
    std::string why;
    friend bool operator==(const RolledBack&, const RolledBack&) = default;
};
struct RollbackFailed {
    static constexpr std::string_view kName = "rollback_failed";
    std::string why;
    friend bool operator==(const RollbackFailed&, const RollbackFailed&) = default;
};
struct Switching {
    static constexpr std::string_view kName = "switching";
    std::string generation;          // the id of the generation being switched in
    std::uint64_t clone_inode = 0;   // the root inode of the clone
    std::uint64_t live_inode = 0;    // the root inode of the venv before the switch
    friend bool operator==(const Switching&, const Switching&) = default;
};
struct Discarded {
    static constexpr std::string_view kName = "discarded";
    std::string why;
    friend bool operator==(const Discarded&, const Discarded&) = default;
};
struct Staged {
    static constexpr std::string_view kName = "staged";
    std::string why;
    friend bool operator==(const Staged&, const Staged&) = default;
};

}  // namespace record

// What a record says; RecordKind names the alternatives in the same order.
using RecordData = std::variant<record::Started, record::SnapshotTaken, record::StepRunning, record::StepVerified,
                                record::RollingBack, record::Committed, record::RolledBack, record::RollbackFailed,
                                record::Switching, record::Discarded, record::Staged>;

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

struct Record {
    RecordData data;
    std::string time;  // ISO-8601 UTC, set by the writer
    friend bool operator==(const Record&, const Record&) = default;
};

inline RecordKind kind_of(const RecordData& data) { return static_cast<RecordKind>(data.index()); }
std::string_view to_string(RecordKind kind);
bool is_terminal(RecordKind kind);

// One journal line, newline included; `with_version` for the first record.
std::string record_to_line(const Record& record, bool with_version);

struct ParsedJournal {
    std::vector<Record> records;
    std::size_t intact = 0;  // bytes up to the end of the last complete record
};
// Every complete record of a journal's text. A torn last line (no newline, or not a record) is
// dropped; a bad line before it (not JSON, an unknown kind, a missing or mistyped field), or a
// version other than ours, throws std::runtime_error naming `source` and the line.
[[nodiscard]] ParsedJournal read_journal(std::string_view text, const std::string& source);
[[nodiscard]] std::vector<Record> parse_journal(std::string_view text, const std::string& source);

// How the last transaction that ended normally ended (version 1): an apply (committed, rolled
// back, discarded, staged) or a `stackup rollback`.
struct LastTransaction {
    std::string when;
    std::string manifest;
    std::string result;        // "committed", "rolled back", "failed, nothing changed", "staged"
    std::string detail;        // why it rolled back, or who closed it
    std::string snapshot_id;   // the apply's snapshot, or the one a rollback restored
    std::string command = "apply";  // "apply" or "rollback" (files written before it was recorded: apply)
    friend bool operator==(const LastTransaction&, const LastTransaction&) = default;
};
std::string last_transaction_text(const LastTransaction& last);
// Throws std::runtime_error for text that is not such a document.
[[nodiscard]] LastTransaction parse_last_transaction(std::string_view text);

// A generation `apply --stage` built and verified, waiting for `stackup switch` (version 1). Its
// tree is the ready folder of its base.
struct StagedGeneration {
    std::string generation_id;  // the staged generation
    std::string base_id;        // the generation the venv was when it was built: switch refuses any other
    std::string manifest;
    std::string created;
    friend bool operator==(const StagedGeneration&, const StagedGeneration&) = default;
};
std::string staged_text(const StagedGeneration& staged);
// Reads "version" (and "format", its name before). Throws std::runtime_error otherwise.
[[nodiscard]] StagedGeneration parse_staged(std::string_view text);

}  // namespace stackup::txn

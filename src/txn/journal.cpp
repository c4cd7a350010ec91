#include "txn/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include "base/error.hpp"
#include "base/system.hpp"

namespace stackup::txn {
namespace {

template <typename... F>
struct Overloaded : F... {
    using F::operator()...;
};

// What releases before last-transaction.json wrote: read when the new file is absent.
std::filesystem::path legacy_last_apply_path(const std::filesystem::path& state_dir) {
    return state_dir / "last-apply.json";
}

RecordData ending_record(Ending ending, const std::string& why) {
    switch (ending) {
        case Ending::committed: return record::Committed{};
        case Ending::rolled_back: return record::RolledBack{why};
        case Ending::discarded: return record::Discarded{why};
        case Ending::staged: return record::Staged{why};
    }
    return record::RolledBack{why};
}

std::string result_of(Ending ending) {
    switch (ending) {
        case Ending::committed: return "committed";
        case Ending::rolled_back: return "rolled back";
        case Ending::discarded: return "failed, nothing changed";
        case Ending::staged: return "staged";
    }
    return "rolled back";
}

bool is_there(const std::filesystem::path& path) {
    std::error_code ec;
    return std::filesystem::exists(path, ec);
}

}  // namespace

std::optional<OpenTransaction> open_transaction_of(const std::vector<Record>& records) {
    if (records.empty() || is_terminal(kind_of(records.back().data))) {
        return std::nullopt;
    }
    OpenTransaction t;
    for (const auto& r : records) {
        std::visit(Overloaded{
                       [&](const record::Started& s) {
                           t.manifest = s.manifest;
                           t.venv = s.venv;
                           t.pid = s.pid;
                           t.host = s.host;
                           t.started = r.time;
                           t.blue_green = s.mode == "blue-green";
                       },
                       [&](const record::SnapshotTaken& s) { t.snapshot_id = s.id; },
                       [&](const record::StepRunning& s) {
                           t.step = s.n;
                           t.step_name = s.name;
                           t.step_verified = false;
                       },
                       [&](const record::StepVerified& s) { t.step_verified = t.step == s.n; },
                       [&](const record::Switching& s) {
                           t.switching = true;
                           t.generation = s.generation;
                           t.clone_inode = s.clone_inode;
                           t.live_inode = s.live_inode;
                       },
                       [&](const record::RollingBack& s) { t.why = s.why; },
                       [&](const record::RollbackFailed& s) { t.why = s.why; },
                       [](const auto&) {},  // terminal: only ever last, and then there is no open run
                   },
                   r.data);
        t.last = kind_of(r.data);
        t.last_time = r.time;
    }
    return t;
}

std::filesystem::path journal_path(const std::filesystem::path& state_dir) {
    return state_dir / "journal";
}

std::filesystem::path last_transaction_path(const std::filesystem::path& state_dir) {
    return state_dir / "last-transaction.json";
}

std::filesystem::path staged_path(const std::filesystem::path& state_dir) {
    return state_dir / "staged.json";
}

std::optional<OpenTransaction> open_transaction(const std::filesystem::path& state_dir) {
    auto path = journal_path(state_dir);
    if (!is_there(path)) {
        return std::nullopt;
    }
    try {
        return open_transaction_of(parse_journal(base::read_file(path), path.string()));
    } catch (const std::exception& e) {
        // A journal we cannot read may still be a run that died: never treat it as none.
        throw Error(ExitCode::interrupted, std::string(e.what()) + " (inspect it; remove it only once the venv is known good)");
    }
}

std::optional<LastTransaction> last_transaction(const std::filesystem::path& state_dir) {
    for (const auto& path : {last_transaction_path(state_dir), legacy_last_apply_path(state_dir)}) {
        if (!is_there(path)) {
            continue;
        }
        try {
            return parse_last_transaction(base::read_file(path));
        } catch (const std::exception& e) {
            throw std::runtime_error("cannot read " + path.string() + ": " + e.what());
        }
    }
    return std::nullopt;
}

void record_last(const std::filesystem::path& state_dir, const LastTransaction& last) {
    base::write_file_atomic(last_transaction_path(state_dir), last_transaction_text(last));
    std::error_code ec;
    std::filesystem::remove(legacy_last_apply_path(state_dir), ec);  // outdated now; best effort
}

std::optional<StagedGeneration> staged_generation(const std::filesystem::path& state_dir) {
    const auto path = staged_path(state_dir);
    if (!is_there(path)) {
        return std::nullopt;
    }
    try {
        return parse_staged(base::read_file(path));
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot read " + path.string() + ": " + e.what());
    }
}

void record_staged(const std::filesystem::path& state_dir, const StagedGeneration& staged) {
    base::write_file_atomic(staged_path(state_dir), staged_text(staged));
}

void clear_staged(const std::filesystem::path& state_dir) {
    std::error_code ec;
    std::filesystem::remove(staged_path(state_dir), ec);
}

Journal Journal::begin(const std::filesystem::path& state_dir, const std::string& manifest, const std::string& venv,
                       const std::string& mode) {
    std::filesystem::create_directories(state_dir);
    auto fd = base::open_file(journal_path(state_dir), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    Journal j(state_dir, std::move(fd));
    j.append(record::Started{manifest, venv, static_cast<long>(::getpid()), base::host_name(), mode});
    base::fsync_dir(state_dir);
    return j;
}

Journal Journal::reopen(const std::filesystem::path& state_dir) {
    auto path = journal_path(state_dir);
    auto parsed = read_journal(base::read_file(path), path.string());
    auto fd = base::open_file(path, O_WRONLY | O_APPEND);
    // Cut a torn last line, so that what we append starts a line of its own.
    if (::ftruncate(fd.get(), static_cast<off_t>(parsed.intact)) != 0) {
        throw base::errno_error(errno, "cannot truncate " + path.string());
    }
    Journal j(state_dir, std::move(fd));
    j.first_ = parsed.records.empty();
    if (auto open = open_transaction_of(parsed.records)) {
        j.manifest_ = open->manifest;
        j.snapshot_id_ = open->snapshot_id;
    }
    return j;
}

void Journal::append(RecordData data) {
    if (const auto* started = std::get_if<record::Started>(&data)) {
        manifest_ = started->manifest;
    }
    if (const auto* taken = std::get_if<record::SnapshotTaken>(&data)) {
        snapshot_id_ = taken->id;
    }
    std::string line = record_to_line(Record{std::move(data), base::utc_now()}, first_);
    auto path = journal_path(state_dir_);
    base::write_all(fd_.get(), line.data(), line.size(), path);
    if (::fsync(fd_.get()) != 0) {
        throw base::errno_error(errno, "cannot fsync " + path.string());
    }
    first_ = false;
}

void Journal::close(Ending ending, const std::string& why) {
    append(ending_record(ending, why));
    record_last(state_dir_, {base::utc_now(), manifest_, result_of(ending), why, snapshot_id_});
    discard();
}

void Journal::discard() {
    fd_.reset();
    std::filesystem::remove(journal_path(state_dir_));
    base::fsync_dir(state_dir_);
}

}  // namespace stackup::txn

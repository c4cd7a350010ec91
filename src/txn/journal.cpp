#include "txn/journal.hpp"
#include "base/system.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/json_number.hpp"
#include "base/text.hpp"

namespace stackup::txn {
namespace {

using nlohmann::json;

constexpr int kLastApplyVersion = 1;


json record_json(const Record& r) {
    json j{{"record", std::string(to_string(r.kind))}, {"time", r.time}};
    switch (r.kind) {
        case RecordKind::started:
            j["manifest"] = r.manifest;
            j["venv"] = r.venv;
            j["pid"] = r.pid;
            j["host"] = r.host;
            j["mode"] = r.mode;
            break;
        case RecordKind::snapshot_taken:
            j["id"] = r.snapshot_id;
            break;
        case RecordKind::step_running:
            j["n"] = r.step;
            j["name"] = r.name;
            break;
        case RecordKind::step_verified:
            j["n"] = r.step;
            break;
        case RecordKind::rolling_back:
        case RecordKind::rollback_failed:
        case RecordKind::rolled_back:
            j["why"] = r.why;
            break;
        case RecordKind::switching:
            j["generation"] = r.generation;
            j["clone"] = r.clone_inode;
            j["live"] = r.live_inode;
            break;
        case RecordKind::discarded:
        case RecordKind::staged:
            j["why"] = r.why;
            break;
        case RecordKind::committed:
            break;
    }
    return j;
}

Record record_from_json(const json& j) {
    auto kind = record_kind_from_string(j.at("record").get<std::string>());
    if (!kind) {
        throw std::runtime_error("unknown record '" + j.at("record").get<std::string>() + "'");
    }
    Record r;
    r.kind = *kind;
    r.time = j.value("time", "");
    r.manifest = j.value("manifest", "");
    r.venv = j.value("venv", "");
    r.pid = base::whole_number_field<long>(j, "pid", 0L);
    r.host = j.value("host", "");
    r.snapshot_id = j.value("id", "");
    r.step = base::whole_number_field<std::size_t>(j, "n", 0);
    r.name = j.value("name", "");
    r.why = j.value("why", "");
    r.mode = j.value("mode", "");
    r.generation = j.value("generation", "");
    r.clone_inode = base::whole_number_field<std::uint64_t>(j, "clone", 0);
    r.live_inode = base::whole_number_field<std::uint64_t>(j, "live", 0);
    return r;
}

// A journal another stackup wrote: refused wherever the line is, never taken for a torn one.
struct ForeignJournal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check_version(const json& j, const std::string& source) {
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kJournalVersion) {
        throw ForeignJournal("cannot read journal " + source + ": its first record has version " +
                                 (j.contains("version") ? j["version"].dump() : std::string("(none)")) +
                                 ", this stackup reads version " + std::to_string(kJournalVersion));
    }
}

std::string last_apply_json(const LastApply& a) {
    json j{{"version", kLastApplyVersion}, {"when", a.when},         {"manifest", a.manifest},
           {"result", a.result},           {"detail", a.detail},     {"snapshot_id", a.snapshot_id},
           {"command", a.command}};
    return j.dump(2) + "\n";
}

}  // namespace

std::string_view to_string(RecordKind kind) {
    switch (kind) {
        case RecordKind::started: return "started";
        case RecordKind::snapshot_taken: return "snapshot_taken";
        case RecordKind::step_running: return "step_running";
        case RecordKind::step_verified: return "step_verified";
        case RecordKind::rolling_back: return "rolling_back";
        case RecordKind::committed: return "committed";
        case RecordKind::rolled_back: return "rolled_back";
        case RecordKind::rollback_failed: return "rollback_failed";
        case RecordKind::switching: return "switching";
        case RecordKind::discarded: return "discarded";
        case RecordKind::staged: return "staged";
    }
    return "?";
}

std::optional<RecordKind> record_kind_from_string(std::string_view text) {
    for (auto kind : {RecordKind::started, RecordKind::snapshot_taken, RecordKind::step_running,
                      RecordKind::step_verified, RecordKind::rolling_back, RecordKind::committed,
                      RecordKind::rolled_back, RecordKind::rollback_failed, RecordKind::switching,
                      RecordKind::discarded, RecordKind::staged}) {
        if (to_string(kind) == text) {
            return kind;
        }
    }
    return std::nullopt;
}

bool is_terminal(RecordKind kind) {
    return kind == RecordKind::committed || kind == RecordKind::rolled_back || kind == RecordKind::discarded ||
           kind == RecordKind::staged;
}

std::string record_to_line(const Record& record, bool with_version) {
    json j = record_json(record);
    if (with_version) {
        j["version"] = kJournalVersion;
    }
    return j.dump() + "\n";
}

namespace {

struct Parsed {
    std::vector<Record> records;
    std::size_t intact = 0;  // bytes up to the end of the last complete record
};

Parsed parse_records(std::string_view text, const std::string& source) {
    Parsed parsed;
    std::vector<Record>& out = parsed.records;
    std::size_t pos = 0;
    std::size_t line_no = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        bool last = end == std::string_view::npos || end + 1 == text.size();
        std::string_view line = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        pos = end == std::string_view::npos ? text.size() : end + 1;
        ++line_no;
        if (end == std::string_view::npos) {
            break;  // torn: the write of this record never finished
        }
        try {
            json j = json::parse(line);
            if (out.empty()) {
                check_version(j, source);
            }
            out.push_back(record_from_json(j));
            parsed.intact = pos;
        } catch (const ForeignJournal&) {
            throw;
        } catch (const std::exception& e) {  // not JSON, or a record that is not one of ours
            if (last) {
                break;  // torn after a partial write that happened to end in a newline
            }
            throw std::runtime_error("cannot read journal " + source + " line " + std::to_string(line_no) + ": " +
                                     e.what());
        }
    }
    return parsed;
}

}  // namespace

std::vector<Record> parse_journal(std::string_view text, const std::string& source) {
    return parse_records(text, source).records;
}

std::string OpenTransaction::where() const {
    std::string step_text = "step " + std::to_string(step) + (step_name.empty() ? "" : " (" + step_name + ")");
    switch (last) {
        case RecordKind::started: return "before the snapshot (nothing touched)";
        case RecordKind::snapshot_taken:
            return blue_green ? "after cloning the venv, before the first step" : "after the snapshot, before the first step";
        case RecordKind::switching: return "switching the verified generation in";
        case RecordKind::step_running: return step_text + " running";
        case RecordKind::step_verified: return step_text + " verified";
        case RecordKind::rolling_back: return "rolling back";
        case RecordKind::rollback_failed: return "rollback failed";
        case RecordKind::committed:
        case RecordKind::rolled_back:
        case RecordKind::discarded:
        case RecordKind::staged: break;
    }
    return "ended";
}

std::optional<OpenTransaction> open_transaction_of(const std::vector<Record>& records) {
    if (records.empty() || is_terminal(records.back().kind)) {
        return std::nullopt;
    }
    OpenTransaction t;
    for (const auto& r : records) {
        switch (r.kind) {
            case RecordKind::started:
                t.manifest = r.manifest;
                t.venv = r.venv;
                t.pid = r.pid;
                t.host = r.host;
                t.started = r.time;
                t.blue_green = r.mode == "blue-green";
                break;
            case RecordKind::switching:
                t.switching = true;
                t.generation = r.generation;
                t.clone_inode = r.clone_inode;
                t.live_inode = r.live_inode;
                break;
            case RecordKind::snapshot_taken: t.snapshot_id = r.snapshot_id; break;
            case RecordKind::step_running:
                t.step = r.step;
                t.step_name = r.name;
                t.step_verified = false;
                break;
            case RecordKind::step_verified: t.step_verified = t.step == r.step; break;
            case RecordKind::rolling_back:
            case RecordKind::rollback_failed: t.why = r.why; break;
            case RecordKind::committed:
            case RecordKind::rolled_back:
            case RecordKind::discarded:
            case RecordKind::staged: break;
        }
        t.last = r.kind;
        t.last_time = r.time;
    }
    return t;
}

std::string describe_interrupted(const OpenTransaction& open, const std::filesystem::path& state_dir) {
    std::string text = "an interrupted transaction is open in " + journal_path(state_dir).string() + ": apply of " +
                       (open.manifest.empty() ? std::string("(unknown manifest)") : open.manifest) + ", pid " +
                       std::to_string(open.pid) + (open.host.empty() ? "" : " on " + open.host) + ", started " +
                       open.started + ", stopped " + open.where();
    if (!open.why.empty()) {
        text += " (" + open.why + ")";
    }
    return text + "; " + recovery_hint(open, state_dir);
}

std::string command_for(const std::string& verb, const std::filesystem::path& venv,
                        const std::filesystem::path& state_dir, const std::vector<std::string>& more) {
    std::vector<std::string> argv{"stackup", verb, "--venv", venv.string()};
    // state_dir is <root>/<venv name>-<hash> (state_dir_for); the default root is beside the venv.
    auto root = state_dir.lexically_normal().parent_path();
    if (root != (venv.parent_path() / ".stackup").lexically_normal()) {
        argv.insert(argv.end(), {"--state-dir", root.string()});
    }
    argv.insert(argv.end(), more.begin(), more.end());
    return base::render_argv(argv);
}

std::string recovery_hint(const OpenTransaction& open, const std::filesystem::path& state_dir) {
    std::string rollback = "`" + command_for("rollback", open.venv, state_dir) + "`";
    std::string status = "`" + command_for("status", open.venv, state_dir) + "`";
    if (open.blue_green && !open.switching) {
        return "it died before its switch, so nothing was changed in " + open.venv + ": the next apply cleans up "
               "its clone, or run " + rollback + " to close the journal, or " + status;
    }
    if (open.blue_green) {
        return "it died while switching: the venv holds the whole old or the whole new generation, " + status +
               " says which; run " + rollback + " to be back on generation " + open.snapshot_id +
               ", or the next apply keeps what is live";
    }
    if (open.touched()) {
        return "run " + rollback + " to restore snapshot " + open.snapshot_id + ", or " + status;
    }
    return "it died before its snapshot, so the venv was not touched: run " + rollback + " to close the "
           "journal, or " + status;
}

std::filesystem::path journal_path(const std::filesystem::path& state_dir) {
    return state_dir / "journal";
}

std::filesystem::path last_apply_path(const std::filesystem::path& state_dir) {
    return state_dir / "last-apply.json";
}

std::optional<OpenTransaction> open_transaction(const std::filesystem::path& state_dir) {
    auto path = journal_path(state_dir);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return std::nullopt;
    }
    try {
        return open_transaction_of(parse_journal(base::read_file(path), path.string()));
    } catch (const std::exception& e) {
        // A journal we cannot read may still be a run that died: never treat it as none.
        throw Error(ExitCode::interrupted, std::string(e.what()) + " (inspect it; remove it only once the venv is known good)");
    }
}

std::optional<LastApply> last_apply(const std::filesystem::path& state_dir) {
    auto path = last_apply_path(state_dir);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return std::nullopt;
    }
    try {
        json j = json::parse(base::read_file(path));
        if (base::whole_number_field<int>(j, "version", 0) != kLastApplyVersion) {
            throw std::runtime_error("version " + j.value("version", json()).dump());
        }
        return LastApply{j.value("when", ""),   j.value("manifest", ""),    j.value("result", ""),
                         j.value("detail", ""), j.value("snapshot_id", ""), j.value("command", "apply")};
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot read " + path.string() + ": " + e.what());
    }
}

Journal Journal::begin(const std::filesystem::path& state_dir, const std::string& manifest, const std::string& venv,
                       const std::string& mode) {
    std::filesystem::create_directories(state_dir);
    auto fd = base::open_file(journal_path(state_dir), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    Journal j(state_dir, std::move(fd));
    Record r;
    r.kind = RecordKind::started;
    r.manifest = manifest;
    r.venv = venv;
    r.pid = static_cast<long>(::getpid());
    r.host = base::host_name();
    r.mode = mode;
    j.append(std::move(r));
    base::fsync_dir(state_dir);
    return j;
}

Journal Journal::reopen(const std::filesystem::path& state_dir) {
    auto path = journal_path(state_dir);
    auto parsed = parse_records(base::read_file(path), path.string());
    const auto& records = parsed.records;
    auto fd = base::open_file(path, O_WRONLY | O_APPEND);
    // Cut a torn last line, so that what we append starts a line of its own.
    if (::ftruncate(fd.get(), static_cast<off_t>(parsed.intact)) != 0) {
        throw base::errno_error(errno, "cannot truncate " + path.string());
    }
    Journal j(state_dir, std::move(fd));
    j.first_ = records.empty();
    if (auto open = open_transaction_of(records)) {
        j.manifest_ = open->manifest;
        j.snapshot_id_ = open->snapshot_id;
    }
    return j;
}

void Journal::append(Record record) {
    if (record.time.empty()) {
        record.time = base::utc_now();
    }
    if (record.kind == RecordKind::started) {
        manifest_ = record.manifest;
    }
    if (record.kind == RecordKind::snapshot_taken) {
        snapshot_id_ = record.snapshot_id;
    }
    std::string line = record_to_line(record, first_);
    auto path = journal_path(state_dir_);
    base::write_all(fd_.get(), line.data(), line.size(), path);
    if (::fsync(fd_.get()) != 0) {
        throw base::errno_error(errno, "cannot fsync " + path.string());
    }
    first_ = false;
}

void Journal::close(RecordKind terminal, const std::string& why) {
    Record r;
    r.kind = terminal;
    r.why = why;
    append(r);
    std::string result = terminal == RecordKind::committed   ? "committed"
                         : terminal == RecordKind::discarded ? "failed, nothing changed"
                         : terminal == RecordKind::staged    ? "staged"
                                                             : "rolled back";
    LastApply last{base::utc_now(), manifest_, result, why, snapshot_id_};
    record_last(state_dir_, last);
    discard();
}

namespace {

std::filesystem::path staged_path(const std::filesystem::path& state_dir) {
    return state_dir / "staged.json";
}

}  // namespace

std::optional<StagedGeneration> staged_generation(const std::filesystem::path& state_dir) {
    const auto path = staged_path(state_dir);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return std::nullopt;
    }
    try {
        json j = json::parse(base::read_file(path));
        if (base::whole_number_field<int>(j, "format", 0) != 1) {
            throw std::runtime_error("format " + j.value("format", json()).dump());
        }
        return StagedGeneration{j.at("generation").get<std::string>(), j.at("base").get<std::string>(),
                                j.value("manifest", ""), j.value("created", "")};
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot read " + path.string() + ": " + e.what());
    }
}

void record_staged(const std::filesystem::path& state_dir, const StagedGeneration& staged) {
    json j{{"format", 1},
           {"generation", staged.generation_id},
           {"base", staged.base_id},
           {"manifest", staged.manifest},
           {"created", staged.created}};
    base::write_file_atomic(staged_path(state_dir), j.dump(2) + "\n");
}

void clear_staged(const std::filesystem::path& state_dir) {
    std::error_code ec;
    std::filesystem::remove(staged_path(state_dir), ec);
}

void record_last(const std::filesystem::path& state_dir, const LastApply& last) {
    base::write_file_atomic(last_apply_path(state_dir), last_apply_json(last));
}

void Journal::discard() {
    fd_.reset();
    std::filesystem::remove(journal_path(state_dir_));
    base::fsync_dir(state_dir_);
}

}  // namespace stackup::txn

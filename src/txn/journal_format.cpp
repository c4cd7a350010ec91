// The reader/writer of the journal's records, last-transaction.json and staged.json: the one
// file of txn/ that includes nlohmann-json (ARCHITECTURE.md).
#include "txn/journal_format.hpp"

#include <array>
#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "base/json_number.hpp"

namespace stackup::txn {
namespace {

using nlohmann::json;
using namespace record;

constexpr int kLastTransactionVersion = 1;
constexpr int kStagedVersion = 1;

// A field a record of this kind must have, as a string.
std::string text_field(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) {
        throw std::runtime_error(std::string("'") + key + "' is missing");
    }
    if (!it->is_string()) {
        throw std::runtime_error(std::string("'") + key + "' is " + it->dump(-1).substr(0, 40) + ", not a string");
    }
    return it->get<std::string>();
}

// A field older writers may have left out (or, for a terminal record's why, may leave empty).
std::string optional_text(const json& j, const char* key) {
    return j.contains(key) ? text_field(j, key) : std::string();
}

// Each kind's fields, written and read back the same way.
void write(json& j, const Started& r) {
    j["manifest"] = r.manifest;
    j["venv"] = r.venv;
    j["pid"] = r.pid;
    j["host"] = r.host;
    j["mode"] = r.mode;
}
void read(const json& j, Started& r) {
    r.manifest = text_field(j, "manifest");
    r.venv = text_field(j, "venv");
    r.pid = base::whole_number_field<long>(j, "pid");
    r.host = text_field(j, "host");
    r.mode = optional_text(j, "mode");
}
void write(json& j, const SnapshotTaken& r) { j["id"] = r.id; }
void read(const json& j, SnapshotTaken& r) { r.id = text_field(j, "id"); }
void write(json& j, const StepRunning& r) {
    j["n"] = r.n;
    j["name"] = r.name;
}
void read(const json& j, StepRunning& r) {
    r.n = base::whole_number_field<std::size_t>(j, "n");
    r.name = text_field(j, "name");
}
void write(json& j, const StepVerified& r) { j["n"] = r.n; }
void read(const json& j, StepVerified& r) { r.n = base::whole_number_field<std::size_t>(j, "n"); }
void write(json& j, const Switching& r) {
    j["generation"] = r.generation;
    j["clone"] = r.clone_inode;
    j["live"] = r.live_inode;
}
void read(const json& j, Switching& r) {
    r.generation = text_field(j, "generation");
    r.clone_inode = base::whole_number_field<std::uint64_t>(j, "clone");
    r.live_inode = base::whole_number_field<std::uint64_t>(j, "live");
}
void write(json&, const Committed&) {}
void read(const json&, Committed&) {}
// Records that are only a reason: what is going on needs it, how a run ended may leave it out.
void write(json& j, const RollingBack& r) { j["why"] = r.why; }
void write(json& j, const RollbackFailed& r) { j["why"] = r.why; }
void write(json& j, const RolledBack& r) { j["why"] = r.why; }
void write(json& j, const Discarded& r) { j["why"] = r.why; }
void write(json& j, const Staged& r) { j["why"] = r.why; }
void read(const json& j, RollingBack& r) { r.why = text_field(j, "why"); }
void read(const json& j, RollbackFailed& r) { r.why = text_field(j, "why"); }
void read(const json& j, RolledBack& r) { r.why = optional_text(j, "why"); }
void read(const json& j, Discarded& r) { r.why = optional_text(j, "why"); }
void read(const json& j, Staged& r) { r.why = optional_text(j, "why"); }

constexpr std::size_t kKinds = std::variant_size_v<RecordData>;

template <std::size_t... I>
constexpr std::array<std::string_view, kKinds> names_of(std::index_sequence<I...>) {
    return {std::variant_alternative_t<I, RecordData>::kName...};
}
constexpr auto kNames = names_of(std::make_index_sequence<kKinds>{});

// The alternative `index` of RecordData, read from `j`.
template <std::size_t I = 0>
RecordData read_alternative(std::size_t index, const json& j) {
    if constexpr (I < kKinds) {
        if (index == I) {
            std::variant_alternative_t<I, RecordData> data;
            read(j, data);
            return data;
        }
        return read_alternative<I + 1>(index, j);
    } else {
        throw std::logic_error("no such record kind");
    }
}

Record record_from_json(const json& j) {
    if (!j.is_object()) {
        throw std::runtime_error("not a record: " + j.dump(-1).substr(0, 40));
    }
    const std::string name = text_field(j, "record");
    for (std::size_t i = 0; i < kKinds; ++i) {
        if (kNames[i] == name) {
            try {
                return Record{read_alternative(i, j), optional_text(j, "time")};
            } catch (const std::runtime_error& e) {
                throw std::runtime_error("a " + name + " record: " + e.what());
            }
        }
    }
    throw std::runtime_error("unknown record '" + name + "'");
}

// A journal another stackup wrote: refused wherever the line is, never taken for a torn one.
struct ForeignJournal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check_version(const json& j, const std::string& source) {
    if (!j.is_object() || !j.contains("version") || !j["version"].is_number_integer() ||
        j["version"].get<int>() != kJournalVersion) {
        throw ForeignJournal("cannot read journal " + source + ": its first record has version " +
                             (j.is_object() && j.contains("version") ? j["version"].dump() : std::string("(none)")) +
                             ", this stackup reads version " + std::to_string(kJournalVersion));
    }
}

json object_of(std::string_view text) {
    json j = json::parse(text);
    if (!j.is_object()) {
        throw std::runtime_error("not a JSON object");
    }
    return j;
}

void check_document_version(const json& j, const char* key, int version) {
    if (base::whole_number_field<int>(j, key, 0) != version) {
        throw std::runtime_error(std::string(key) + " " + j.value(key, json()).dump());
    }
}

}  // namespace

std::string_view to_string(RecordKind kind) {
    const auto index = static_cast<std::size_t>(kind);
    return index < kKinds ? kNames[index] : std::string_view("?");
}

bool is_terminal(RecordKind kind) {
    return kind == RecordKind::committed || kind == RecordKind::rolled_back || kind == RecordKind::discarded ||
           kind == RecordKind::staged;
}

std::string record_to_line(const Record& record, bool with_version) {
    json j{{"record", std::string(to_string(kind_of(record.data)))}, {"time", record.time}};
    std::visit([&j](const auto& data) { write(j, data); }, record.data);
    if (with_version) {
        j["version"] = kJournalVersion;
    }
    return j.dump() + "\n";
}

ParsedJournal read_journal(std::string_view text, const std::string& source) {
    ParsedJournal parsed;
    std::size_t pos = 0;
    std::size_t line_no = 0;
    while (pos < text.size()) {
        const std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) {
            break;  // torn: the write of this record never finished
        }
        const bool last = end + 1 == text.size();
        const std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++line_no;
        try {
            json j = json::parse(line);
            if (parsed.records.empty()) {
                check_version(j, source);
            }
            parsed.records.push_back(record_from_json(j));
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

std::vector<Record> parse_journal(std::string_view text, const std::string& source) {
    return read_journal(text, source).records;
}

std::string last_transaction_text(const LastTransaction& a) {
    json j{{"version", kLastTransactionVersion}, {"when", a.when},         {"manifest", a.manifest},
           {"result", a.result},                 {"detail", a.detail},     {"snapshot_id", a.snapshot_id},
           {"command", a.command}};
    return j.dump(2) + "\n";
}

LastTransaction parse_last_transaction(std::string_view text) {
    json j = object_of(text);
    check_document_version(j, "version", kLastTransactionVersion);
    return LastTransaction{j.value("when", ""),   j.value("manifest", ""),    j.value("result", ""),
                           j.value("detail", ""), j.value("snapshot_id", ""), j.value("command", "apply")};
}

std::string staged_text(const StagedGeneration& staged) {
    json j{{"version", kStagedVersion},
           {"generation", staged.generation_id},
           {"base", staged.base_id},
           {"manifest", staged.manifest},
           {"created", staged.created}};
    return j.dump(2) + "\n";
}

StagedGeneration parse_staged(std::string_view text) {
    json j = object_of(text);
    // Files written before the key was "version" call it "format".
    check_document_version(j, j.contains("version") ? "version" : "format", kStagedVersion);
    return StagedGeneration{text_field(j, "generation"), text_field(j, "base"), j.value("manifest", ""),
                            j.value("created", "")};
}

}  // namespace stackup::txn

#include "snapshot/store_json.hpp"

#include <cstdint>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "base/json_number.hpp"

namespace stackup::snapshot::json_format {

namespace {

using nlohmann::json;

}  // namespace

std::string to_hex(const std::string& bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out.push_back(digits[c >> 4]);
        out.push_back(digits[c & 0xf]);
    }
    return out;
}

std::string from_hex(const std::string& hex) {
    if (hex.size() % 2 != 0) {
        throw std::runtime_error("odd-length hex string");
    }
    std::string out;
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
}

namespace {

// File names are bytes, JSON strings are UTF-8: names that are not valid
// UTF-8 are stored hex-encoded under "<key>_hex" instead of being lost.
void put_bytes(json& j, const std::string& key, const std::string& bytes) {
    try {
        (void)json(bytes).dump();
        j[key] = bytes;
    } catch (const json::type_error&) {
        j[key + "_hex"] = to_hex(bytes);
    }
}

std::string get_bytes(const json& j, const std::string& key) {
    if (j.contains(key + "_hex")) {
        return from_hex(j.at(key + "_hex").get<std::string>());
    }
    return j.at(key).get<std::string>();
}

void require_format(const json& j) {
    const int format = base::whole_number_field<int>(j, "format");
    if (format != kFormat) {
        throw std::runtime_error("unsupported format " + std::to_string(format) + " (this stackup reads " +
                                 std::to_string(kFormat) + ")");
    }
}

// Runs `parse`, turning any failure into one error that names the file.
template <typename F>
auto parsing(const std::filesystem::path& source, F&& parse) {
    try {
        return parse();
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot read " + source.string() + ": " + e.what());
    }
}

}  // namespace

std::string info_to_json(const SnapshotInfo& info) {
    json doc = json::object();
    doc["format"] = kFormat;
    doc["id"] = info.id;
    doc["created"] = info.created;
    doc["label"] = info.label;
    put_bytes(doc, "manifest", info.manifest);
    put_bytes(doc, "venv", info.venv.string());
    doc["strategy"] = to_string(info.strategy);
    doc["strategy_reason"] = info.strategy_reason;
    json dists = json::array();
    for (const auto& [name, version] : info.distributions) {
        dists.push_back({{"name", name}, {"version", version}});
    }
    doc["distributions"] = std::move(dists);
    doc["index"] = {{"file", info.index_file},
                    {"entries", info.entries},
                    {"file_bytes", info.file_bytes},
                    {"tree_digest", info.tree_digest}};
    doc["generation"] = info.generation;
    doc["parent"] = info.parent;
    doc["outcome"] = info.outcome;
    json changes = json::array();
    for (const auto& c : info.changes) {
        changes.push_back({{"name", c.name}, {"before", c.before}, {"after", c.after}});
    }
    doc["changes"] = std::move(changes);
    json plan = json::array();
    for (const auto& p : info.plan) {
        plan.push_back({{"step", p.step}, {"requirements", p.requirements}});
    }
    doc["plan"] = std::move(plan);
    doc["root"] = {{"device", info.root_device}, {"inode", info.root_inode}};
    return doc.dump(2) + "\n";
}

SnapshotInfo info_from_json(const std::string& text, const std::filesystem::path& source) {
    return parsing(source, [&] {
        const json doc = json::parse(text);
        require_format(doc);
        SnapshotInfo info;
        info.id = doc.at("id").get<std::string>();
        info.created = doc.at("created").get<std::string>();
        info.label = doc.at("label").get<std::string>();
        info.manifest = get_bytes(doc, "manifest");
        info.venv = get_bytes(doc, "venv");
        auto strategy = strategy_from_string(doc.at("strategy").get<std::string>());
        if (!strategy) {
            throw std::runtime_error("unknown strategy " + doc.at("strategy").dump());
        }
        info.strategy = *strategy;
        info.strategy_reason = doc.value("strategy_reason", std::string());
        for (const auto& d : doc.at("distributions")) {
            info.distributions.emplace_back(d.at("name").get<std::string>(), d.at("version").get<std::string>());
        }
        const json& index = doc.at("index");
        info.entries = base::whole_number_field<std::uint64_t>(index, "entries");
        info.file_bytes = base::whole_number_field<std::uint64_t>(index, "file_bytes");
        info.tree_digest = index.at("tree_digest").get<std::string>();
        info.index_file = index.value("file", std::string());
        if (info.index_file != "index.tsv") {
            throw std::runtime_error("unknown index file " + index.at("file").dump());
        }
        info.generation = base::whole_number_field<std::uint64_t>(doc, "generation", 0);
        info.parent = doc.value("parent", std::string());
        info.outcome = doc.value("outcome", std::string("snapshot"));
        if (doc.contains("changes")) {
            for (const auto& c : doc.at("changes")) {
                info.changes.push_back({c.at("name").get<std::string>(), c.at("before").get<std::string>(),
                                        c.at("after").get<std::string>()});
            }
        }
        if (doc.contains("plan")) {
            for (const auto& p : doc.at("plan")) {
                info.plan.push_back({p.at("step").get<std::string>(),
                                     p.at("requirements").get<std::vector<std::string>>()});
            }
        }
        if (doc.contains("root")) {
            info.root_device = base::whole_number_field<std::uint64_t>(doc.at("root"), "device");
            info.root_inode = base::whole_number_field<std::uint64_t>(doc.at("root"), "inode");
        }
        return info;
    });
}

}  // namespace stackup::snapshot::json_format

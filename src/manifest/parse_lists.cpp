// The top level's lists and maps of a manifest (parse.cpp reads the rest): 'checks',
// 'allow_mixed' and 'allow_unmet', 'env', 'snapshot'.

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "manifest/parse_parts.hpp"
#include "manifest/yaml_fields.hpp"
#include "pep/name.hpp"

namespace stackup::manifest::detail {
namespace {

const std::vector<std::string> check_keys = {"name", "python"};
const std::vector<std::string> snapshot_keys = {"keep"};

}  // namespace

std::vector<Check> read_checks(const Reader& reader, const Field& field) {
    std::vector<Check> checks;
    std::map<std::string, int> seen;  // name -> line
    for (const YAML::Node& item : read_list(reader, field, "checks")) {
        Fields fields(reader, item, "in check #" + std::to_string(checks.size() + 1));
        fields.only(check_keys);
        Check check;
        check.where = reader.at(item);
        const Field& name = fields.require("name");
        check.name = read_nonempty(reader, name, "name");
        check.python = read_nonempty(reader, fields.require("python"), "python");
        auto [it, fresh] = seen.emplace(check.name, check.where.line);
        if (!fresh) {
            reader.fail(name.value, "duplicate check name '" + check.name + "' (first at line " +
                                        std::to_string(it->second) + ")");
        }
        checks.push_back(std::move(check));
    }
    return checks;
}

std::vector<std::string> read_dist_names(const Reader& reader, const Field& field, const std::string& key) {
    std::vector<std::string> names;
    for (const YAML::Node& item : read_list(reader, field, key)) {
        std::string text = read_item(reader, item, key);
        if (!pep::is_valid_name(text)) {
            reader.fail(item, "'" + text + "' in '" + key + "' is not a distribution name");
        }
        std::string name = pep::normalize_name(text);
        if (std::find(names.begin(), names.end(), name) == names.end()) {
            names.push_back(name);
        }
    }
    return names;
}

std::map<std::string, std::string> read_env(const Reader& reader, const Field& field) {
    Fields fields(reader, field, "env", "in 'env'", EmptyMap::allowed);
    std::map<std::string, std::string> env;
    for (const Field& entry : fields.all()) {
        if (!matches(entry.key, R"([A-Za-z_][A-Za-z0-9_]*)")) {
            reader.fail(entry.key_node, "'" + entry.key + "' in 'env' is not an environment variable name");
        }
        env[entry.key] = read_string(reader, entry, entry.key);
    }
    return env;
}

int read_snapshot_keep(const Reader& reader, const Field& field) {
    Fields fields(reader, field, "snapshot", "in 'snapshot'", EmptyMap::allowed);
    fields.only(snapshot_keys);
    const Field* keep = fields.find("keep");
    return keep ? read_positive_int(reader, *keep, "keep") : Manifest{}.snapshot_keep;
}

}  // namespace stackup::manifest::detail

#pragma once
// What the parts of the manifest parser share: parse.cpp reads the document, the top level
// and its sections; parse_lists.cpp the top level's lists and maps (checks, allow_mixed,
// allow_unmet, env, snapshot); parse_steps.cpp reads 'steps' (packages, removals, expectations).
// Internal to manifest/.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/manifest.hpp"
#include "manifest/yaml_fields.hpp"
#include "pep/specifier.hpp"

namespace stackup::manifest::detail {

// The defined indexes, in file order for messages.
struct Indexes {
    std::map<std::string, std::string> urls;
    std::vector<std::string> order;
};

bool matches(const std::string& text, const char* pattern);
std::string without_prefix(const std::string& error, const std::string& prefix);

// A specifier set that parses and can be satisfied; `label` names the field in messages.
pep::SpecifierSet read_specifier(const Reader& reader, const Field& field, const std::string& label);

// A name defined under 'indexes'; `what` names the field in messages ("index", "default_index").
std::string read_index_name(const Reader& reader, const Field& field, const Indexes& indexes, std::string_view what);

// 'checks': each a name (unique) and its python code (parse_lists.cpp, as are the three below).
std::vector<Check> read_checks(const Reader& reader, const Field& field);

// allow_mixed, allow_unmet: distribution names, normalized, each once.
std::vector<std::string> read_dist_names(const Reader& reader, const Field& field, const std::string& key);

// 'env': variable names and their values, for the installer's environment.
std::map<std::string, std::string> read_env(const Reader& reader, const Field& field);

// 'snapshot': its 'keep', else the default.
int read_snapshot_keep(const Reader& reader, const Field& field);

// 'steps': at least one, each read and checked, names unique (parse_steps.cpp).
std::vector<Step> read_steps(const Reader& reader, const Fields& top, const Indexes& indexes);

}  // namespace stackup::manifest::detail

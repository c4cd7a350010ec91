// The 'steps' of a manifest (parse.cpp reads the rest): each step's packages, removals and
// expectations, checked against the indexes the top level defined.

#include <algorithm>
#include <cctype>
#include <fnmatch.h>
#include <map>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "manifest/parse_parts.hpp"
#include "manifest/yaml_fields.hpp"
#include "pep/name.hpp"
#include "pep/requirement.hpp"

namespace stackup::manifest {

namespace detail {

namespace {

const std::vector<std::string> step_keys = {"name", "index", "packages", "remove", "prerelease", "deps", "expect"};
const std::vector<std::string> expectation_keys = {"version", "local", "cuda", "import", "attrs"};

bool is_dotted_identifier(const std::string& text) {
    return matches(text, R"([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)");
}

// `packages` may be empty (or absent) only in a step that removes or expects something:
// an expect-only step installs nothing and only checks (a baseline, `stackup init`).
std::vector<pep::Requirement> read_packages(const Reader& reader, const Fields& step, const std::string& step_name,
                                            bool removes_or_expects) {
    const Field* field = removes_or_expects ? step.find("packages") : &step.require("packages");
    if (field == nullptr) {
        return {};
    }
    std::string label = "'packages' of step '" + step_name + "'";
    std::vector<YAML::Node> items = read_list(reader, *field, "packages");
    if (items.empty() && !removes_or_expects) {
        reader.fail(field->anchor(),
                    label + " must list at least one requirement (or the step must 'remove' or 'expect' something)");
    }
    std::vector<pep::Requirement> packages;
    std::map<std::string, int> seen;  // normalized name -> line
    for (const YAML::Node& item : items) {
        std::string text = read_item(reader, item, "packages");
        std::string error;
        std::optional<pep::Requirement> req = pep::parse_requirement(text, &error);
        if (!req) {
            std::string what = "invalid requirement '" + text + "': ";
            reader.fail(item, label + ": " + what + without_prefix(error, what));
        }
        if (!req->url.empty()) {
            reader.fail(item, label + ": '" + req->name + "' is a direct URL requirement; a step installs from its index");
        }
        auto [it, fresh] = seen.emplace(req->normalized_name(), reader.at(item).line);
        if (!fresh) {
            reader.fail(item, label + " names '" + req->name + "' twice (first at line " + std::to_string(it->second) + ")");
        }
        packages.push_back(std::move(*req));
    }
    return packages;
}

// Names or glob patterns (* and ?) over PEP 503-normalized names, stored normalized.
std::vector<std::string> read_remove(const Reader& reader, const Field& field, const std::string& step_name) {
    std::string label = "'remove' of step '" + step_name + "'";
    std::vector<YAML::Node> items = read_list(reader, field, "remove");
    if (items.empty()) {
        reader.fail(field.anchor(), label + " is empty: list distribution names or patterns (nvidia-*-cu12), or drop it");
    }
    std::vector<std::string> patterns;
    for (const YAML::Node& item : items) {
        std::string text = read_item(reader, item, "remove");
        std::string as_name = text;
        std::replace(as_name.begin(), as_name.end(), '*', 'x');
        std::replace(as_name.begin(), as_name.end(), '?', 'x');
        bool literal = std::any_of(text.begin(), text.end(), [](unsigned char c) { return std::isalnum(c); });
        if (!pep::is_valid_name(as_name) || !literal) {
            reader.fail(item, label + ": '" + text +
                                  "' is not a distribution name or a pattern of one (letters, digits, . _ -, and * ?)");
        }
        std::string pattern = pep::normalize_name(text);
        if (std::find(patterns.begin(), patterns.end(), pattern) != patterns.end()) {
            reader.fail(item, label + " names '" + text + "' twice");
        }
        patterns.push_back(pattern);
    }
    return patterns;
}

std::string read_local_label(const Reader& reader, const Field& field, const std::string& dist) {
    std::string text = read_nonempty(reader, field, "local");
    if (text.front() == '+') {
        reader.fail(field.value, "'local' of '" + dist + "' is the label without '+', like cu130");
    }
    if (!matches(text, R"([A-Za-z0-9]+([._-][A-Za-z0-9]+)*)")) {
        reader.fail(field.value, "'local' of '" + dist + "': '" + text + "' is not a PEP 440 local version label");
    }
    // PEP 440 normal form, as Version::local() reports it.
    for (char& c : text) {
        c = (c == '-' || c == '_') ? '.' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return text;
}

std::map<std::string, std::string> read_attrs(const Reader& reader, const Field& field, const std::string& dist) {
    Fields fields(reader, field, "attrs", "in 'attrs' of '" + dist + "'", EmptyMap::allowed);
    std::map<std::string, std::string> attrs;
    for (const Field& entry : fields.all()) {
        if (!is_dotted_identifier(entry.key)) {
            reader.fail(entry.key_node, "'attrs' of '" + dist + "': '" + entry.key +
                                            "' is not a dotted attribute name like version.cuda");
        }
        attrs[entry.key] = read_string(reader, entry, entry.key);
    }
    return attrs;
}

Expectation read_expectation(const Reader& reader, const Field& entry, const std::string& where) {
    Fields fields(reader, entry, entry.key, "in the expectation for '" + entry.key + "' in " + where, EmptyMap::allowed);
    fields.only(expectation_keys);
    Expectation e;
    e.dist = pep::normalize_name(entry.key);
    e.where = reader.at(entry.key_node);
    if (const Field* f = fields.find("version")) {
        e.version = read_specifier(reader, *f, "'version' of '" + entry.key + "'");
    }
    if (const Field* f = fields.find("local")) {
        e.local = read_local_label(reader, *f, entry.key);
    }
    if (const Field* f = fields.find("cuda")) {
        e.cuda = read_string(reader, *f, "cuda");
        if (!matches(*e.cuda, R"([0-9]+(\.[0-9]+)*)")) {
            reader.fail(f->anchor(), "'cuda' of '" + entry.key + "' must be a CUDA version like \"13.0\", got " +
                                         describe(f->value));
        }
    }
    if (const Field* f = fields.find("import")) {
        e.import_name = read_string(reader, *f, "import");
        if (!is_dotted_identifier(*e.import_name)) {
            reader.fail(f->anchor(), "'import' of '" + entry.key + "' must be a module name like sgl_kernel, got " +
                                         describe(f->value));
        }
    }
    if (const Field* f = fields.find("attrs")) {
        e.attrs = read_attrs(reader, *f, entry.key);
    }
    return e;
}

std::vector<Expectation> read_expect(const Reader& reader, const Field& field, const std::string& step_label) {
    Fields fields(reader, field, "expect", "in 'expect' of " + step_label, EmptyMap::allowed);
    std::vector<Expectation> expect;
    std::map<std::string, const Field*> seen;  // normalized dist -> its key
    for (const Field& entry : fields.all()) {
        if (!pep::is_valid_name(entry.key)) {
            reader.fail(entry.key_node, "'" + entry.key + "' in 'expect' of " + step_label + " is not a distribution name");
        }
        auto [it, fresh] = seen.emplace(pep::normalize_name(entry.key), &entry);
        if (!fresh) {
            reader.fail(entry.key_node, "'expect' of " + step_label + " names '" + it->first + "' twice ('" +
                                            it->second->key + "' at line " +
                                            std::to_string(reader.at(it->second->key_node).line) + ")");
        }
        expect.push_back(read_expectation(reader, entry, step_label));
    }
    return expect;
}

// "step 'torch'", or "step #2" before its name is known to be usable.
std::string step_label(const YAML::Node& item, std::size_t ordinal) {
    if (item.IsMap()) {
        for (auto it = item.begin(); it != item.end(); ++it) {
            bool named = it->first.IsScalar() && it->first.Scalar() == "name";
            if (named && it->second.IsScalar() && !it->second.Scalar().empty()) {
                return "step '" + it->second.Scalar() + "'";
            }
        }
    }
    return "step #" + std::to_string(ordinal);
}

Step read_step(const Reader& reader, const YAML::Node& item, std::size_t ordinal, const Indexes& indexes,
               SourceLocation* name_at) {
    std::string label = step_label(item, ordinal);
    Fields fields(reader, item, "in " + label);
    fields.only(step_keys);
    Step step;
    step.where = reader.at(item);
    const Field& name = fields.require("name");
    step.name = read_nonempty(reader, name, "name");
    *name_at = reader.at(name.value);
    step.index = read_index_name(reader, fields.require("index"), indexes, "index");
    if (const Field* f = fields.find("remove")) {
        step.remove = read_remove(reader, *f, step.name);
    }
    if (const Field* f = fields.find("expect")) {
        step.expect = read_expect(reader, *f, label);
    }
    step.packages = read_packages(reader, fields, step.name, !step.remove.empty() || !step.expect.empty());
    if (const Field* f = fields.find("prerelease")) {
        step.prerelease = read_bool(reader, *f, "prerelease");
    }
    if (const Field* f = fields.find("deps")) {
        step.deps = read_bool(reader, *f, "deps");
    }
    return step;
}

}  // namespace

std::vector<Step> read_steps(const Reader& reader, const Fields& top, const Indexes& indexes) {
    const Field* field = top.find("steps");
    std::vector<YAML::Node> items = field ? read_list(reader, *field, "steps") : std::vector<YAML::Node>{};
    if (items.empty()) {
        reader.fail(field ? field->anchor() : top.node(), "'steps' must list at least one step");
    }
    std::vector<Step> steps;
    std::map<std::string, int> seen;  // name -> line
    for (const YAML::Node& item : items) {
        SourceLocation name_at;
        Step step = read_step(reader, item, steps.size() + 1, indexes, &name_at);
        auto [it, fresh] = seen.emplace(step.name, step.where.line);
        if (!fresh) {
            reader.fail(name_at, "duplicate step name '" + step.name + "' (first at line " + std::to_string(it->second) + ")");
        }
        steps.push_back(std::move(step));
    }
    return steps;
}

}  // namespace detail

bool removal_matches(const std::string& pattern, const std::string& normalized) {
    return ::fnmatch(pattern.c_str(), normalized.c_str(), 0) == 0;
}

}  // namespace stackup::manifest

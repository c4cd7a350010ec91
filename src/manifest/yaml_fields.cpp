#include "manifest/yaml_fields.hpp"

#include <algorithm>
#include <charconv>

#include "base/text.hpp"
#include "manifest/text.hpp"

namespace stackup::manifest::detail {

SourceLocation Reader::at(const YAML::Node& node) const {
    YAML::Mark mark = node.Mark();
    if (mark.is_null()) {
        return SourceLocation{file_, 1, 1};
    }
    return at(mark);
}

SourceLocation Reader::at(const YAML::Mark& mark) const {
    return SourceLocation{file_, mark.line + 1, mark.column + 1};
}

void Reader::fail(const SourceLocation& where, std::string message) const {
    throw Error(ExitCode::usage, where, std::move(message));
}

void Reader::fail(const YAML::Node& node, std::string message) const {
    fail(at(node), std::move(message));
}

std::string describe(const YAML::Node& node) {
    switch (node.Type()) {
        case YAML::NodeType::Map:
            return "a map";
        case YAML::NodeType::Sequence:
            return "a list";
        case YAML::NodeType::Scalar:
            return "'" + node.Scalar() + "'";
        default:
            return "nothing";
    }
}

Fields::Fields(const Reader& reader, const YAML::Node& map, std::string what)
    : reader_(reader), node_(map), what_(std::move(what)) {
    if (!map.IsMap()) {
        reader.fail(map, "expected a map " + what_ + ", got " + describe(map));
    }
    read_entries();
}

Fields::Fields(const Reader& reader, const Field& field, std::string_view label, std::string what, EmptyMap empty)
    : reader_(reader), node_(field.value), what_(std::move(what)) {
    if (field.value.IsNull() && empty == EmptyMap::allowed) {
        node_ = field.key_node;  // a missing key inside is then reported at the key
        return;
    }
    if (!field.value.IsMap()) {
        reader.fail(field.anchor(), "expected a map for '" + std::string(label) + "', got " + describe(field.value));
    }
    read_entries();
}

void Fields::read_entries() {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
        if (!it->first.IsScalar()) {
            reader_.fail(it->first, "keys must be plain strings, got " + describe(it->first) + " " + what_);
        }
        std::string name = it->first.Scalar();
        if (const Field* first = find(name)) {
            reader_.fail(it->first, "duplicate key '" + name + "' " + what_ + " (first at line " +
                                        std::to_string(reader_.at(first->key_node).line) + ")");
        }
        fields_.push_back(Field{name, it->first, it->second});
    }
}

void Fields::only(const std::vector<std::string>& known) const {
    for (const auto& field : fields_) {
        if (std::find(known.begin(), known.end(), field.key) != known.end()) {
            continue;
        }
        std::string message = "unknown key '" + field.key + "' " + what_;
        if (auto near = closest_match(field.key, known)) {
            message += " (did you mean '" + *near + "'?)";
        } else {
            message += " (known keys: " + base::join(known) + ")";
        }
        reader_.fail(field.key_node, message);
    }
}

const Field* Fields::find(std::string_view key) const {
    for (const auto& field : fields_) {
        if (field.key == key) {
            return &field;
        }
    }
    return nullptr;
}

const Field& Fields::require(std::string_view key) const {
    if (const Field* field = find(key)) {
        return *field;
    }
    reader_.fail(node_, "missing '" + std::string(key) + "' " + what_);
}

std::string read_string(const Reader& reader, const Field& field, std::string_view label) {
    if (!field.value.IsScalar()) {
        reader.fail(field.anchor(), "expected a string for '" + std::string(label) + "', got " + describe(field.value));
    }
    return field.value.Scalar();
}

std::string read_nonempty(const Reader& reader, const Field& field, std::string_view label) {
    std::string text = read_string(reader, field, label);
    if (text.empty()) {
        reader.fail(field.value, "'" + std::string(label) + "' must not be empty");
    }
    return text;
}

bool read_bool(const Reader& reader, const Field& field, std::string_view label) {
    std::string text = field.value.IsScalar() ? field.value.Scalar() : "";
    if (text == "true" || text == "True" || text == "TRUE") {
        return true;
    }
    if (text == "false" || text == "False" || text == "FALSE") {
        return false;
    }
    reader.fail(field.anchor(), "expected a boolean for '" + std::string(label) + "', got " + describe(field.value) +
                                    " (write true or false)");
}

int read_positive_int(const Reader& reader, const Field& field, std::string_view label) {
    std::string text = field.value.IsScalar() ? field.value.Scalar() : "";
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value <= 0) {
        reader.fail(field.anchor(), "expected a positive integer for '" + std::string(label) + "', got " +
                                        describe(field.value));
    }
    return value;
}

std::vector<YAML::Node> read_list(const Reader& reader, const Field& field, std::string_view label) {
    if (field.value.IsNull()) {
        return {};
    }
    if (!field.value.IsSequence()) {
        reader.fail(field.anchor(), "expected a list for '" + std::string(label) + "', got " + describe(field.value));
    }
    return std::vector<YAML::Node>(field.value.begin(), field.value.end());
}

std::string read_item(const Reader& reader, const YAML::Node& item, std::string_view label) {
    if (!item.IsScalar()) {
        reader.fail(item, "expected a string in '" + std::string(label) + "', got " + describe(item));
    }
    return item.Scalar();
}

}  // namespace stackup::manifest::detail

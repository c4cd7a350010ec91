#pragma once
// The parser's view of YAML nodes: locations, typed scalars, and maps read as
// ordered fields with unknown, near-miss and duplicate keys reported. Internal to
// src/manifest (the only module that includes yaml-cpp).

#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/error.hpp"

namespace stackup::manifest::detail {

// Turns nodes into 1-based locations in one file and throws manifest errors there.
class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    const std::string& file() const { return file_; }
    SourceLocation at(const YAML::Node& node) const;
    SourceLocation at(const YAML::Mark& mark) const;
    [[noreturn]] void fail(const SourceLocation& where, std::string message) const;
    [[noreturn]] void fail(const YAML::Node& node, std::string message) const;

private:
    std::string file_;
};

struct Field {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
    // Where a problem with the value is reported: the value, or the key when the value is empty.
    YAML::Node anchor() const { return value.IsNull() ? key_node : value; }
};

// Whether an empty value (`key:` with nothing after it) reads as an empty map.
enum class EmptyMap { error, allowed };

// One YAML map, its keys checked against a fixed set.
class Fields {
public:
    // `what` places the map in messages: "at the top level", "in step 'torch'".
    Fields(const Reader& reader, const YAML::Node& map, std::string what);
    // The map held by `field`; `label` names it in the "expected a map" message.
    Fields(const Reader& reader, const Field& field, std::string_view label, std::string what,
           EmptyMap empty = EmptyMap::error);

    // Fails on the first key not in `known`, suggesting the nearest one.
    void only(const std::vector<std::string>& known) const;
    const Field* find(std::string_view key) const;
    // Fails, at the map, when `key` is absent.
    const Field& require(std::string_view key) const;
    const std::vector<Field>& all() const { return fields_; }
    const YAML::Node& node() const { return node_; }
    const std::string& what() const { return what_; }

private:
    void read_entries();

    const Reader& reader_;
    YAML::Node node_;
    std::string what_;
    std::vector<Field> fields_;
};

// "a map", "a list", "nothing" or the scalar's text in quotes.
std::string describe(const YAML::Node& node);

// Any scalar, as written (so `3.10` stays "3.10"); `label` names the field.
std::string read_string(const Reader& reader, const Field& field, std::string_view label);
// Like read_string, but an empty string is an error too.
std::string read_nonempty(const Reader& reader, const Field& field, std::string_view label);
// true/false (YAML 1.2 core spellings).
bool read_bool(const Reader& reader, const Field& field, std::string_view label);
int read_positive_int(const Reader& reader, const Field& field, std::string_view label);
// A sequence (an empty value counts as an empty list).
std::vector<YAML::Node> read_list(const Reader& reader, const Field& field, std::string_view label);
// A scalar item of a list, as written.
std::string read_item(const Reader& reader, const YAML::Node& item, std::string_view label);

}  // namespace stackup::manifest::detail

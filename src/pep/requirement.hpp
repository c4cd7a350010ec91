#pragma once
// PEP 508 dependency specifiers ("torch[opt]>=2.11.0.dev0; python_version >= '3.10'").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pep/specifier.hpp"

namespace stackup::pep {

struct Requirement {
    std::string name;                 // as written
    std::vector<std::string> extras;  // as written, in order
    SpecifierSet specifier;           // empty when none
    std::string url;                  // for "name @ url", else ""
    std::string marker;               // the marker text after ';', trimmed, else ""

    std::string normalized_name() const;
    std::string str() const;          // canonical spelling, usable as an installer argument
    friend bool operator==(const Requirement&, const Requirement&) = default;
};

// nullopt and `*error` set (what is wrong, and at which character) when invalid.
std::optional<Requirement> parse_requirement(std::string_view text, std::string* error = nullptr);

}  // namespace stackup::pep

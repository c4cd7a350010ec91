#pragma once
// PEP 508 environment markers ("python_version >= '3.10' and extra == 'cuda'"), evaluated
// as pypa/packaging >= 26 does.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace stackup::pep {

// name -> value: python_version, python_full_version, os_name, sys_platform, platform_machine,
// platform_system, platform_release, platform_version, platform_python_implementation,
// implementation_name, implementation_version, and "extra" ("" when no extra is being evaluated).
using MarkerEnvironment = std::map<std::string, std::string>;

// What is wrong with a marker's text, and the 0-based offset of the character at fault.
struct MarkerSyntaxError {
    std::string what;
    std::size_t at = 0;
};

// Reads `marker` without evaluating it: nullopt when it is a valid marker, else the first thing wrong.
// The one PEP 508 marker grammar: evaluate_marker refuses exactly these texts ("invalid marker ...").
[[nodiscard]] std::optional<MarkerSyntaxError> marker_syntax_error(std::string_view marker);

// true/false; nullopt and *error (what is wrong, at which character) when the marker text is invalid
// or names a variable the environment lacks. A missing "extra" counts as "" (packaging's default).
std::optional<bool> evaluate_marker(std::string_view marker, const MarkerEnvironment& env, std::string* error = nullptr);

}  // namespace stackup::pep

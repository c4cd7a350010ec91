#pragma once
// PEP 508 environment markers ("python_version >= '3.10' and extra == 'cuda'"), evaluated
// as pypa/packaging >= 26 does.

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace stackup::pep {

// name -> value: python_version, python_full_version, os_name, sys_platform, platform_machine,
// platform_system, platform_release, platform_version, platform_python_implementation,
// implementation_name, implementation_version, and "extra" ("" when no extra is being evaluated).
using MarkerEnvironment = std::map<std::string, std::string>;

// true/false; nullopt and *error (what is wrong, at which character) when the marker text is invalid
// or names a variable the environment lacks. A missing "extra" counts as "" (packaging's default).
std::optional<bool> evaluate_marker(std::string_view marker, const MarkerEnvironment& env, std::string* error = nullptr);

}  // namespace stackup::pep

#pragma once
// PEP 503 project names.

#include <string>
#include <string_view>

namespace stackup::pep {

// Lower-cased, runs of -_. collapsed to "-" ("Sgl_Kernel" -> "sgl-kernel").
std::string normalize_name(std::string_view name);
// PEP 508 validity of a project name (letters, digits, -_. ; alphanumeric ends).
bool is_valid_name(std::string_view name);
bool is_normalized_name(std::string_view name);

}  // namespace stackup::pep

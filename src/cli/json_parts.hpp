#pragma once
// What the builders of json.cpp and json_apply.cpp (plan and apply documents) share. Internal to cli/.

#include <string>

#include "cli/json_value.hpp"
#include "verify/verify.hpp"

namespace stackup::cli::detail {

// null for "", else the text.
Json or_null(const std::string& text);

// {dist, version, requirement, required, installed, problem, message}
Json broken_json(const verify::BrokenRequirement& b);

}  // namespace stackup::cli::detail

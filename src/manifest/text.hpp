#pragma once
// Text helpers of the manifest parser that know nothing of YAML: path
// expansion and "did you mean" suggestions.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/manifest.hpp"

namespace stackup::manifest {

// Expands every ${VAR}; a '$' not followed by '{' stays. nullopt and `*error`
// set (naming the variable) when one is not set or a reference is malformed.
std::optional<std::string> expand_vars(std::string_view text, const EnvLookup& env, std::string* error);
// expand_vars, after a leading "~" or "~/" (HOME), for paths.
std::optional<std::string> expand_path_text(std::string_view text, const EnvLookup& env, std::string* error);

// Edit distance with adjacent transpositions counting one ("expcet" ~ "expect").
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is near enough to be a typo.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);


}  // namespace stackup::manifest

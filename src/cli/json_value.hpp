#pragma once
// The JSON value every `--json` document is built of (keys kept in insertion order); the one
// header of cli/ that includes nlohmann.

#include <nlohmann/json.hpp>

namespace stackup::cli {

using Json = nlohmann::ordered_json;

}  // namespace stackup::cli

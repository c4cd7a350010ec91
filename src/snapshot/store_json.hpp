#pragma once
// Internal to the snapshot store: snapshot.json (format 1),
// text in and out. Parse failures throw std::runtime_error naming `source`.

#include <cstdint>
#include <filesystem>
#include <string>

#include "snapshot/info.hpp"
#include "snapshot/tree.hpp"

namespace stackup::snapshot::json_format {

inline constexpr int kFormat = 1;

// Bytes as lowercase hex and back: names that are not UTF-8 are stored so ("path_hex").
[[nodiscard]] std::string to_hex(const std::string& bytes);
[[nodiscard]] std::string from_hex(const std::string& hex);

// SnapshotInfo::dir is not stored: it is where the file was found.
[[nodiscard]] std::string info_to_json(const SnapshotInfo& info);
[[nodiscard]] SnapshotInfo info_from_json(const std::string& text, const std::filesystem::path& source);

}  // namespace stackup::snapshot::json_format

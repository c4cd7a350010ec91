#pragma once
// Internal to the snapshot store: index.json and snapshot.json (format 1),
// text in and out. Parse failures throw std::runtime_error naming `source`.

#include <filesystem>
#include <string>

#include "snapshot/link.hpp"
#include "snapshot/store.hpp"
#include "snapshot/tree.hpp"

namespace stackup::snapshot::json_format {

inline constexpr int kFormat = 1;

[[nodiscard]] std::string index_to_json(const TreeIndex& index);
[[nodiscard]] TreeIndex index_from_json(const std::string& text, const std::filesystem::path& source);

// SnapshotInfo::dir is not stored: it is where the file was found.
[[nodiscard]] std::string info_to_json(const SnapshotInfo& info);
[[nodiscard]] SnapshotInfo info_from_json(const std::string& text, const std::filesystem::path& source);

// hashes.json: {"format": 1, "sha256": {"<path>": "<hex>", ...}}; paths that
// are not UTF-8 are left out (they stay unhashed, which is only stricter).
[[nodiscard]] std::string hashes_to_json(const FileHashes& hashes);
[[nodiscard]] FileHashes hashes_from_json(const std::string& text, const std::filesystem::path& source);

}  // namespace stackup::snapshot::json_format

#pragma once
// Internal to the snapshot store: index.tsv, the index of a snapshot. A
// restore reads the index first and every snapshot writes one, 20,000-60,000
// entries: as JSON that took 25 ms to write and 35 ms to read (nlohmann's
// lexer), as tab-separated lines it takes a few.
//
//   stackup snapshot index 2
//   <type>\t<mode>\t<size>\t<mtime_ns>\t<ino>\t<ctime_ns>\t<sha256>\t<path>[\t<target>]
//
// type: f, d or l; mode: octal; ino and ctime_ns: 0 when not recorded; sha256:
// lowercase hex or "-"; target: symlinks only. A path or target is written as
// it is unless it holds a tab, a newline or a backslash: then as "\" and its
// bytes in hex (a plain one never starts with a backslash).

#include <filesystem>
#include <string>

#include "snapshot/tree.hpp"

namespace stackup::snapshot::tsv_format {

inline constexpr int kFormat = 2;

[[nodiscard]] std::string index_to_tsv(const TreeIndex& index);
// Throws std::runtime_error naming `source` and the line for anything else.
[[nodiscard]] TreeIndex index_from_tsv(const std::string& text, const std::filesystem::path& source);

}  // namespace stackup::snapshot::tsv_format

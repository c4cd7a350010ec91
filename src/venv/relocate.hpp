#pragma once
// A venv built at one path (the next generation, beside the live venv) and
// switched in at another: the installer wrote the build path into what it
// wrote (each console script's shebang, bytecode compiled there). After the
// switch no file may name the build path, so before it those files name the
// venv's path instead, and the RECORD lines of the files that changed get
// their new sha256 and size.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace stackup::venv {

struct Relocation {
    std::vector<std::string> rewritten;  // text files that named the build path (relative paths)
    std::vector<std::string> removed;    // bytecode (*.pyc) that named it: python compiles it again
    std::vector<std::string> records;    // RECORD files whose lines for rewritten files were updated
    std::vector<std::string> refused;    // other binary files that name it: the tree cannot be switched
};

// Looks at each of `candidates` (paths relative to `tree`: the regular files the build
// wrote; the others are the live venv's own and cannot name the build path) and replaces
// each occurrence of `from` by `to`, each file replaced whole (a new inode; the old one may
// be shared with another tree). Throws std::system_error when a file cannot be read or written.
[[nodiscard]] Relocation relocate(const std::filesystem::path& tree, const std::string& from, const std::string& to,
                                  const std::vector<std::string>& candidates);

}  // namespace stackup::venv

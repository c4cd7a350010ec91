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

// Which of `written` (the regular files the build wrote, relative to `tree`) an installer can
// have written the build path into, so that relocate need not read the rest. A wheel's files
// are copied verbatim (PEP 427, "Installing a wheel"), except the scripts: the console scripts
// the installer generates for entry points and the `.data/scripts` files whose `#!python` it
// rewrites, all in the scripts directory, bin/. So: every written file under bin/, every
// written RECORD (their lines for rewritten scripts change), and every written file no
// written RECORD lists (bytecode the verification imports compiled, what a check or an import
// wrote: not the installer's, so not known to be free of the path). The files a RECORD lists
// outside bin/ (a torch build's 3 GB of shared objects) are not read.
[[nodiscard]] std::vector<std::string> relocation_candidates(const std::filesystem::path& tree,
                                                             const std::vector<std::string>& written);

}  // namespace stackup::venv

#pragma once
// Where a venv's state lives: its own folder, and the files stackup writes there.

#include <cstddef>
#include <filesystem>

namespace stackup::txn {

// <root>/<venv name>-<8 hex of its absolute path>, root defaulting to
// <venv parent>/.stackup (same filesystem as the venv).
std::filesystem::path state_dir_for(const std::filesystem::path& venv, const std::filesystem::path& root);

// Where apply writes step `index`'s requirements file (the plan shows this path).
std::filesystem::path requirements_file(const std::filesystem::path& state_dir, std::size_t index);

}  // namespace stackup::txn

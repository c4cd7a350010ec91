#pragma once
// The CUDA toolkit a manifest names, as its own nvcc reports it.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/process.hpp"

namespace stackup::venv {

// "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0".
std::optional<std::string> parse_nvcc_release(std::string_view nvcc_output);

struct ToolkitFacts {
    std::filesystem::path nvcc;
    std::optional<std::string> release;   // nullopt when nvcc is missing or unreadable
    std::string problem;                  // why there is no release
};

ToolkitFacts probe_toolkit(const std::filesystem::path& cuda_home, const base::Environment& env);

}  // namespace stackup::venv

#pragma once
// The NVIDIA driver version: `nvidia-smi --query-gpu=driver_version
// --format=csv,noheader`, else /proc/driver/nvidia/version.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/process.hpp"

namespace stackup::venv {

struct DriverFacts {
    std::optional<std::string> version;   // "580.65.06"; nullopt: no driver seen
    std::string source;                   // where it came from, or why there is none
};

// First line of nvidia-smi's answer ("580.65.06\n580.65.06\n" for two GPUs).
std::optional<std::string> parse_nvidia_smi(std::string_view output);
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul ..." -> "580.65.06".
std::optional<std::string> parse_proc_driver_version(std::string_view text);

DriverFacts probe_driver(const base::Environment& env,
                         const std::filesystem::path& proc_file = "/proc/driver/nvidia/version");

}  // namespace stackup::venv

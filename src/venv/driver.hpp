#pragma once
// The NVIDIA driver version: `nvidia-smi --query-gpu=driver_version
// --format=csv,noheader`, else /proc/driver/nvidia/version; and the GPUs' compute capabilities.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// The GPUs' compute capabilities: `nvidia-smi --query-gpu=compute_cap --format=csv,noheader`.
struct GpuFacts {
    std::vector<std::string> compute_caps;   // "9.0", "12.0": each once, in the order first seen
    std::string source;                      // where they came from, or why there are none
};

// One "X.Y" per line; anything else on a line is not a GPU ("[N/A]", an error) and is skipped.
std::vector<std::string> parse_compute_caps(std::string_view output);
GpuFacts probe_gpus(const base::Environment& env);

DriverFacts probe_driver(const base::Environment& env,
                         const std::filesystem::path& proc_file = "/proc/driver/nvidia/version");

}  // namespace stackup::venv

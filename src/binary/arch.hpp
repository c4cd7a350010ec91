#pragma once
// Which GPUs a kernel runs on, by NVIDIA's compatibility rules (arch.cpp cites them), and the
// compute capability as nvidia-smi prints it ("12.0").

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "binary/elf.hpp"

namespace stackup::binary {

struct Gpu {
    int major = 0, minor = 0;
    bool operator==(const Gpu&) const = default;
    auto operator<=>(const Gpu&) const = default;
};

// "12.0", "9.0", "10.3": major 1..99 without a leading zero, a dot, minor 0..9; nothing else
// (no "sm_120", no "120", no spaces).
std::optional<Gpu> parse_gpu(std::string_view text);
std::string spelled(Gpu);              // "12.0"
std::string sm_of(Gpu);                // "sm_120"

// SASS sm_XY: on X.Z with Z >= Y; sm_XYa: on X.Y only; sm_XYf: on X.Z with Z >= Y.
// PTX compute_XY: on any GPU >= X.Y (the driver compiles it); compute_XYa: on X.Y only;
// compute_XYf: on X.Z with Z >= Y. LTO IR: never (it must be linked first).
bool runs_on(const Kernel&, Gpu);

// "SASS for 75, 80, 86, 89, 90a, 120a, no PTX", "SASS for 80, 90; PTX for 90",
// "PTX for 90", "SASS for 90, no PTX; LTO IR for 100a", "no kernels".
std::string summarize(const std::vector<Kernel>&);

}  // namespace stackup::binary

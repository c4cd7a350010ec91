#pragma once
// The kernels of one fatbinary section, from its container and entry headers only (the layout
// is in elf.hpp). Payloads are skipped by their sizes, never read.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "binary/kernel.hpp"
#include "binary/source.hpp"

namespace stackup::binary {

// Bounds on hostile input, past which the file is unreadable (real files stay far below:
// libcublasLt.so.13 has 2,782 containers and 5,737 entries).
inline constexpr std::size_t max_fatbin_containers = 1 << 16;
inline constexpr std::size_t max_fatbin_entries = 1 << 16;

// How many containers and entries this file has shown so far, against those caps.
struct FatbinCount {
    std::size_t containers = 0;
    std::size_t entries = 0;
};

// Appends a Kernel for each PTX, SASS and LTO IR entry of the section at [offset, offset + size)
// (already checked to lie in the source). Throws Damaged naming `section` for a bad magic or
// version, a size that leaves its container or section, or a cap passed.
void read_fatbin(Source& source, std::uint64_t offset, std::uint64_t size, const char* section,
                 FatbinCount& count, std::vector<Kernel>& kernels);

}  // namespace stackup::binary

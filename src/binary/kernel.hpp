#pragma once
// One kernel image a fatbinary holds, as read from its entry header (binary/fatbin.hpp) for the
// ELF file around it (binary/elf.hpp).

namespace stackup::binary {

enum class KernelKind { sass, ptx, lto_ir };
enum class Variant { plain, arch_specific /* sm_90a */, family /* sm_100f */ };

struct Kernel {
    KernelKind kind;
    int sm = 0;              // 10 * major + minor of the target: 90, 100, 103, 120, 75
    Variant variant = Variant::plain;
    int ptx_major = 0, ptx_minor = 0;  // the PTX ISA version, for PTX entries; else 0
    bool compressed = false;
    bool operator==(const Kernel&) const = default;
    // By kind, then sm, variant, PTX version, compression: the order ElfInfo::kernels is in.
    auto operator<=>(const Kernel&) const = default;
};

}  // namespace stackup::binary

#pragma once
// What a shared object says about itself: its SONAME, what it links (DT_NEEDED, DT_RPATH,
// DT_RUNPATH) and which CUDA kernels its fatbinaries carry. Only headers are read, with
// pread(2) and every read range-checked against the file size and a budget (source.hpp);
// no payload is ever read, let alone decompressed.
//
// Why not libelf: no new dependency for a handful of structures, and libelf maps or reads
// whole sections (a 140 MB .nv_fatbin in libcublasLt) where we need a few bytes of each.
//
// ELF (the System V gABI, "Object Files" chapter; the structures are <elf.h>'s):
//   - e_ident: "\x7f" "ELF", class (ELFCLASS32/64), data (ELFDATA2LSB/MSB); both classes and
//     both byte orders are read.
//   - the dynamic section is found the way ld.so finds it: PT_DYNAMIC among the program
//     headers; DT_STRTAB is a virtual address, mapped to a file offset through the PT_LOAD
//     segment that holds it; DT_STRSZ bounds the string table; DT_NEEDED, DT_SONAME,
//     DT_RPATH and DT_RUNPATH are offsets into it.
//   - the fatbinary is found by section name (fatbinary_section.h of the CUDA toolkit:
//     FATBIN_DATA_SECTION_NAME ".nv_fatbin"), through the section headers and .shstrtab
//     (e_shstrndx). FATBIN_PRELINK_DATA_SECTION_NAME "__nv_relfatbin" is read only in a
//     relocatable object (ET_REL, nvcc -dc), whose only device code it is: in a shared
//     object it holds relocatable device code for nvlink, which the runtime never registers
//     (.nvFatBinSegment points into .nv_fatbin), so its kernels never run there (torch 2.9.1's
//     libtorch_nvshmem.so has PTX for sm_90 there only; cuobjdump lists it only with -all). Extended
//     numbering (e_shnum 0, e_shstrndx SHN_XINDEX, e_phnum PN_XNUM: the real value in section
//     header 0) is honoured. A file without section headers has no kernels we can see.
//
// The fatbinary, which NVIDIA does not document. Sources: n-eiling/cuda-fatbin-decompression
// (fatbin-decompress.h: fat_elf_header, fat_text_header), jiegec/fatbinary (src/lib.rs:
// FatBinaryHeader, FatBinaryEntryHeader), GrigoryEvko/nvopen-tools (fatbin/FORMAT_SPECIFICATION.md);
// every field below was checked against cuobjdump 13.2 on nvcc 13.0 output and on the CUDA 13
// libraries (cuBLAS, cuBLASLt, cuDNN, cuFFT). All fields little-endian.
//   A section holds containers one after another, each starting 8-aligned (real ones are a
//   multiple of 8 long, so back to back); libcublasLt.so.13 holds 2,782, and an empty one
//   (entries size 0) occurs. A zero where a magic would be ends the section (padding).
//   Container header, 16 bytes:
//     0x00 u32 magic 0xBA55ED50   0x04 u16 version, 1   0x06 u16 header size, 16
//     0x08 u64 size of the entries that follow the header
//   Entries back to back, the last ending exactly at the container's end. Entry header:
//     0x00 u16 kind: 1 PTX, 2 ELF (a SASS cubin), 8 NVVM IR (LTO, nvcc code=lto_XX; CUDA 13
//          calls it "nvvm code"); other kinds are skipped
//     0x02 u16 0x0101   0x04 u32 header size: 64, or up to 120 with option fields after
//          the first 64 bytes (ptxas/nvvm options); never less than 64
//     0x08 u64 payload size: the payload follows the header; the next entry follows it
//     0x10 u32 compressed size (0 when not compressed)
//     0x14 u32 0, or 0x40 where option fields follow (meaning unsure; unused here)
//     0x18 u16 minor, 0x1a u16 major: PTX: the PTX ISA version (9.0 from CUDA 13.0);
//          ELF: the cubin's ABI version (1.8); NVVM: the IR version (1.65)
//     0x1c u32 arch: 10 * major + minor of the target, 90 for sm_90a, 100 for sm_100f, 121
//     0x28 u64 flags: 0x1 64-bit, 0x2 debug, 0x10 linux host, 0x2000 LZ4-compressed
//          (-compress-mode=speed), 0x8000 zstd-compressed (CUDA 13's other modes; PTX and
//          debug images by default, SASS with -compress-all, and SASS in __nv_relfatbin),
//          0x10000 on LTO IR entries (which cuobjdump calls obfuscated),
//          0x100000 arch-specific target ("a": sm_90a, compute_90a, lto_100a),
//          0x200000 family target ("f": sm_100f, compute_100f), 0x1000000 on every SASS
//          entry for sm_100 and later, meaning unknown
//     0x38 u64 decompressed size (0 when not compressed)
//   nvcc 13 wrote each cubin of a test library into .nv_fatbin twice (two containers): hence
//   kernels are deduplicated.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "binary/kernel.hpp"
#include "binary/source.hpp"

namespace stackup::binary {

struct ElfInfo {
    bool elf = false;                 // false: not an ELF file (a .py, a text file): nothing to judge
    std::string unreadable;           // non-empty: an ELF file that could not be read, and why (what was
                                      // read before the damage stays; kernels are all or none). Also set,
                                      // with elf true, for a file that could not be opened
    std::string soname;
    std::vector<std::string> needed;  // DT_NEEDED in order
    std::vector<std::string> rpath, runpath;   // DT_RPATH / DT_RUNPATH split on ':', empty parts dropped
    std::vector<Kernel> kernels;      // every entry of every container in .nv_fatbin and __nv_relfatbin,
                                      // deduplicated, sorted
};

// Never throws. Opening or reading errors come back in `unreadable` with the errno text.
ElfInfo read_elf(const std::filesystem::path& file);
// The same, telling what the reading cost (a non-ELF file: one read of at most 64 bytes).
ElfInfo read_elf(const std::filesystem::path& file, ReadCost& cost);
ElfInfo read_elf_bytes(std::span<const unsigned char> bytes);

// "sm_90", "sm_90a", "sm_100f", "compute_90" (PTX), "compute_90a", "lto_90"
std::string spelled(const Kernel&);

}  // namespace stackup::binary

#pragma once
// The ELF structures as elf.cpp reads them: both classes, either byte order, string tables read
// through a window. Internal to binary/.

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "binary/source.hpp"

namespace stackup::binary::detail {

struct Elf64 {
    using Ehdr = Elf64_Ehdr;
    using Phdr = Elf64_Phdr;
    using Shdr = Elf64_Shdr;
    using Dyn = Elf64_Dyn;
};
struct Elf32 {
    using Ehdr = Elf32_Ehdr;
    using Phdr = Elf32_Phdr;
    using Shdr = Elf32_Shdr;
    using Dyn = Elf32_Dyn;
};

// The fields used, whatever the class and byte order.
struct Header {
    std::uint32_t type = 0;  // e_type
    std::uint64_t phoff = 0, shoff = 0;
    std::uint64_t phnum = 0, shnum = 0, shstrndx = 0;
    std::uint64_t phentsize = 0, shentsize = 0;
};
struct Segment {
    std::uint32_t type = 0;
    std::uint64_t offset = 0, vaddr = 0, filesz = 0;
};
struct Section {
    std::uint32_t name = 0, type = 0, link = 0, info = 0;
    std::uint64_t offset = 0, size = 0;
};

// "0x1f" for 31.
std::string hex(std::uint64_t value);

// An integer field of the file, byte-swapped when the file's byte order is not the host's.
template <typename T>
T host(T value, bool swap) {
    using U = std::make_unsigned_t<T>;
    auto u = static_cast<U>(value);
    if (swap) {
        if constexpr (sizeof(U) == 2) {
            u = __builtin_bswap16(u);
        } else if constexpr (sizeof(U) == 4) {
            u = __builtin_bswap32(u);
        } else if constexpr (sizeof(U) == 8) {
            u = __builtin_bswap64(u);
        }
    }
    return static_cast<T>(u);
}

// The structure S at `at` of bytes already read (the caller read enough).
template <typename S>
S record(const std::vector<unsigned char>& bytes, std::size_t at) {
    S out;
    std::memcpy(&out, bytes.data() + at, sizeof out);
    return out;
}

// Strings of one string table, each read through a window so that nearby ones share a read.
class StringTable {
public:
    StringTable(Source& source, std::uint64_t offset, std::uint64_t size, const char* what)
        : source_(source), offset_(offset), size_(size), what_(what) {}

    // The string at `index`; Damaged when it lies past the table's end or is not terminated.
    std::string at(std::uint64_t index);

private:
    std::optional<std::string> from_window(std::uint64_t index) const;

    Source& source_;
    std::uint64_t offset_, size_;
    const char* what_;
    std::vector<unsigned char> window_;
    std::uint64_t window_start_ = 0;
};

// "a:b::c" -> {"a", "b", "c"}: DT_RPATH and DT_RUNPATH's lists, empty entries left out.
std::vector<std::string> split_path_list(const std::string& text);

}  // namespace stackup::binary::detail

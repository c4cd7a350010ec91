#pragma once
// Test inputs made by hand: fatbin containers and small ELF shared objects of either class and
// byte order, laid out as a linker would (one PT_LOAD over the whole file, PT_DYNAMIC, section
// headers last), with the offset of every part known so that a test can damage exactly one.

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace stackup::binary::testing {

using Bytes = std::vector<unsigned char>;

template <typename T>
void put_le(Bytes& out, std::size_t at, T value) {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        out[at + i] = static_cast<unsigned char>(static_cast<std::uint64_t>(value) >> (8 * i));
    }
}

// One fatbin entry header (elf.hpp's layout) and its payload, which is zeros.
struct FatEntry {
    std::uint16_t kind = 2;              // 1 PTX, 2 ELF, 8 NVVM
    std::uint32_t arch = 90;
    std::uint64_t flags = 0x11;          // 64-bit, linux
    std::uint16_t major = 1, minor = 8;  // PTX ISA version for PTX
    std::uint64_t payload = 16;
    std::uint32_t header_size = 64;
};

inline Bytes fat_entry(const FatEntry& e) {
    Bytes out(e.header_size + e.payload, 0);
    put_le<std::uint16_t>(out, 0x00, e.kind);
    put_le<std::uint16_t>(out, 0x02, 0x0101);
    put_le<std::uint32_t>(out, 0x04, e.header_size);
    put_le<std::uint64_t>(out, 0x08, e.payload);
    put_le<std::uint16_t>(out, 0x18, e.minor);
    put_le<std::uint16_t>(out, 0x1a, e.major);
    put_le<std::uint32_t>(out, 0x1c, e.arch);
    put_le<std::uint64_t>(out, 0x28, e.flags);
    return out;
}

// A container: magic, version 1, header size 16, the entries' size, the entries.
inline Bytes fat_container(const std::vector<FatEntry>& entries) {
    Bytes body;
    for (const auto& e : entries) {
        auto bytes = fat_entry(e);
        body.insert(body.end(), bytes.begin(), bytes.end());
    }
    Bytes out(16, 0);
    put_le<std::uint32_t>(out, 0, 0xBA55ED50);
    put_le<std::uint16_t>(out, 4, 1);
    put_le<std::uint16_t>(out, 6, 16);
    put_le<std::uint64_t>(out, 8, body.size());
    out.insert(out.end(), body.begin(), body.end());
    return out;
}

inline Bytes joined(std::vector<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts) {
        out.insert(out.end(), p.begin(), p.end());
    }
    return out;
}

struct Elf64Types {
    using Ehdr = Elf64_Ehdr;
    using Phdr = Elf64_Phdr;
    using Shdr = Elf64_Shdr;
    using Dyn = Elf64_Dyn;
    static constexpr unsigned char elf_class = ELFCLASS64;
};
struct Elf32Types {
    using Ehdr = Elf32_Ehdr;
    using Phdr = Elf32_Phdr;
    using Shdr = Elf32_Shdr;
    using Dyn = Elf32_Dyn;
    static constexpr unsigned char elf_class = ELFCLASS32;
};

// What goes into an image, and where its parts landed.
struct ElfSpec {
    std::vector<std::pair<std::int64_t, std::string>> dynamic;   // (DT_NEEDED, "libc.so.6"), ...
    std::vector<std::pair<std::string, Bytes>> sections;         // (".nv_fatbin", containers), ...
    bool big_endian = false;
};
struct ElfImage {
    Bytes bytes;
    std::size_t phoff = 0, dynamic = 0, dynstr = 0, shoff = 0;
    std::vector<std::size_t> section_offsets;   // of spec.sections' data, in order
    std::uint64_t base = 0x10000;               // the PT_LOAD's vaddr
};

template <typename T>
T in_order(T value, bool big) {
    if (!big) {
        return value;
    }
    T out{};
    auto* from = reinterpret_cast<const unsigned char*>(&value);
    auto* to = reinterpret_cast<unsigned char*>(&out);
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        to[i] = from[sizeof(T) - 1 - i];
    }
    return out;
}

// Appends `size` bytes (zeros when `data` is null) at the image's next 8-byte boundary; returns where.
inline std::size_t append_aligned(ElfImage& image, const void* data, std::size_t size) {
    while (image.bytes.size() % 8 != 0) {
        image.bytes.push_back(0);
    }
    auto at = image.bytes.size();
    image.bytes.resize(at + size);
    if (data != nullptr && size > 0) {
        std::memcpy(image.bytes.data() + at, data, size);
    }
    return at;
}

// At image.phoff: a PT_LOAD of the whole image and the PT_DYNAMIC of its dynamic section.
template <typename C>
void write_program_headers(ElfImage& image, std::size_t dynamic_size, bool big) {
    typename C::Phdr load{}, dynamic{};
    load.p_type = in_order<decltype(load.p_type)>(PT_LOAD, big);
    load.p_vaddr = in_order<decltype(load.p_vaddr)>(static_cast<decltype(load.p_vaddr)>(image.base), big);
    load.p_filesz = in_order<decltype(load.p_filesz)>(static_cast<decltype(load.p_filesz)>(image.bytes.size()), big);
    dynamic.p_type = in_order<decltype(dynamic.p_type)>(PT_DYNAMIC, big);
    dynamic.p_offset = in_order<decltype(dynamic.p_offset)>(static_cast<decltype(dynamic.p_offset)>(image.dynamic), big);
    dynamic.p_vaddr = in_order<decltype(dynamic.p_vaddr)>(static_cast<decltype(dynamic.p_vaddr)>(image.base + image.dynamic), big);
    dynamic.p_filesz = in_order<decltype(dynamic.p_filesz)>(static_cast<decltype(dynamic.p_filesz)>(dynamic_size), big);
    std::memcpy(image.bytes.data() + image.phoff, &load, sizeof load);
    std::memcpy(image.bytes.data() + image.phoff + sizeof load, &dynamic, sizeof dynamic);
}

// At offset 0: the ELF header of class C in the byte order asked, naming both tables.
template <typename C>
void write_elf_header(ElfImage& image, std::size_t shnum, bool big) {
    typename C::Ehdr e{};
    std::memcpy(e.e_ident, ELFMAG, SELFMAG);
    e.e_ident[EI_CLASS] = C::elf_class;
    e.e_ident[EI_DATA] = big ? ELFDATA2MSB : ELFDATA2LSB;
    e.e_ident[EI_VERSION] = EV_CURRENT;
    e.e_type = in_order<decltype(e.e_type)>(ET_DYN, big);
    e.e_version = in_order<decltype(e.e_version)>(EV_CURRENT, big);
    e.e_phoff = in_order<decltype(e.e_phoff)>(static_cast<decltype(e.e_phoff)>(image.phoff), big);
    e.e_shoff = in_order<decltype(e.e_shoff)>(static_cast<decltype(e.e_shoff)>(image.shoff), big);
    e.e_ehsize = in_order<decltype(e.e_ehsize)>(sizeof(typename C::Ehdr), big);
    e.e_phentsize = in_order<decltype(e.e_phentsize)>(sizeof(typename C::Phdr), big);
    e.e_phnum = in_order<decltype(e.e_phnum)>(2, big);
    e.e_shentsize = in_order<decltype(e.e_shentsize)>(sizeof(typename C::Shdr), big);
    e.e_shnum = in_order<decltype(e.e_shnum)>(static_cast<decltype(e.e_shnum)>(shnum), big);
    e.e_shstrndx = in_order<decltype(e.e_shstrndx)>(static_cast<decltype(e.e_shstrndx)>(shnum - 1), big);
    std::memcpy(image.bytes.data(), &e, sizeof e);
}

// One dynamic entry: `tag` and its value (a string's offset in .dynstr, an address, a size).
template <typename C>
typename C::Dyn dyn_entry(std::int64_t tag, std::uint64_t value, bool big) {
    typename C::Dyn d{};
    d.d_tag = in_order<decltype(d.d_tag)>(static_cast<decltype(d.d_tag)>(tag), big);
    d.d_un.d_val = in_order<decltype(d.d_un.d_val)>(static_cast<decltype(d.d_un.d_val)>(value), big);
    return d;
}

template <typename C>
ElfImage make_elf(const ElfSpec& spec) {
    const bool big = spec.big_endian;
    ElfImage image;
    auto append = [&](const void* data, std::size_t size) { return append_aligned(image, data, size); };
    image.bytes.resize(sizeof(typename C::Ehdr));

    std::string dynstr(1, '\0');
    std::vector<typename C::Dyn> dyns;
    for (const auto& [tag, text] : spec.dynamic) {
        dyns.push_back(dyn_entry<C>(tag, dynstr.size(), big));
        dynstr += text;
        dynstr += '\0';
    }
    image.phoff = append(nullptr, 2 * sizeof(typename C::Phdr));
    image.dynstr = append(dynstr.data(), dynstr.size());
    dyns.push_back(dyn_entry<C>(DT_STRTAB, image.base + image.dynstr, big));
    dyns.push_back(dyn_entry<C>(DT_STRSZ, dynstr.size(), big));
    dyns.push_back(dyn_entry<C>(DT_NULL, 0, big));
    image.dynamic = append(dyns.data(), dyns.size() * sizeof(typename C::Dyn));
    auto dynamic_size = dyns.size() * sizeof(typename C::Dyn);

    std::string shstrtab(1, '\0');
    std::vector<std::uint32_t> names;
    for (const auto& [name, data] : spec.sections) {
        image.section_offsets.push_back(append(data.data(), data.size()));
        names.push_back(static_cast<std::uint32_t>(shstrtab.size()));
        shstrtab += name + '\0';
    }
    auto shstrtab_name = static_cast<std::uint32_t>(shstrtab.size());
    shstrtab += ".shstrtab";
    shstrtab += '\0';
    auto shstrtab_at = append(shstrtab.data(), shstrtab.size());

    std::vector<typename C::Shdr> shdrs(1);
    auto section = [&](std::uint32_t name, std::uint32_t type, std::size_t offset, std::size_t size) {
        typename C::Shdr s{};
        s.sh_name = in_order(name, big);
        s.sh_type = in_order(type, big);
        s.sh_offset = in_order<decltype(s.sh_offset)>(static_cast<decltype(s.sh_offset)>(offset), big);
        s.sh_size = in_order<decltype(s.sh_size)>(static_cast<decltype(s.sh_size)>(size), big);
        shdrs.push_back(s);
    };
    for (std::size_t i = 0; i < spec.sections.size(); ++i) {
        section(names[i], SHT_PROGBITS, image.section_offsets[i], spec.sections[i].second.size());
    }
    section(shstrtab_name, SHT_STRTAB, shstrtab_at, shstrtab.size());
    image.shoff = append(shdrs.data(), shdrs.size() * sizeof(typename C::Shdr));

    write_program_headers<C>(image, dynamic_size, big);
    write_elf_header<C>(image, shdrs.size(), big);
    return image;
}

}  // namespace stackup::binary::testing

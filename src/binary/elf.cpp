#include "binary/elf.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>

#include "base/fs.hpp"
#include "binary/elf_parts.hpp"
#include "binary/fatbin.hpp"

namespace stackup::binary {

namespace {

// Where a file's headers can be larger than real ones are, past which it is unreadable.
constexpr std::uint64_t max_table_entries = 1 << 16;  // program or section headers
constexpr std::uint64_t max_dynamic_bytes = 1 << 20;
constexpr std::uint64_t max_shstrtab_bytes = 1 << 20;

constexpr std::string_view fatbin_sections[] = {".nv_fatbin", "__nv_relfatbin"};
constexpr std::string_view relocatable_fatbin = "__nv_relfatbin";  // read in ET_REL files only: elf.hpp

using detail::Elf32;
using detail::Elf64;
using detail::Header;
using detail::Section;
using detail::Segment;
using detail::StringTable;
using detail::hex;
using detail::host;
using detail::record;
using detail::split_path_list;

// Reads one ELF file of class C (Elf64, Elf32) in either byte order.
template <typename C>
class Reader {
public:
    Reader(Source& source, bool swap) : source_(source), swap_(swap) {}

    void read(const std::vector<unsigned char>& first, ElfInfo& info) {
        read_header(first);
        read_extended_numbering();
        read_segments();
        read_dynamic(info);
        read_sections();
        read_kernels(info);
    }

private:
    // A field of the file as this host reads it.
    template <typename T>
    T ordered(T value) const {
        return host(value, swap_);
    }

    void read_header(const std::vector<unsigned char>& first) {
        if (first.size() < sizeof(typename C::Ehdr)) {
            throw Damaged("truncated ELF header (" + std::to_string(first.size()) + " of " +
                          std::to_string(sizeof(typename C::Ehdr)) + " bytes)");
        }
        auto e = record<typename C::Ehdr>(first, 0);
        header_.type = ordered(e.e_type);
        header_.phoff = ordered(e.e_phoff);
        header_.shoff = ordered(e.e_shoff);
        header_.phnum = ordered(e.e_phnum);
        header_.shnum = ordered(e.e_shnum);
        header_.shstrndx = ordered(e.e_shstrndx);
        header_.phentsize = ordered(e.e_phentsize);
        header_.shentsize = ordered(e.e_shentsize);
    }

    // e_phnum PN_XNUM, e_shnum 0 and e_shstrndx SHN_XINDEX: the real numbers in section header 0.
    void read_extended_numbering() {
        bool extended = header_.phnum == PN_XNUM || header_.shstrndx == SHN_XINDEX ||
                        (header_.shnum == 0 && header_.shoff != 0);
        if (!extended || header_.shoff == 0) {
            return;
        }
        check_entry_size(header_.shentsize, sizeof(typename C::Shdr), "section");
        auto zero = section_at(source_.read(header_.shoff, sizeof(typename C::Shdr), "section header 0"), 0);
        if (header_.shnum == 0) {
            header_.shnum = zero.size;
        }
        if (header_.shstrndx == SHN_XINDEX) {
            header_.shstrndx = zero.link;
        }
        if (header_.phnum == PN_XNUM) {
            header_.phnum = zero.info;
        }
    }

    void check_entry_size(std::uint64_t size, std::size_t needed, const char* what) const {
        if (size < needed) {
            throw Damaged(std::string("ELF ") + what + " header size " + std::to_string(size) + ", not " +
                          std::to_string(needed));
        }
    }

    // The bytes of a table of `count` records of `entsize` at `offset`, in one read.
    std::vector<unsigned char> read_table(std::uint64_t offset, std::uint64_t count, std::uint64_t entsize,
                                          std::size_t needed, const char* what) {
        check_entry_size(entsize, needed, what);
        if (count > max_table_entries) {
            throw Damaged(std::string("ELF file claims ") + std::to_string(count) + " " + what + " headers");
        }
        return source_.read(offset, count * entsize, (std::string(what) + " headers").c_str());
    }

    void read_segments() {
        if (header_.phnum == 0) {
            return;
        }
        auto table = read_table(header_.phoff, header_.phnum, header_.phentsize, sizeof(typename C::Phdr), "program");
        for (std::uint64_t i = 0; i < header_.phnum; ++i) {
            auto p = record<typename C::Phdr>(table, i * header_.phentsize);
            segments_.push_back({ordered(p.p_type), ordered(p.p_offset), ordered(p.p_vaddr), ordered(p.p_filesz)});
        }
    }

    Section section_at(const std::vector<unsigned char>& table, std::uint64_t at) const {
        auto s = record<typename C::Shdr>(table, at);
        return {ordered(s.sh_name), ordered(s.sh_type), ordered(s.sh_link), ordered(s.sh_info), ordered(s.sh_offset), ordered(s.sh_size)};
    }

    void read_sections() {
        if (header_.shoff == 0 || header_.shnum == 0) {
            return;
        }
        auto table = read_table(header_.shoff, header_.shnum, header_.shentsize, sizeof(typename C::Shdr), "section");
        for (std::uint64_t i = 0; i < header_.shnum; ++i) {
            sections_.push_back(section_at(table, i * header_.shentsize));
        }
    }

    // DT_STRTAB's address as a file offset, through the PT_LOAD segment that holds it.
    std::uint64_t file_offset_of(std::uint64_t address) const {
        for (const auto& s : segments_) {
            if (s.type == PT_LOAD && address >= s.vaddr && address - s.vaddr < s.filesz) {
                return s.offset + (address - s.vaddr);
            }
        }
        throw Damaged("DT_STRTAB " + hex(address) + " lies in no loaded segment");
    }

    void read_dynamic(ElfInfo& info) {
        auto dynamic = std::find_if(segments_.begin(), segments_.end(),
                                    [](const Segment& s) { return s.type == PT_DYNAMIC; });
        if (dynamic == segments_.end()) {
            return;  // a static executable or an object file: it links nothing
        }
        if (dynamic->filesz > max_dynamic_bytes) {
            throw Damaged("PT_DYNAMIC of " + std::to_string(dynamic->filesz) + " bytes");
        }
        auto bytes = source_.read(dynamic->offset, dynamic->filesz, "the dynamic section");
        std::optional<std::uint64_t> strtab, strsz;
        std::vector<std::pair<std::int64_t, std::uint64_t>> strings;  // (tag, string index), in order
        for (std::size_t at = 0; at + sizeof(typename C::Dyn) <= bytes.size(); at += sizeof(typename C::Dyn)) {
            auto d = record<typename C::Dyn>(bytes, at);
            auto tag = static_cast<std::int64_t>(ordered(d.d_tag));
            std::uint64_t value = ordered(d.d_un.d_val);
            if (tag == DT_NULL) {
                break;
            }
            if (tag == DT_STRTAB) {
                strtab = value;
            } else if (tag == DT_STRSZ) {
                strsz = value;
            } else if (tag == DT_NEEDED || tag == DT_SONAME || tag == DT_RPATH || tag == DT_RUNPATH) {
                strings.emplace_back(tag, value);
            }
        }
        if (strings.empty()) {
            return;
        }
        if (!strtab || !strsz) {
            throw Damaged("the dynamic section names libraries but has no DT_STRTAB or DT_STRSZ");
        }
        auto offset = file_offset_of(*strtab);
        if (!source_.holds(offset, *strsz)) {
            throw Damaged("the dynamic string table (DT_STRTAB " + hex(*strtab) + ", DT_STRSZ " +
                          std::to_string(*strsz) + ") lies past the end of the file");
        }
        StringTable table(source_, offset, *strsz, "the dynamic string table");
        for (const auto& [tag, index] : strings) {
            auto text = table.at(index);
            if (tag == DT_NEEDED) {
                info.needed.push_back(std::move(text));
            } else if (tag == DT_SONAME) {
                info.soname = std::move(text);
            } else {
                auto& list = tag == DT_RPATH ? info.rpath : info.runpath;
                for (auto& part : split_path_list(text)) {
                    list.push_back(std::move(part));
                }
            }
        }
    }

    void read_kernels(ElfInfo& info) {
        if (sections_.empty() || header_.shstrndx == SHN_UNDEF) {
            return;
        }
        if (header_.shstrndx >= sections_.size()) {
            throw Damaged("e_shstrndx " + std::to_string(header_.shstrndx) + " names no section");
        }
        const auto& names = sections_[header_.shstrndx];
        if (names.size > max_shstrtab_bytes) {
            throw Damaged("a section name table of " + std::to_string(names.size) + " bytes");
        }
        if (!source_.holds(names.offset, names.size)) {
            throw Damaged("the section name table lies past the end of the file");
        }
        StringTable table(source_, names.offset, names.size, "the section name table");
        FatbinCount count;
        std::vector<Kernel> kernels;  // all or nothing: a half-read list would misjudge the file
        for (const auto& s : sections_) {
            if (s.type == SHT_NOBITS || s.type == SHT_NULL) {
                continue;
            }
            auto name = table.at(s.name);
            auto known = std::find(std::begin(fatbin_sections), std::end(fatbin_sections), name);
            if (known == std::end(fatbin_sections) || (*known == relocatable_fatbin && header_.type != ET_REL)) {
                continue;
            }
            if (!source_.holds(s.offset, s.size)) {
                throw Damaged(name + " lies past the end of the file");
            }
            read_fatbin(source_, s.offset, s.size, known->data(), count, kernels);
        }
        std::sort(kernels.begin(), kernels.end());
        kernels.erase(std::unique(kernels.begin(), kernels.end()), kernels.end());
        info.kernels = std::move(kernels);
    }

    Source& source_;
    bool swap_;
    Header header_;
    std::vector<Segment> segments_;
    std::vector<Section> sections_;
};

// The first bytes decide: not "\x7fELF" is not ELF; then the class and byte order.
ElfInfo read_from(Source& source) {
    ElfInfo info;
    try {
        auto first = source.read(0, std::min<std::uint64_t>(source.size(), sizeof(Elf64_Ehdr)), "the ELF header");
        if (first.size() < SELFMAG || std::memcmp(first.data(), ELFMAG, SELFMAG) != 0) {
            return info;
        }
        info.elf = true;
        if (first.size() < EI_NIDENT) {
            throw Damaged("truncated ELF header (" + std::to_string(first.size()) + " bytes)");
        }
        auto data = first[EI_DATA];
        if (data != ELFDATA2LSB && data != ELFDATA2MSB) {
            throw Damaged("ELF byte order " + std::to_string(data) + " is neither little nor big endian");
        }
        bool swap = (data == ELFDATA2MSB) != (std::endian::native == std::endian::big);
        switch (first[EI_CLASS]) {
        case ELFCLASS64:
            Reader<Elf64>(source, swap).read(first, info);
            break;
        case ELFCLASS32:
            Reader<Elf32>(source, swap).read(first, info);
            break;
        default:
            throw Damaged("ELF class " + std::to_string(first[EI_CLASS]) + " is neither 32- nor 64-bit");
        }
    } catch (const Damaged& e) {
        info.unreadable = e.what();
    }
    return info;
}

}  // namespace

ElfInfo read_elf(const std::filesystem::path& file, ReadCost& cost) {
    // O_NONBLOCK: a FIFO where a file was expected must not hang the scan.
    base::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    ElfInfo info;
    if (!fd) {
        info.elf = true;  // it could not be told apart, so it is reported rather than skipped
        info.unreadable = std::string("cannot open: ") + std::strerror(errno);
        return info;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        info.elf = true;
        info.unreadable = std::string("cannot stat: ") + std::strerror(errno);
        return info;
    }
    if (!S_ISREG(st.st_mode)) {
        return info;  // a directory or a device is not a shared object
    }
    FileSource source(fd.get(), static_cast<std::uint64_t>(st.st_size));
    info = read_from(source);
    cost = source.cost();
    return info;
}

ElfInfo read_elf(const std::filesystem::path& file) {
    ReadCost cost;
    return read_elf(file, cost);
}

ElfInfo read_elf_bytes(std::span<const unsigned char> bytes) {
    MemorySource source(bytes);
    return read_from(source);
}

std::string spelled(const Kernel& kernel) {
    std::string out = kernel.kind == KernelKind::sass  ? "sm_"
                      : kernel.kind == KernelKind::ptx ? "compute_"
                                                       : "lto_";
    out += std::to_string(kernel.sm);
    if (kernel.variant == Variant::arch_specific) {
        out += 'a';
    } else if (kernel.variant == Variant::family) {
        out += 'f';
    }
    return out;
}

}  // namespace stackup::binary

#include "binary/fatbin.hpp"

#include <optional>
#include <string>

namespace stackup::binary {

namespace {

// The layout, as elf.hpp describes it.
constexpr std::uint32_t container_magic = 0xBA55ED50;
constexpr std::uint16_t container_version = 1;
constexpr std::uint64_t container_header_size = 16;
constexpr std::uint64_t entry_header_size = 64;

constexpr std::uint16_t kind_ptx = 1;
constexpr std::uint16_t kind_elf = 2;
constexpr std::uint16_t kind_nvvm = 8;

constexpr std::uint64_t flag_lz4 = 0x2000;
constexpr std::uint64_t flag_zstd = 0x8000;
constexpr std::uint64_t flag_arch_specific = 0x100000;
constexpr std::uint64_t flag_family = 0x200000;

// A little-endian field of a header just read (the header is as long as the offsets used).
template <typename T>
T load(const std::vector<unsigned char>& header, std::size_t at) {
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        value |= static_cast<T>(static_cast<T>(header[at + i]) << (8 * i));
    }
    return value;
}

std::string at(const char* section, std::uint64_t offset) {
    return std::string(section) + " at file offset " + std::to_string(offset);
}

std::optional<KernelKind> kind_of(std::uint16_t kind) {
    switch (kind) {
    case kind_ptx:
        return KernelKind::ptx;
    case kind_elf:
        return KernelKind::sass;
    case kind_nvvm:
        return KernelKind::lto_ir;
    default:
        return std::nullopt;
    }
}

// The kernel an entry header describes; nullopt for a kind we do not judge.
std::optional<Kernel> kernel_of(const std::vector<unsigned char>& header, const char* section,
                                std::uint64_t offset) {
    auto kind = kind_of(load<std::uint16_t>(header, 0x00));
    if (!kind) {
        return std::nullopt;
    }
    auto arch = load<std::uint32_t>(header, 0x1c);
    if (arch < 10 || arch > 999) {
        throw Damaged("fatbin entry in " + at(section, offset) + " names arch " + std::to_string(arch));
    }
    auto flags = load<std::uint64_t>(header, 0x28);
    Kernel kernel{.kind = *kind, .sm = static_cast<int>(arch)};
    if (flags & flag_arch_specific) {
        kernel.variant = Variant::arch_specific;  // the stricter rule, should both bits be set
    } else if (flags & flag_family) {
        kernel.variant = Variant::family;
    }
    if (*kind == KernelKind::ptx) {
        kernel.ptx_minor = load<std::uint16_t>(header, 0x18);
        kernel.ptx_major = load<std::uint16_t>(header, 0x1a);
    }
    kernel.compressed = (flags & (flag_lz4 | flag_zstd)) != 0;
    return kernel;
}

// The entries of one container, filling [begin, end) exactly.
void read_entries(Source& source, std::uint64_t begin, std::uint64_t end, const char* section,
                  FatbinCount& count, std::vector<Kernel>& kernels) {
    for (auto entry = begin; entry < end;) {
        if (end - entry < entry_header_size) {
            throw Damaged("fatbin entry header in " + at(section, entry) + " runs past its container");
        }
        if (++count.entries > max_fatbin_entries) {
            throw Damaged(std::string(section) + ": more than " + std::to_string(max_fatbin_entries) +
                          " fatbin entries");
        }
        auto header = source.read(entry, entry_header_size, "a fatbin entry header");
        auto header_size = load<std::uint32_t>(header, 0x04);
        auto payload_size = load<std::uint64_t>(header, 0x08);
        if (header_size < entry_header_size || header_size > end - entry) {
            throw Damaged("fatbin entry in " + at(section, entry) + " has header size " +
                          std::to_string(header_size));
        }
        if (payload_size > end - entry - header_size) {
            throw Damaged("fatbin entry in " + at(section, entry) + ": its payload of " +
                          std::to_string(payload_size) + " bytes runs past its container");
        }
        if (auto kernel = kernel_of(header, section, entry)) {
            kernels.push_back(*kernel);
        }
        entry += header_size + payload_size;
    }
}

}  // namespace

void read_fatbin(Source& source, std::uint64_t offset, std::uint64_t size, const char* section,
                 FatbinCount& count, std::vector<Kernel>& kernels) {
    const auto end = offset + size;
    for (auto container = offset; end - container >= container_header_size;) {
        auto header = source.read(container, container_header_size, "a fatbin container header");
        auto magic = load<std::uint32_t>(header, 0x00);
        if (magic == 0) {
            return;  // padding to the section's end
        }
        if (magic != container_magic) {
            throw Damaged("no fatbin container in " + at(section, container));
        }
        if (++count.containers > max_fatbin_containers) {
            throw Damaged(std::string(section) + ": more than " + std::to_string(max_fatbin_containers) +
                          " fatbin containers");
        }
        auto version = load<std::uint16_t>(header, 0x04);
        auto header_size = load<std::uint16_t>(header, 0x06);
        auto entries_size = load<std::uint64_t>(header, 0x08);
        if (version != container_version) {
            throw Damaged("fatbin container in " + at(section, container) + " has version " +
                          std::to_string(version) + ", not 1");
        }
        if (header_size < container_header_size || header_size > end - container ||
            entries_size > end - container - header_size) {
            throw Damaged("fatbin container in " + at(section, container) + " runs past the section");
        }
        auto entries = container + header_size;
        read_entries(source, entries, entries + entries_size, section, count, kernels);
        auto next = entries + entries_size - offset;  // within the section, so no overflow below
        container = offset + ((next + 7) & ~std::uint64_t{7});
        if (container > end) {
            return;
        }
    }
}

}  // namespace stackup::binary

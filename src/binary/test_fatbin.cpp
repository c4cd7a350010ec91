#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "binary/fatbin.hpp"
#include "binary/test_images.hpp"

using namespace stackup::binary;
using namespace stackup::binary::testing;

namespace {

// The kernels of `section` as one fatbin section, or the Damaged message.
struct Read {
    std::vector<Kernel> kernels;
    std::string error;
    ReadCost cost;
};

Read read_section(const Bytes& section) {
    MemorySource source(section);
    Read out;
    FatbinCount count;
    try {
        read_fatbin(source, 0, section.size(), ".nv_fatbin", count, out.kernels);
    } catch (const Damaged& e) {
        out.error = e.what();
    }
    out.cost = source.cost();
    return out;
}

}  // namespace

TEST_SUITE("binary") {
    TEST_CASE("fatbin entry fields: kind, arch, PTX version, variant and compression flags") {
        auto section = fat_container({
            {.kind = 2, .arch = 90, .flags = 0x11},
            {.kind = 2, .arch = 90, .flags = 0x108011},             // sm_90a, zstd
            {.kind = 2, .arch = 100, .flags = 0x1208011, .header_size = 112},  // sm_100f
            {.kind = 2, .arch = 120, .flags = 0x1102011, .header_size = 96},   // sm_120a, LZ4
            {.kind = 1, .arch = 90, .flags = 0x8011, .major = 9, .minor = 0, .header_size = 80},
            {.kind = 1, .arch = 100, .flags = 0x208011, .major = 8, .minor = 7, .header_size = 80},
            {.kind = 8, .arch = 100, .flags = 0x118011, .major = 1, .minor = 65, .header_size = 120},
        });
        auto read = read_section(section);
        REQUIRE(read.error == "");
        std::vector<Kernel> expected = {
            {KernelKind::sass, 90, Variant::plain, 0, 0, false},
            {KernelKind::sass, 90, Variant::arch_specific, 0, 0, true},
            {KernelKind::sass, 100, Variant::family, 0, 0, true},
            {KernelKind::sass, 120, Variant::arch_specific, 0, 0, true},
            {KernelKind::ptx, 90, Variant::plain, 9, 0, true},
            {KernelKind::ptx, 100, Variant::family, 8, 7, true},
            {KernelKind::lto_ir, 100, Variant::arch_specific, 0, 0, true},
        };
        CHECK(read.kernels == expected);
        // One read per container header and per entry header; never a payload.
        CHECK(read.cost.reads == 1 + expected.size());
        CHECK(read.cost.bytes == 16 + 64 * expected.size());
    }

    TEST_CASE("fatbin: several containers, an empty one, 8-alignment between them, zero padding at the end") {
        auto odd = fat_container({{.arch = 75, .payload = 3}});  // 16 + 67 bytes: padded to 88
        auto aligned = odd;
        aligned.resize((odd.size() + 7) / 8 * 8, 0);
        auto section = joined({fat_container({}), aligned, fat_container({{.arch = 86}}), Bytes(24, 0)});
        auto read = read_section(section);
        REQUIRE(read.error == "");
        REQUIRE(read.kernels.size() == 2);
        CHECK(read.kernels[0].sm == 75);
        CHECK(read.kernels[1].sm == 86);
        // Fewer than 16 bytes left after the last container: nothing more to read.
        CHECK(read_section(joined({fat_container({{.arch = 80}}), Bytes(8, 0xff)})).error == "");
    }

    TEST_CASE("fatbin: unknown entry kinds are skipped, not judged") {
        auto read = read_section(fat_container({{.kind = 0x10, .arch = 0}, {.kind = 0x40}, {.kind = 2, .arch = 89}}));
        REQUIRE(read.error == "");
        REQUIRE(read.kernels.size() == 1);
        CHECK(read.kernels[0].sm == 89);
    }

    TEST_CASE("fatbin: every damage is Damaged, naming the section") {
        auto good = fat_container({{.arch = 90}, {.kind = 1, .arch = 90}});
        auto damaged = [&](auto change) {
            auto bytes = good;
            change(bytes);
            auto read = read_section(bytes);
            CHECK(read.error.find(".nv_fatbin") != std::string::npos);
            return read.error;
        };
        CHECK(damaged([](Bytes& b) { put_le<std::uint32_t>(b, 0, 0xBA55ED51); }).find("no fatbin container") !=
              std::string::npos);
        CHECK(damaged([](Bytes& b) { put_le<std::uint16_t>(b, 4, 2); }).find("version 2") != std::string::npos);
        CHECK(damaged([](Bytes& b) { put_le<std::uint16_t>(b, 6, 8); }).find("runs past") != std::string::npos);
        CHECK(damaged([](Bytes& b) { put_le<std::uint64_t>(b, 8, b.size()); }).find("runs past") != std::string::npos);
        CHECK(damaged([](Bytes& b) { put_le<std::uint64_t>(b, 8, ~std::uint64_t{0}); }) != "");
        // The first entry's payload size: past the container, and so large that adding overflows.
        CHECK(damaged([](Bytes& b) { put_le<std::uint64_t>(b, 16 + 8, 1000); }).find("payload") != std::string::npos);
        CHECK(damaged([](Bytes& b) { put_le<std::uint64_t>(b, 16 + 8, ~std::uint64_t{0} - 40); }) != "");
        CHECK(damaged([](Bytes& b) { put_le<std::uint32_t>(b, 16 + 4, 32); }).find("header size 32") != std::string::npos);
        CHECK(damaged([](Bytes& b) { put_le<std::uint32_t>(b, 16 + 4, 0xffffffff); }) != "");
        CHECK(damaged([](Bytes& b) { put_le<std::uint32_t>(b, 16 + 0x1c, 5000); }).find("arch 5000") != std::string::npos);
        // Entries that stop short of the container's end.
        CHECK(damaged([](Bytes& b) { put_le<std::uint64_t>(b, 8, 80 + 20); }).find("runs past") != std::string::npos);
    }

    TEST_CASE("fatbin: a container bomb and an entry bomb stop at the caps") {
        Bytes containers;
        for (std::size_t i = 0; i <= max_fatbin_containers; ++i) {
            auto c = fat_container({});
            containers.insert(containers.end(), c.begin(), c.end());
        }
        auto read = read_section(containers);
        CHECK(read.error.find("more than 65536 fatbin containers") != std::string::npos);
        CHECK(read.cost.reads == max_fatbin_containers + 1);

        std::vector<FatEntry> entries(max_fatbin_entries + 1, FatEntry{.payload = 0});
        read = read_section(fat_container(entries));
        CHECK(read.error.find("more than 65536 fatbin entries") != std::string::npos);
        CHECK(read.kernels.size() == max_fatbin_entries);
    }
}

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/process.hpp"
#include "binary/elf.hpp"
#include "binary/fatbin.hpp"
#include "binary/test_images.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace stackup;
using namespace stackup::binary;
using namespace stackup::binary::testing;

namespace {

ElfInfo read(const Bytes& bytes) {
    return read_elf_bytes(bytes);
}

// Runs a compiler; the test fails with its output when it does.
void run(const std::vector<std::string>& argv, const fs::path& cwd) {
    base::ProcessSpec spec{argv, base::current_environment(), cwd};
    auto result = base::run_process(spec);
    INFO(argv[0], ": ", result.describe(), "\n", result.output);
    REQUIRE(result.ok());
}

// A shared object linking libcudart.so.12 with one fatbin section of three kernels.
ElfSpec typical() {
    return {
        .dynamic = {{DT_SONAME, "libkern.so.1"},
                    {DT_NEEDED, "libcudart.so.12"},
                    {DT_NEEDED, "libc.so.6"},
                    {DT_RUNPATH, "$ORIGIN:$ORIGIN/../nvidia/cuda_runtime/lib::"},
                    {DT_RPATH, "/opt/lib"}},
        .sections = {{".text", Bytes(32, 0x90)},
                     {".nv_fatbin", joined({fat_container({{.arch = 80}, {.arch = 90, .flags = 0x108011}}),
                                            fat_container({{.kind = 1, .arch = 80, .major = 8, .minor = 5},
                                                           {.arch = 80}})})}},
    };
}

const std::vector<Kernel> typical_kernels = {
    {KernelKind::sass, 80, Variant::plain, 0, 0, false},
    {KernelKind::sass, 90, Variant::arch_specific, 0, 0, true},
    {KernelKind::ptx, 80, Variant::plain, 8, 5, false},
};

void check_typical(const ElfInfo& info) {
    CHECK(info.elf);
    CHECK(info.unreadable == "");
    CHECK(info.soname == "libkern.so.1");
    CHECK(info.needed == std::vector<std::string>{"libcudart.so.12", "libc.so.6"});
    CHECK(info.runpath == std::vector<std::string>{"$ORIGIN", "$ORIGIN/../nvidia/cuda_runtime/lib"});
    CHECK(info.rpath == std::vector<std::string>{"/opt/lib"});
    CHECK(info.kernels == typical_kernels);
}

// The image of `spec` with `change` applied; what reading it said, which must be unreadable.
template <typename Change>
std::string damage(ElfSpec spec, Change change) {
    auto image = make_elf<Elf64Types>(spec);
    change(image);
    auto info = read(image.bytes);
    CHECK(info.elf);
    CHECK(info.unreadable != "");
    return info.unreadable;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_SUITE("binary") {
    TEST_CASE("a hand-made shared object: SONAME, DT_NEEDED, DT_RPATH, DT_RUNPATH and its kernels") {
        check_typical(read(make_elf<Elf64Types>(typical()).bytes));
    }

    TEST_CASE("both ELF classes and both byte orders read alike") {
        auto spec = typical();
        check_typical(read(make_elf<Elf32Types>(spec).bytes));
        spec.big_endian = true;
        check_typical(read(make_elf<Elf64Types>(spec).bytes));
        check_typical(read(make_elf<Elf32Types>(spec).bytes));
    }

    TEST_CASE("kernels of .nv_fatbin, deduplicated and sorted; __nv_relfatbin's never run, so are not read") {
        auto spec = typical();
        auto expected = read(make_elf<Elf64Types>(spec).bytes).kernels;
        spec.sections.push_back({"__nv_relfatbin", fat_container({{.arch = 120, .flags = 0x208011},
                                                                   {.arch = 80},
                                                                   {.kind = 8, .arch = 90}})});
        auto info = read(make_elf<Elf64Types>(spec).bytes);
        REQUIRE(info.unreadable == "");
        CHECK(info.kernels == expected);
        // The same containers in .nv_fatbin: read, with the kernels it had, deduplicated and sorted.
        spec.sections.back().first = ".nv_fatbin";
        info = read(make_elf<Elf64Types>(spec).bytes);
        REQUIRE(info.unreadable == "");
        for (const Kernel& k : std::vector<Kernel>{{KernelKind::sass, 80, Variant::plain, 0, 0, false},
                                                    {KernelKind::sass, 120, Variant::family, 0, 0, true},
                                                    {KernelKind::lto_ir, 90, Variant::plain, 0, 0, false}}) {
            CHECK(std::find(info.kernels.begin(), info.kernels.end(), k) != info.kernels.end());
        }
        CHECK(std::is_sorted(info.kernels.begin(), info.kernels.end()));
        CHECK(std::adjacent_find(info.kernels.begin(), info.kernels.end()) == info.kernels.end());
        // A section merely named alike is not read.
        spec.sections = {{".nv_fatbin2", fat_container({{.arch = 75}})}};
        CHECK(read(make_elf<Elf64Types>(spec).bytes).kernels.empty());
    }

    TEST_CASE("not ELF: a text file, an empty file, three bytes of the magic") {
        std::string text = "import torch\nprint(torch.__version__)\n";
        for (const auto& input : {Bytes(text.begin(), text.end()), Bytes{}, Bytes{0x7f, 'E', 'L'}}) {
            auto info = read(input);
            CHECK_FALSE(info.elf);
            CHECK(info.unreadable == "");
        }
    }

    TEST_CASE("a truncated ELF file is unreadable at every length, never a crash") {
        auto made = make_elf<Elf64Types>(typical());
        const auto& image = made.bytes;
        for (std::size_t length = 4; length < image.size(); ++length) {
            CAPTURE(length);
            auto info = read(Bytes(image.begin(), image.begin() + static_cast<std::ptrdiff_t>(length)));
            CHECK(info.elf);
            // The section headers come last: any cut loses them, but what lies before stays read.
            CHECK(info.unreadable != "");
            CHECK(info.kernels.empty());
            if (length >= made.dynamic + 8 * sizeof(Elf64_Dyn)) {
                CHECK(info.needed.size() == 2);
            }
        }
        CHECK(has(read(Bytes(image.begin(), image.begin() + 20)).unreadable, "truncated ELF header"));
        CHECK(has(read(Bytes(image.begin(), image.begin() + 4)).unreadable, "truncated ELF header"));
    }

    TEST_CASE("damaged headers: each is unreadable with its reason") {
        using Image = ElfImage;
        auto put64 = [](Image& i, std::size_t at, std::uint64_t v) { put_le<std::uint64_t>(i.bytes, at, v); };
        auto put16 = [](Image& i, std::size_t at, std::uint16_t v) { put_le<std::uint16_t>(i.bytes, at, v); };
        CHECK(has(damage(typical(), [](Image& i) { i.bytes[EI_CLASS] = 7; }), "ELF class 7"));
        CHECK(has(damage(typical(), [](Image& i) { i.bytes[EI_DATA] = 0; }), "byte order"));
        // Section headers past the end of the file, and more of them than fit.
        CHECK(has(damage(typical(), [&](Image& i) { put64(i, offsetof(Elf64_Ehdr, e_shoff), i.bytes.size() + 64); }),
                  "past the end"));
        CHECK(has(damage(typical(), [&](Image& i) { put16(i, offsetof(Elf64_Ehdr, e_shnum), 0xfff0); }),
                  "past the end"));
        CHECK(has(damage(typical(), [&](Image& i) { put64(i, offsetof(Elf64_Ehdr, e_shoff), ~std::uint64_t{0} - 8); }),
                  "past the end"));
        CHECK(has(damage(typical(), [&](Image& i) { put16(i, offsetof(Elf64_Ehdr, e_shentsize), 12); }),
                  "section header size 12"));
        CHECK(has(damage(typical(), [&](Image& i) { put16(i, offsetof(Elf64_Ehdr, e_shstrndx), 99); }),
                  "e_shstrndx 99"));
        CHECK(has(damage(typical(), [&](Image& i) { put64(i, offsetof(Elf64_Ehdr, e_phoff), i.bytes.size()); }),
                  "program headers"));
        // PT_DYNAMIC past the end.
        auto dynamic_phdr = [](const Image& i) { return i.phoff + sizeof(Elf64_Phdr); };
        CHECK(has(damage(typical(), [&](Image& i) {
                  put64(i, dynamic_phdr(i) + offsetof(Elf64_Phdr, p_offset), i.bytes.size() - 8);
              }), "dynamic section"));
    }

    TEST_CASE("a dynamic section whose string table lies outside the file or outside every segment") {
        auto strtab_entry = [](const ElfImage& i) {
            // DT_STRTAB is the first entry after the spec's five.
            return i.dynamic + 5 * sizeof(Elf64_Dyn) + offsetof(Elf64_Dyn, d_un);
        };
        CHECK(has(damage(typical(), [&](ElfImage& i) {
                  put_le<std::uint64_t>(i.bytes, strtab_entry(i), 0x7fff0000);
              }), "DT_STRTAB 0x7fff0000 lies in no loaded segment"));
        CHECK(has(damage(typical(), [&](ElfImage& i) {
                  put_le<std::uint64_t>(i.bytes, strtab_entry(i) + sizeof(Elf64_Dyn), 1u << 30);  // DT_STRSZ
              }), "lies past the end of the file"));
        // A DT_NEEDED offset past DT_STRSZ, and a string without its terminating NUL.
        CHECK(has(damage(typical(), [&](ElfImage& i) {
                  put_le<std::uint64_t>(i.bytes, i.dynamic + sizeof(Elf64_Dyn) + offsetof(Elf64_Dyn, d_un), 5000);
              }), "past its end"));
        auto spec = typical();
        spec.dynamic = {{DT_NEEDED, "libcudart.so.12"}};
        CHECK(has(damage(spec, [&](ElfImage& i) {
                  put_le<std::uint64_t>(i.bytes, i.dynamic + 2 * sizeof(Elf64_Dyn) + offsetof(Elf64_Dyn, d_un), 10);
              }), "not terminated"));
    }

    TEST_CASE("a damaged .nv_fatbin makes the file unreadable; what came before stays") {
        auto overflow = [](ElfImage& i) {
            // The first entry's payload size: so large that the entry's end overflows.
            put_le<std::uint64_t>(i.bytes, i.section_offsets[1] + 16 + 8, ~std::uint64_t{0} - 32);
        };
        auto image = make_elf<Elf64Types>(typical());
        overflow(image);
        auto info = read(image.bytes);
        CHECK(has(info.unreadable, ".nv_fatbin"));
        CHECK(info.needed.size() == 2);
        CHECK(info.kernels.empty());
        // The section itself past the end of the file.
        CHECK(has(damage(typical(), [](ElfImage& i) {
                  auto shdr = i.shoff + 2 * sizeof(Elf64_Shdr);
                  put_le<std::uint64_t>(i.bytes, shdr + offsetof(Elf64_Shdr, sh_size), i.bytes.size());
              }), ".nv_fatbin lies past the end"));
        // A container bomb: empty containers past the cap.
        auto spec = typical();
        Bytes bomb;
        for (std::size_t n = 0; n <= max_fatbin_containers; ++n) {
            auto c = fat_container({});
            bomb.insert(bomb.end(), c.begin(), c.end());
        }
        spec.sections = {{".nv_fatbin", bomb}};
        CHECK(has(damage(spec, [](ElfImage&) {}), "more than 65536 fatbin containers"));
    }

    TEST_CASE("read_elf on a file: the same answer; a text file costs one read of its first bytes") {
        stackup::testing::TempDir dir;
        auto image = make_elf<Elf64Types>(typical()).bytes;
        auto so = dir.write("libkern.so.1", std::string(image.begin(), image.end()));
        check_typical(read_elf(so));

        ReadCost cost;
        auto info = read_elf(dir.write("torch/__init__.py", std::string(4000, '#')), cost);
        CHECK_FALSE(info.elf);
        CHECK(cost.reads == 1);
        CHECK(cost.bytes == 64);

        info = read_elf(dir / "missing.so");
        CHECK(info.elf);
        CHECK(info.unreadable == "cannot open: No such file or directory");
        // A directory (or a FIFO) is nothing to judge, and is not read.
        CHECK_FALSE(read_elf(dir.path()).elf);
    }

    TEST_CASE("read_elf on a 400 MiB shared object reads its headers only") {
        stackup::testing::TempDir dir;
        // The image with a stand-in .nv_fatbin, then, in a sparse file: the real container of three
        // entries of 128 MiB payloads (holes) over it, and the section headers moved past them.
        const std::uint64_t payload = 128u << 20;
        auto spec = typical();
        spec.sections = {{".nv_fatbin", Bytes(16 + 64, 0)}};
        auto image = make_elf<Elf64Types>(spec);
        const auto fatbin = image.section_offsets[0];
        const std::uint64_t section_size = 16 + 3 * (64 + payload);
        const std::uint64_t shoff = fatbin + section_size;
        auto section_headers = Bytes(image.bytes.begin() + static_cast<std::ptrdiff_t>(image.shoff), image.bytes.end());
        put_le<std::uint64_t>(section_headers, sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_size), section_size);
        put_le<std::uint64_t>(image.bytes, offsetof(Elf64_Ehdr, e_shoff), shoff);
        put_le<std::uint32_t>(image.bytes, fatbin, 0xBA55ED50);
        put_le<std::uint16_t>(image.bytes, fatbin + 4, 1);
        put_le<std::uint16_t>(image.bytes, fatbin + 6, 16);
        put_le<std::uint64_t>(image.bytes, fatbin + 8, section_size - 16);

        auto path = dir / "libhuge.so";
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        REQUIRE(fd >= 0);
        auto write_at = [&](const Bytes& bytes, std::uint64_t at) {
            auto n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at));
            REQUIRE(n == static_cast<ssize_t>(bytes.size()));
        };
        write_at(image.bytes, 0);
        for (std::uint64_t n = 0; n < 3; ++n) {
            auto entry = fat_entry({.arch = static_cast<std::uint32_t>(80 + 5 * n), .payload = 0});
            put_le<std::uint64_t>(entry, 8, payload);
            write_at(entry, fatbin + 16 + n * (64 + payload));
        }
        write_at(section_headers, shoff);
        ::close(fd);
        REQUIRE(fs::file_size(path) > (384u << 20));

        ReadCost cost;
        auto info = read_elf(path, cost);
        REQUIRE(info.unreadable == "");
        REQUIRE(info.kernels.size() == 3);
        CHECK(info.kernels[1].sm == 85);
        CHECK(info.needed.size() == 2);
        // ELF header, program headers, .dynamic, its strings, section headers, .shstrtab,
        // one container header and three entry headers.
        CHECK(cost.reads == 10);
        CHECK(cost.bytes < 8 * 1024);
    }

    TEST_CASE("gcc-built shared objects: a libcudart.so.12 stub and a library linking it by DT_RPATH or DT_RUNPATH") {
        stackup::testing::TempDir dir;
        fs::create_directories(dir / "lib");
        fs::create_directories(dir / "bin");
        dir.write("stub.c", "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }\n");
        dir.write("user.c", "int cudaGetDeviceCount(int*);\nint count(void) { int n; cudaGetDeviceCount(&n); return n; }\n");
        run({"cc", "-shared", "-fPIC", "-Wl,-soname,libcudart.so.12", "-o", "lib/libcudart.so.12", "stub.c"},
            dir.path());
        run({"cc", "-shared", "-fPIC", "-Wl,-soname,libuser.so", "-Wl,-rpath,$ORIGIN/../lib", "-Wl,--enable-new-dtags",
             "-o", "bin/librunpath.so", "user.c", "lib/libcudart.so.12"},
            dir.path());
        run({"cc", "-shared", "-fPIC", "-Wl,-rpath,$ORIGIN/../lib:/opt/cuda/lib64", "-Wl,--disable-new-dtags",
             "-o", "bin/librpath.so", "user.c", "lib/libcudart.so.12"},
            dir.path());

        ReadCost cost;
        auto stub = read_elf(dir / "lib/libcudart.so.12", cost);
        CHECK(stub.elf);
        CHECK(stub.unreadable == "");
        CHECK(stub.soname == "libcudart.so.12");
        CHECK(stub.kernels.empty());
        CHECK(cost.reads < 12);

        auto runpath = read_elf(dir / "bin/librunpath.so");
        CHECK(runpath.unreadable == "");
        CHECK(runpath.soname == "libuser.so");
        REQUIRE(!runpath.needed.empty());
        CHECK(runpath.needed[0] == "libcudart.so.12");
        CHECK(runpath.runpath == std::vector<std::string>{"$ORIGIN/../lib"});
        CHECK(runpath.rpath.empty());

        auto rpath = read_elf(dir / "bin/librpath.so");
        CHECK(rpath.unreadable == "");
        CHECK(rpath.soname == "");
        CHECK(rpath.rpath == std::vector<std::string>{"$ORIGIN/../lib", "/opt/cuda/lib64"});
        CHECK(rpath.runpath.empty());
    }

    TEST_CASE("nvcc-built fatbinaries: what cuobjdump lists, compressed or not" * doctest::test_suite("conditional")) {
        auto env = base::current_environment();
        std::string nvcc = fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : base::find_program("nvcc", env);
        if (nvcc.empty()) {
            stackup::testing::skip("nvcc not found: the fatbin fixtures are not built here");
            return;
        }
        stackup::testing::TempDir dir;
        dir.write("k.cu", "__global__ void k(float* x) { x[0] = 1; }\n");
        std::vector<std::string> gencodes = {
            "-gencode", "arch=compute_90,code=sm_90",     "-gencode", "arch=compute_90a,code=sm_90a",
            "-gencode", "arch=compute_100f,code=sm_100f", "-gencode", "arch=compute_120a,code=sm_120a",
            "-gencode", "arch=compute_90,code=compute_90"};
        auto build = [&](const std::string& out, std::vector<std::string> extra) {
            std::vector<std::string> argv = {nvcc, "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", "-o", out};
            argv.insert(argv.end(), gencodes.begin(), gencodes.end());
            argv.insert(argv.end(), extra.begin(), extra.end());
            argv.push_back("k.cu");
            run(argv, dir.path());
            return read_elf(dir / out);
        };
        // cuobjdump --list-elf --list-ptx: sm_90, sm_90a, sm_100f, sm_120a cubins (each twice), one
        // compute_90 PTX of PTX ISA 9.0 (CUDA 13.0), compressed even without -compress-all.
        auto expected = [](bool sass_compressed) {
            return std::vector<Kernel>{
                {KernelKind::sass, 90, Variant::plain, 0, 0, sass_compressed},
                {KernelKind::sass, 90, Variant::arch_specific, 0, 0, sass_compressed},
                {KernelKind::sass, 100, Variant::family, 0, 0, sass_compressed},
                {KernelKind::sass, 120, Variant::arch_specific, 0, 0, sass_compressed},
                {KernelKind::ptx, 90, Variant::plain, 9, 0, true},
            };
        };
        auto plain = build("libplain.so", {});
        REQUIRE(plain.unreadable == "");
        CHECK(plain.needed[0].starts_with("libcudart.so."));
        auto zstd = build("libzstd.so", {"-Xfatbin", "-compress-all"});
        auto lz4 = build("liblz4.so", {"-Xfatbin", "-compress-all", "-Xfatbin", "-compress-mode=speed"});
        // PTX ISA 9.0 is CUDA 13.0's; a later nvcc writes a later one.
        if (plain.kernels.size() == 5 && plain.kernels[4].ptx_major == 9 && plain.kernels[4].ptx_minor == 0) {
            CHECK(plain.kernels == expected(false));
            CHECK(zstd.kernels == expected(true));
            CHECK(lz4.kernels == expected(true));
        } else {
            MESSAGE("nvcc is not CUDA 13.0: checking the targets only");
            REQUIRE(plain.kernels.size() == 5);
            for (std::size_t i = 0; i < 4; ++i) {
                CHECK(spelled(plain.kernels[i]) == spelled(expected(false)[i]));
                CHECK(zstd.kernels.at(i).compressed);
            }
        }

        run({nvcc, "-dc", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_90,code=lto_90", "-gencode",
             "arch=compute_100a,code=lto_100a", "-o", "lto.o", "k.cu"},
            dir.path());
        auto lto = read_elf(dir / "lto.o");
        REQUIRE(lto.unreadable == "");
        REQUIRE(lto.kernels.size() == 2);
        CHECK(spelled(lto.kernels[0]) == "lto_90");
        CHECK(spelled(lto.kernels[1]) == "lto_100a");
    }

    TEST_CASE("spelled: sm_, compute_, lto_ with a or f") {
        CHECK(spelled(Kernel{KernelKind::sass, 90}) == "sm_90");
        CHECK(spelled(Kernel{KernelKind::sass, 90, Variant::arch_specific}) == "sm_90a");
        CHECK(spelled(Kernel{KernelKind::sass, 100, Variant::family}) == "sm_100f");
        CHECK(spelled(Kernel{KernelKind::ptx, 90}) == "compute_90");
        CHECK(spelled(Kernel{KernelKind::ptx, 120, Variant::arch_specific}) == "compute_120a");
        CHECK(spelled(Kernel{KernelKind::lto_ir, 90}) == "lto_90");
        CHECK(spelled(Kernel{KernelKind::lto_ir, 103, Variant::family}) == "lto_103f");
    }
}

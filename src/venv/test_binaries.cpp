#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/fs.hpp"
#include "skip.hpp"
#include "temp_dir.hpp"
#include "venv/binaries.hpp"
#include "venv/driver.hpp"

using namespace stackup;
namespace fs = std::filesystem;

namespace {

std::string bytes_of(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A shared object with SONAME `soname` needing `needed` (each a stub built beside it), by cc;
// "" when there is no cc.
std::string shared_object(const testing::TempDir& dir, const std::string& soname, const std::string& needed = "") {
    auto work = dir / "cc";
    fs::create_directories(work);
    std::string link;
    if (!needed.empty()) {
        std::string stub = "cc -shared -fPIC -x c /dev/null -Wl,-soname," + needed + " -o '" + (work / needed).string() + "'";
        if (std::system(stub.c_str()) != 0) {
            return "";
        }
        link = " -Wl,--no-as-needed '" + (work / needed).string() + "'";
    }
    auto out = work / (soname + ".out");
    std::string cmd = "cc -shared -fPIC -x c /dev/null -x none -Wl,-soname," + soname + link + " -o '" + out.string() + "' 2>/dev/null";
    return std::system(cmd.c_str()) == 0 ? bytes_of(out) : "";
}

}  // namespace

TEST_SUITE("venv") {
    TEST_CASE("RECORD's first column, CSV-unquoted") {
        CHECK(venv::record_path("torch/lib/libtorch.so,sha256=abc,123") == "torch/lib/libtorch.so");
        CHECK(venv::record_path("\"a,b/c.so\",sha256=abc,1") == "a,b/c.so");
        CHECK(venv::record_path("\"say \"\"hi\"\".so\",,") == "say \"hi\".so");
        CHECK(venv::record_path("x.dist-info/RECORD,,") == "x.dist-info/RECORD");
        CHECK(venv::record_path("").empty());
    }

    TEST_CASE("nvidia-smi's compute capabilities: one per line, each once") {
        CHECK(venv::parse_compute_caps("9.0\n9.0\n12.0\n") == std::vector<std::string>{"9.0", "12.0"});
        CHECK(venv::parse_compute_caps(" 10.3 \n[N/A]\n\n") == std::vector<std::string>{"10.3"});
        CHECK(venv::parse_compute_caps("No devices were found\n").empty());
    }

    TEST_CASE("scan_binaries: each dist's ELF files, their providers, the CUDA libraries nothing provides" *
              doctest::test_suite("conditional")) {
        testing::TempDir dir;
        auto kernel = shared_object(dir, "ops.abi3.so", "libcudart.so.12");
        auto runtime = shared_object(dir, "libcudart.so.12");
        if (kernel.empty() || runtime.empty()) {
            stackup::testing::skip("no cc to build the shared objects (test_binary_truth.py covers the ELF part)");
            return;
        }
        auto site = dir / "site-packages";
        dir.write("site-packages/kern/ops.abi3.so", kernel);
        dir.write("site-packages/kern/__init__.py", "");
        dir.write("site-packages/kern/fake.so", "not an ELF file\n");
        dir.write("site-packages/kern/bad.so", std::string("\x7f" "ELF\x02\x01\x01", 7));
        dir.write("site-packages/kern-1.0.dist-info/RECORD",
                  "kern/__init__.py,,\nkern/ops.abi3.so,,\nkern/fake.so,,\nkern/bad.so,,\nkern/gone.so,,\n"
                  "kern-1.0.dist-info/RECORD,,\n");
        dir.write("site-packages/nvidia/cuda_runtime/lib/libcudart.so.12", runtime);
        dir.write("site-packages/nvidia_cuda_runtime_cu12-12.8.90.dist-info/RECORD",
                  "nvidia/cuda_runtime/lib/libcudart.so.12,,\n");
        dir.write("site-packages/stray-1.0.dist-info/RECORD", "kern/ops.abi3.so,,\n");

        venv::BinaryCache cache;
        std::vector<venv::InstalledDist> both = {{"kern", "1.0"}, {"nvidia-cuda-runtime-cu12", "12.8.90"}};
        auto facts = venv::scan_binaries(site, both, {}, false, cache);
        REQUIRE(facts.scanned);
        REQUIRE(facts.dists.size() == 2);
        CHECK(facts.dists[0].dist == "kern");
        REQUIRE(facts.dists[0].files.size() == 2);  // ops.abi3.so and the damaged one; the text file is no ELF
        CHECK(facts.dists[0].files[0].elf.needed == std::vector<std::string>{"libcudart.so.12", "libc.so.6"});
        CHECK(facts.dists[0].files[1].path == "kern/bad.so");
        CHECK_FALSE(facts.dists[0].files[1].elf.unreadable.empty());
        CHECK(facts.providers.at("libcudart.so.12") == "nvidia-cuda-runtime-cu12");
        CHECK(facts.missing.empty());
        CHECK(facts.files_read == 4);

        // Again: every header from the cache.
        CHECK(venv::scan_binaries(site, both, {}, false, cache).files_read == 0);

        // The runtime wheel uninstalled: the kernel's library is missing, unless LD_LIBRARY_PATH has it.
        fs::remove_all(site / "nvidia_cuda_runtime_cu12-12.8.90.dist-info");
        auto lone_dir = dir / "elsewhere";
        fs::create_directories(lone_dir);
        fs::rename(site / "nvidia/cuda_runtime/lib/libcudart.so.12", lone_dir / "libcudart.so.12");
        std::vector<venv::InstalledDist> kern_only = {{"kern", "1.0"}};
        auto without = venv::scan_binaries(site, kern_only, {}, false, cache);
        REQUIRE(without.missing.size() == 1);
        CHECK(without.missing[0].dist == "kern");
        CHECK(without.missing[0].file == "kern/ops.abi3.so");
        CHECK(without.missing[0].library == "libcudart.so.12");
        auto with_env = venv::scan_binaries(site, kern_only, {{"LD_LIBRARY_PATH", lone_dir.string()}}, false, cache);
        CHECK(with_env.missing.empty());

        auto nowhere = venv::scan_binaries(dir / "absent", kern_only, {}, false, cache);
        CHECK_FALSE(nowhere.scanned);
        CHECK(nowhere.why_not.find("absent") != std::string::npos);
    }
}

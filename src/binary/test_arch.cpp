#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "binary/arch.hpp"

using namespace stackup::binary;

namespace {

// The compute capabilities of the GPUs CUDA 12 and 13 serve: T4, A100, A10, L4, H100, B200,
// B300, RTX 5090 / RTX PRO 6000, GB10.
const std::vector<Gpu> real_gpus = {{7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {10, 3}, {12, 0}, {12, 1}};

Kernel kernel(KernelKind kind, int sm, Variant variant = Variant::plain) {
    return {kind, sm, variant};
}

// The real GPUs a kernel runs on, spelled "9.0 10.0".
std::string gpus_running(const Kernel& k) {
    std::string out;
    for (auto gpu : real_gpus) {
        if (runs_on(k, gpu)) {
            out += (out.empty() ? "" : " ") + spelled(gpu);
        }
    }
    return out;
}

}  // namespace

TEST_SUITE("binary") {
    TEST_CASE("parse_gpu: X.Y as nvidia-smi prints it, and nothing else") {
        CHECK(parse_gpu("12.0") == Gpu{12, 0});
        CHECK(parse_gpu("9.0") == Gpu{9, 0});
        CHECK(parse_gpu("10.3") == Gpu{10, 3});
        CHECK(parse_gpu("7.5") == Gpu{7, 5});
        CHECK(parse_gpu("1.0") == Gpu{1, 0});
        CHECK(parse_gpu("99.9") == Gpu{99, 9});
        for (const char* bad : {"", "12", "120", "sm_120", "12.", ".0", "12.10", "100.0", "0.5", "09.0", "-9.0",
                                "+9.0", " 9.0", "9.0 ", "9.0\n", "9,0", "a.b", "9.x", "1e1.0", "9..0"}) {
            CAPTURE(bad);
            CHECK_FALSE(parse_gpu(bad).has_value());
        }
    }

    TEST_CASE("spelled and sm_of a GPU; GPUs order by major then minor") {
        CHECK(spelled(Gpu{12, 0}) == "12.0");
        CHECK(spelled(Gpu{10, 3}) == "10.3");
        CHECK(sm_of(Gpu{12, 0}) == "sm_120");
        CHECK(sm_of(Gpu{9, 0}) == "sm_90");
        CHECK(sm_of(Gpu{10, 3}) == "sm_103");
        CHECK(Gpu{9, 0} < Gpu{10, 0});
        CHECK(Gpu{10, 0} < Gpu{10, 3});
    }

    TEST_CASE("SASS: sm_XY on X.Z for Z >= Y only; sm_90 does not run on 10.0") {
        CHECK(gpus_running(kernel(KernelKind::sass, 75)) == "7.5");
        CHECK(gpus_running(kernel(KernelKind::sass, 80)) == "8.0 8.6 8.9");
        CHECK(gpus_running(kernel(KernelKind::sass, 86)) == "8.6 8.9");
        CHECK(gpus_running(kernel(KernelKind::sass, 89)) == "8.9");
        CHECK(gpus_running(kernel(KernelKind::sass, 90)) == "9.0");
        CHECK(gpus_running(kernel(KernelKind::sass, 100)) == "10.0 10.3");
        CHECK(gpus_running(kernel(KernelKind::sass, 103)) == "10.3");
        CHECK(gpus_running(kernel(KernelKind::sass, 120)) == "12.0 12.1");
        CHECK(gpus_running(kernel(KernelKind::sass, 121)) == "12.1");
    }

    TEST_CASE("arch-specific sm_XYa on exactly X.Y; family sm_XYf on X.Z for Z >= Y") {
        CHECK(gpus_running(kernel(KernelKind::sass, 90, Variant::arch_specific)) == "9.0");
        CHECK(gpus_running(kernel(KernelKind::sass, 100, Variant::arch_specific)) == "10.0");
        CHECK(gpus_running(kernel(KernelKind::sass, 103, Variant::arch_specific)) == "10.3");
        CHECK(gpus_running(kernel(KernelKind::sass, 120, Variant::arch_specific)) == "12.0");
        CHECK(gpus_running(kernel(KernelKind::sass, 100, Variant::family)) == "10.0 10.3");
        CHECK(gpus_running(kernel(KernelKind::sass, 103, Variant::family)) == "10.3");
        CHECK(gpus_running(kernel(KernelKind::sass, 120, Variant::family)) == "12.0 12.1");
        CHECK(gpus_running(kernel(KernelKind::sass, 121, Variant::family)) == "12.1");
    }

    TEST_CASE("PTX: compute_XY on every GPU >= X.Y; compute_XYa on X.Y only; compute_XYf within the family") {
        CHECK(gpus_running(kernel(KernelKind::ptx, 75)) == "7.5 8.0 8.6 8.9 9.0 10.0 10.3 12.0 12.1");
        CHECK(gpus_running(kernel(KernelKind::ptx, 80)) == "8.0 8.6 8.9 9.0 10.0 10.3 12.0 12.1");
        CHECK(gpus_running(kernel(KernelKind::ptx, 90)) == "9.0 10.0 10.3 12.0 12.1");
        CHECK(gpus_running(kernel(KernelKind::ptx, 100)) == "10.0 10.3 12.0 12.1");
        CHECK(gpus_running(kernel(KernelKind::ptx, 103)) == "10.3 12.0 12.1");
        CHECK(gpus_running(kernel(KernelKind::ptx, 120)) == "12.0 12.1");
        CHECK(gpus_running(kernel(KernelKind::ptx, 121)) == "12.1");
        CHECK(gpus_running(kernel(KernelKind::ptx, 90, Variant::arch_specific)) == "9.0");
        CHECK(gpus_running(kernel(KernelKind::ptx, 100, Variant::family)) == "10.0 10.3");
        CHECK(gpus_running(kernel(KernelKind::ptx, 120, Variant::arch_specific)) == "12.0");
    }

    TEST_CASE("LTO IR runs nowhere: it must be linked first") {
        CHECK(gpus_running(kernel(KernelKind::lto_ir, 75)) == "");
        CHECK(gpus_running(kernel(KernelKind::lto_ir, 90)) == "");
        CHECK(gpus_running(kernel(KernelKind::lto_ir, 100, Variant::arch_specific)) == "");
    }

    TEST_CASE("summarize: SASS, PTX and LTO IR targets, each once, in order") {
        CHECK(summarize({}) == "no kernels");
        std::vector<Kernel> sass_only;
        for (int sm : {120, 75, 80, 86, 89}) {
            sass_only.push_back(kernel(KernelKind::sass, sm, sm == 120 ? Variant::arch_specific : Variant::plain));
        }
        sass_only.push_back(kernel(KernelKind::sass, 90, Variant::arch_specific));
        sass_only.push_back(kernel(KernelKind::sass, 80));  // again, compressed this time
        sass_only.back().compressed = true;
        CHECK(summarize(sass_only) == "SASS for 75, 80, 86, 89, 90a, 120a, no PTX");
        CHECK(summarize({kernel(KernelKind::sass, 80), kernel(KernelKind::ptx, 90), kernel(KernelKind::sass, 90)}) ==
              "SASS for 80, 90; PTX for 90");
        CHECK(summarize({kernel(KernelKind::ptx, 90)}) == "PTX for 90");
        CHECK(summarize({kernel(KernelKind::sass, 90), kernel(KernelKind::sass, 90, Variant::family),
                         kernel(KernelKind::lto_ir, 100, Variant::arch_specific)}) ==
              "SASS for 90, 90f, no PTX; LTO IR for 100a");
    }
}

#include <doctest/doctest.h>

#include "verify/binaries.hpp"
#include "verify/verify.hpp"

using namespace stackup;
using binary::Kernel;
using binary::KernelKind;
using binary::Variant;

namespace {

Kernel sass(int sm, Variant v = Variant::plain) { return {KernelKind::sass, sm, v}; }
Kernel ptx(int sm) { return {KernelKind::ptx, sm, Variant::plain, 8, 8}; }

venv::BinaryFile file(std::string path, std::vector<std::string> needed, std::vector<Kernel> kernels = {},
                      std::string soname = "") {
    venv::BinaryFile f;
    f.path = std::move(path);
    f.elf.elf = true;
    f.elf.needed = std::move(needed);
    f.elf.kernels = std::move(kernels);
    f.elf.soname = std::move(soname);
    return f;
}

manifest::Manifest manifest_with(std::vector<std::string> arch = {}) {
    manifest::Manifest m;
    m.cuda = manifest::Cuda{"13.0", "/usr/local/cuda-13.0", std::nullopt, false, std::move(arch)};
    manifest::Step step;
    step.name = "cuda13";
    step.remove = {"nvidia-*-cu12"};
    m.steps.push_back(step);
    return m;
}

std::vector<verify::Judgement> of_field(const std::vector<verify::Judgement>& all, const std::string& field) {
    std::vector<verify::Judgement> out;
    for (const auto& j : all) {
        if (j.field == field) {
            out.push_back(j);
        }
    }
    return out;
}

}  // namespace

TEST_SUITE("verify") {
    TEST_CASE("a dist's CUDA from the sonames its binaries need; its own libraries and shared sonames say nothing") {
        venv::DistBinaries sgl{"sgl-kernel", "0.3.21",
                               {file("sgl_kernel/common_ops.abi3.so", {"libc10.so", "libcudart.so.12", "libcurand.so.10"}),
                                file("sgl_kernel/flash_ops.abi3.so", {"libcublas.so.12"})}};
        auto majors = verify::binary_cuda_majors(sgl);
        REQUIRE(majors.size() == 1);
        CHECK(majors.at(12) == "sgl_kernel/common_ops.abi3.so needs libcudart.so.12");

        venv::DistBinaries triton{"triton", "3.5.0",
                                  {file("triton/_C/libproton.so", {"libcupti.so.12"}),
                                   file("triton/backends/nvidia/lib/cupti/libcupti.so.12", {}, {}, "libcupti.so.12")}};
        CHECK(verify::binary_cuda_majors(triton).empty());

        venv::DistBinaries shared{"k", "1", {file("k/x.so", {"libcurand.so.10", "libcusparse.so.12", "libtorch.so"})}};
        CHECK(verify::binary_cuda_majors(shared).empty());
    }

    TEST_CASE("the mixed-CUDA scan: binaries first, names and labels the fallback") {
        venv::BinaryFacts facts;
        facts.scanned = true;
        facts.dists = {{"sgl-kernel", "0.3.21", {file("sgl_kernel/common_ops.abi3.so", {"libcudart.so.12"})}},
                       {"onnxruntime-gpu", "1.31.1", {file("onnxruntime/capi/libonnxruntime_providers_cuda.so",
                                                           {"libcudart.so.13", "libcublas.so.13"})}},
                       {"torch", "2.11.0+cu130", {file("torch/lib/libtorch_cuda.so", {"libcudart.so.13"})}}};
        std::vector<venv::Distribution> dists = {{"onnxruntime-gpu", "onnxruntime-gpu", "1.31.1"},
                                                 {"sgl-kernel", "sgl-kernel", "0.3.21"},
                                                 {"torch", "torch", "2.11.0+cu130"},
                                                 {"nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu12", "12.8.90"}};
        auto target = verify::cuda_target_of_toolkit("13.0");
        auto scan = verify::scan_cuda(dists, target, {}, {}, &facts);
        REQUIRE(scan.mixed.size() == 2);
        CHECK(scan.mixed[0].dist == "sgl-kernel");
        CHECK(scan.mixed[0].found == "0.3.21 (CUDA 12: sgl_kernel/common_ops.abi3.so needs libcudart.so.12)");
        CHECK(scan.mixed[1].dist == "nvidia-cuda-runtime-cu12");
        // Without the binaries, sgl-kernel says nothing: the silent pass this scan closes.
        CHECK(verify::scan_cuda(dists, target, {}).mixed.size() == 1);
        // A label that the binaries confirm keeps its minor.
        CHECK(verify::cuda_build(dists[2], &facts)->label == "cu130");
        // Another version than the one read (a plan's end state): the binaries are not its.
        venv::Distribution newer{"sgl-kernel", "sgl-kernel", "0.3.22"};
        CHECK_FALSE(verify::cuda_build(newer, &facts).has_value());
    }

    TEST_CASE("kernels: none that runs fails, only some binaries is a warning, every rule by name") {
        venv::BinaryFacts facts;
        facts.scanned = true;
        facts.dists = {
            {"onnxruntime-gpu", "1.31.1",
             {file("onnxruntime/capi/libonnxruntime_providers_cuda.so", {},
                   {sass(75), sass(80), sass(86), sass(89), sass(90, Variant::arch_specific),
                    sass(120, Variant::arch_specific)})}},
            {"sgl-kernel", "0.3.21",
             {file("sgl_kernel/flash_ops.abi3.so", {}, {sass(80), sass(86), sass(90, Variant::arch_specific)}),
              file("sgl_kernel/common_ops.abi3.so", {},
                   {sass(80), sass(89), sass(90), sass(90, Variant::arch_specific), sass(100, Variant::arch_specific),
                    sass(120, Variant::arch_specific)})}},
            {"ptxonly", "1", {file("p/x.so", {}, {ptx(90)})}},
            {"family", "1", {file("f/x.so", {}, {sass(100, Variant::family)})}},
        };
        auto judge = [&](std::vector<std::string> gpus) {
            return verify::judge_kernels(facts, {std::move(gpus), "cuda.arch"}, {});
        };
        auto failed = [](const std::vector<verify::Judgement>& js, const std::string& dist) {
            for (const auto& j : js) {
                if (j.dist == dist && !j.ok) {
                    return j.found;
                }
            }
            return std::string();
        };
        auto warned = [](const std::vector<verify::Judgement>& js, const std::string& dist) {
            for (const auto& j : js) {
                if (j.dist == dist && j.warning) {
                    return j.found;
                }
            }
            return std::string();
        };
        auto b200 = judge({"10.0"});
        CHECK(failed(b200, "onnxruntime-gpu") == "no kernel for sm_100: SASS for 75, 80, 86, 89, 90a, 120a, no PTX");
        CHECK(warned(b200, "sgl-kernel").find("no kernel for sm_100 in 1 of 2 binaries: sgl_kernel/flash_ops.abi3.so") == 0);
        CHECK(failed(b200, "ptxonly").empty());    // PTX 9.0 JITs on 10.0
        CHECK(failed(b200, "family").empty());     // sm_100f on 10.0
        auto b300 = judge({"10.3"});
        CHECK(failed(b300, "family").empty());     // sm_100f on 10.3: same major, later minor
        CHECK_FALSE(failed(b300, "sgl-kernel").empty());  // sm_100a is 10.0 only
        auto gb10 = judge({"12.1"});
        CHECK_FALSE(failed(gb10, "onnxruntime-gpu").empty());  // sm_120a is 12.0 only
        CHECK(failed(judge({"12.0"}), "onnxruntime-gpu").empty());
        auto ada = judge({"8.9"});
        CHECK_FALSE(failed(ada, "ptxonly").empty());   // PTX 9.0 never on an older GPU
        CHECK(failed(ada, "onnxruntime-gpu").empty());
        auto hopper = judge({"9.0"});
        CHECK(failed(hopper, "sgl-kernel").empty());
        CHECK(warned(hopper, "sgl-kernel").empty());
        CHECK_FALSE(failed(hopper, "family").empty());  // sm_100f never on 9.0
        // No target GPUs: nothing judged, and the summary says why.
        CHECK(judge({}).empty());
        auto summary = verify::binaries_summary(facts, {{}, "no cuda.arch, and no GPU seen (nvidia-smi is not on PATH)"});
        CHECK(summary.found.find("kernels not judged: no cuda.arch") != std::string::npos);
        // A dist a later step installs again is spared.
        CHECK(failed(verify::judge_kernels(facts, {{"10.0"}, "cuda.arch"}, {"onnxruntime-gpu"}), "onnxruntime-gpu").empty());
    }

    TEST_CASE("NVIDIA's own libraries: judged by their CUDA major, not their .nv_fatbin") {
        // The real nvidia-cufft-cu12 11.3.3.83: libcufft.so.11's .nv_fatbin holds one sm_52 cubin
        // (cuobjdump -all agrees), its kernels live in cuFFT's own format; it runs on every GPU
        // CUDA 12 supports. A false alarm on the real torch 2.9.1 stack until this rule.
        venv::BinaryFacts facts;
        facts.scanned = true;
        facts.dists = {
            {"nvidia-cufft-cu12", "11.3.3.83",
             {file("nvidia/cufft/lib/libcufft.so.11", {}, {sass(52)}, "libcufft.so.11")}},
            {"nvidia-cublas", "13.0.0.19",
             {file("nvidia/cu13/lib/libcublas.so.13", {}, {sass(75), sass(80), sass(90)}, "libcublas.so.13"),
              file("nvidia/cu13/lib/libcublasLt.so.13", {}, {sass(75)}, "libcublasLt.so.13")}},
            {"nvidia-cudnn-cu12", "9.10.2.21", {file("nvidia/cudnn/lib/libcudnn.so.9", {}, {sass(50)}, "libcudnn.so.9")}},
            // Not NVIDIA's: judged by its kernels as ever.
            {"kern", "1", {file("kern/ops.so", {"libcudart.so.12"}, {sass(52)})}},
        };
        auto judge = [&](std::vector<std::string> gpus) {
            return verify::judge_kernels(facts, {std::move(gpus), "cuda.arch"}, {});
        };
        auto failures = [](const std::vector<verify::Judgement>& js, const std::string& dist) {
            std::vector<std::string> out;
            for (const auto& j : js) {
                if (j.dist == dist && !j.ok) {
                    out.push_back(j.found);
                }
            }
            return out;
        };
        auto hopper = judge({"8.0", "9.0", "10.0", "12.0"});
        CHECK(failures(hopper, "nvidia-cufft-cu12").empty());
        CHECK(failures(hopper, "nvidia-cublas").empty());
        CHECK(failures(hopper, "nvidia-cudnn-cu12").empty());   // versioned apart from CUDA: not judged
        CHECK(failures(hopper, "kern").size() == 4);
        // CUDA 13 removed Volta and older: its libraries fail a V100 (7.0), CUDA 12's do not.
        auto volta = judge({"7.0"});
        REQUIRE(failures(volta, "nvidia-cublas").size() == 1);
        CHECK(failures(volta, "nvidia-cublas")[0] ==
              "no support for sm_70: libcublas.so.13 (CUDA 13: 7.5 and newer), libcublasLt.so.13 (CUDA 13: 7.5 and newer)");
        CHECK(failures(volta, "nvidia-cufft-cu12").empty());
        CHECK(failures(judge({"3.7"}), "nvidia-cufft-cu12").size() == 1);  // Kepler: CUDA 12 removed it
        auto summary = verify::summarize_dists({}, facts, {{"7.0", "9.0"}, "cuda.arch"});
        REQUIRE(summary.size() == 4);
        CHECK(summary[0].no_kernel.empty());   // cuFFT: its kernels say nothing; CUDA 12 runs on both
        CHECK(summary[0].kernels_text == "SASS for 52, no PTX");   // still listed as read
        CHECK(summary[1].no_kernel == std::vector<std::string>{"sm_70 (CUDA libraries too new for it)"});
    }

    TEST_CASE("a library nothing provides fails its dist, naming the remove: that took it") {
        auto m = manifest_with();
        venv::BinaryFacts before;
        before.providers = {{"libcudart.so.12", "nvidia-cuda-runtime-cu12"}};
        before.missing = {{"old", "old/x.so", "libcublas.so.11"}};
        venv::BinaryFacts now;
        now.missing = {{"sgl-kernel", "sgl_kernel/common_ops.abi3.so", "libcudart.so.12"},
                       {"old", "old/x.so", "libcublas.so.11"}};
        auto js = verify::judge_libraries(m, 0, now, &before, {});
        REQUIRE(js.size() == 2);
        CHECK_FALSE(js[0].ok);
        CHECK(js[0].expected == "libcudart.so.12 in reach");
        CHECK(js[0].found == "nowhere: sgl_kernel/common_ops.abi3.so needs it; nvidia-cuda-runtime-cu12 "
                             "had it, and step 'cuda13' removed it (remove: nvidia-*-cu12)");
        CHECK(js[1].ok);  // missing before the run: said, not failed
        CHECK(js[1].warning);
        // verify has no before: both fail.
        auto alone = verify::judge_libraries(m, 0, now, nullptr, {});
        CHECK(verify::failures(alone).size() == 2);
        // a later step installs sgl-kernel again: spared
        CHECK(verify::judge_libraries(m, 0, now, &before, {"sgl-kernel"}).size() == 1);
    }

    TEST_CASE("judge_all: targets from cuda.arch, else nvidia-smi, else none") {
        CHECK(verify::gpu_targets(manifest_with({"12.0"}), venv::GpuFacts{{"9.0"}, "nvidia-smi"}).gpus ==
              std::vector<std::string>{"12.0"});
        auto from_smi = verify::gpu_targets(manifest_with(), venv::GpuFacts{{"9.0", "10.0"}, "/usr/bin/nvidia-smi"});
        CHECK(from_smi.gpus == std::vector<std::string>{"9.0", "10.0"});
        CHECK(from_smi.from == "/usr/bin/nvidia-smi");
        CHECK(verify::gpu_targets(manifest_with(), std::nullopt).gpus.empty());

        venv::Facts facts;
        facts.distributions = {{"k", "k", "1.0"}};
        facts.binaries.scanned = true;
        facts.binaries.dists = {{"k", "1.0", {file("k/x.so", {"libcudart.so.13"}, {sass(90, Variant::arch_specific)})}}};
        auto m = manifest_with({"12.0"});
        m.steps[0].remove.clear();
        auto failures = verify::check_all(m, 0, facts);
        REQUIRE(failures.size() == 1);
        CHECK(failures[0].field == "kernels");
        CHECK(of_field(verify::judge_all(m, 0, facts), "binaries").size() == 1);
    }
}

#include <doctest/doctest.h>

#include "verify/cuda.hpp"

using namespace stackup;
using verify::cuda_flavour;

namespace {

struct FlavourCase {
    const char* name;
    const char* version;
    int major;            // 0: the table knows nothing CUDA-specific
    const char* label;
    const char* family;
};

// One real distribution per row, and what the CUDA table says of it.
const FlavourCase flavour_cases[] = {
    // local labels
    {"torch", "2.10.0+cu128", 12, "cu128", "torch"},
    {"torch", "2.11.0.dev20251230+cu130", 13, "cu130", "torch"},
    {"torchvision", "0.20.1+cu118", 11, "cu118", "torchvision"},
    {"sgl-kernel", "0.3.20+cu130", 13, "cu130", "sgl-kernel"},
    {"torch", "2.9.1+cpu", 0, "", ""},
    // name markers -cuNN (also inside the name) and cudaNN[x]
    {"nvidia-cuda-runtime-cu12", "12.8.90", 12, "", "nvidia-cuda-runtime"},
    {"nvidia-cublas-cu12", "12.8.4.1", 12, "", "nvidia-cublas"},
    {"nvidia-cudnn-cu13", "9.13.0.50", 13, "", "nvidia-cudnn"},
    {"nvidia-nccl-cu12", "2.27.3", 12, "", "nvidia-nccl"},
    {"nvidia-cufft-cu11", "10.9.0.58", 11, "", "nvidia-cufft"},
    {"tensorrt-cu12-libs", "10.13.0", 12, "", "tensorrt-libs"},
    {"cupy-cuda12x", "13.6.0", 12, "", "cupy"},
    {"cupy-cuda13x", "13.6.0", 13, "", "cupy"},
    {"cupy-cuda117", "10.6.0", 11, "", "cupy"},
    {"jax-cuda12-plugin", "0.7.2", 12, "", "jax-plugin"},
    {"jax-cuda13-pjrt", "0.8.0", 13, "", "jax-pjrt"},
    {"nvidia-dali-cuda120", "1.51.0", 12, "", "nvidia-dali"},
    // unsuffixed NVIDIA wheels versioned as their CUDA release
    {"nvidia-cuda-runtime", "13.0.96", 13, "", "nvidia-cuda-runtime"},
    {"nvidia-cublas", "13.0.0.19", 13, "", "nvidia-cublas"},
    {"nvidia-cuda-nvrtc", "13.0.48", 13, "", "nvidia-cuda-nvrtc"},
    {"nvidia-nvjitlink", "13.0.39", 13, "", "nvidia-nvjitlink"},
    {"cuda-bindings", "12.9.0", 12, "", "cuda-bindings"},
    {"cuda-bindings", "13.0.1", 13, "", "cuda-bindings"},
    {"cuda-python", "12.9.0", 12, "", "cuda-python"},
    {"cuda-toolkit", "13.0.1", 13, "", "cuda-toolkit"},
    {"nvidia-cuda-runtime", "0.0.1", 0, "", ""},            // a placeholder says nothing
    // unsuffixed NVIDIA wheels with their library's own version: CUDA 13 only
    {"nvidia-cufft", "12.0.0.15", 13, "", "nvidia-cufft"},
    {"nvidia-curand", "10.4.0.35", 13, "", "nvidia-curand"},
    {"nvidia-cusparse", "12.9.4.2", 13, "", "nvidia-cusparse"},
    {"nvidia-cufile", "1.20.0.107", 13, "", "nvidia-cufile"},
    {"nvidia-cuda-cccl", "13.3.5.0.6", 13, "", "nvidia-cuda-cccl"},
    {"nvidia-cufft", "0.0.1.dev5", 0, "", ""},              // placeholders again
    // not CUDA-flavoured, although the name says nvidia or cuda
    {"nvidia-ml-py", "13.580.82", 0, "", ""},
    {"cuda-pathfinder", "1.3.0", 0, "", ""},
    {"cuda-core", "0.3.2", 0, "", ""},
    {"numpy", "2.3.4", 0, "", ""},
    {"triton", "3.5.0", 0, "", ""},
    {"cucumber", "1.0", 0, "", ""},
};

}  // namespace

TEST_SUITE("verify") {
    TEST_CASE("the CUDA table: one real distribution per row") {
        for (const auto& c : flavour_cases) {
            CAPTURE(c.name);
            CAPTURE(c.version);
            auto flavour = cuda_flavour(c.name, c.version);
            if (c.major == 0) {
                CHECK_FALSE(flavour);
                continue;
            }
            REQUIRE(flavour);
            CHECK(flavour->major == c.major);
            CHECK(flavour->label == c.label);
            CHECK(flavour->family == c.family);
            CHECK_FALSE(flavour->rule.empty());
        }
    }

    TEST_CASE("targets and what counts as another CUDA") {
        auto t130 = verify::cuda_target_of_toolkit("13.0");
        REQUIRE(t130);
        CHECK(*t130 == verify::CudaTarget{"cu130", 13});
        CHECK(verify::cuda_target_of_toolkit("12.8.1") == verify::CudaTarget{"cu128", 12});
        CHECK_FALSE(verify::cuda_target_of_toolkit("thirteen"));
        CHECK(verify::cuda_target_of_label("cu128") == verify::CudaTarget{"cu128", 12});
        CHECK_FALSE(verify::cuda_target_of_label("cpu"));

        // a label must be the target's exactly; a name or version marker only its major
        CHECK(verify::is_other_cuda(*cuda_flavour("torch", "2.10.0+cu128"), *t130));
        CHECK(verify::is_other_cuda(*cuda_flavour("torch", "2.10.0+cu129"), *t130));
        CHECK_FALSE(verify::is_other_cuda(*cuda_flavour("torch", "2.11.0+cu130"), *t130));
        CHECK(verify::is_other_cuda(*cuda_flavour("nvidia-cuda-runtime-cu12", "12.8.90"), *t130));
        CHECK_FALSE(verify::is_other_cuda(*cuda_flavour("nvidia-cuda-runtime", "13.0.96"), *t130));
        CHECK_FALSE(verify::is_other_cuda(*cuda_flavour("nvidia-cufft", "12.0.0.15"), *t130));
        CHECK(verify::describe(*cuda_flavour("torch", "2.10.0+cu128")) == "CUDA 12 (cu128)");
        CHECK(verify::describe(*cuda_flavour("cupy-cuda12x", "13.6.0")) == "CUDA 12");
    }
}

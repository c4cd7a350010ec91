#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "binary/cuda_libs.hpp"

using namespace stackup::binary;

namespace {

struct Expectation {
    const char* soname;
    std::optional<int> major;
};

// Written from the toolkits, not from the table: CUDA 13 sonames as /usr/local/cuda-13.0/lib64
// (readelf -d) and the nvidia-npp 13.2 / nvidia-nvjpeg 13.3 wheels have them; CUDA 11 and 12
// as their nvidia-*-cu11 / -cu12 wheels ship them.
const std::vector<Expectation> expectations = {
    {"libcudart.so.11.0", 11}, {"libcudart.so.12", 12}, {"libcudart.so.13", 13},
    {"libcublas.so.11", 11}, {"libcublas.so.12", 12}, {"libcublas.so.13", 13},
    {"libcublasLt.so.11", 11}, {"libcublasLt.so.12", 12}, {"libcublasLt.so.13", 13},
    {"libnvrtc.so.11.2", 11}, {"libnvrtc.so.12", 12}, {"libnvrtc.so.13", 13},
    {"libnvrtc-builtins.so.12.8", 12}, {"libnvrtc-builtins.so.13.0", 13},
    {"libnvrtc.alt.so.13", 13}, {"libnvrtc-builtins.alt.so.13.0", 13},
    {"libnvJitLink.so.12", 12}, {"libnvJitLink.so.13", 13},
    {"libcupti.so.12", 12}, {"libcupti.so.13", 13},
    {"libcufft.so.10", 11}, {"libcufft.so.11", 12}, {"libcufft.so.12", 13},
    {"libcufftw.so.10", 11}, {"libcufftw.so.11", 12}, {"libcufftw.so.12", 13},
    {"libcusolver.so.12", 13}, {"libcusolverMg.so.12", 13},
    {"libcusolver.so.11", std::nullopt}, {"libcusolverMg.so.11", std::nullopt},
    {"libcusparse.so.11", 11}, {"libcusparse.so.12", std::nullopt},
    {"libcurand.so.10", std::nullopt},
    {"libnvjpeg.so.12", 12}, {"libnvjpeg.so.13", 13},
    {"libnvblas.so.12", 12}, {"libnvblas.so.13", 13},
    {"libnppc.so.12", 12}, {"libnppial.so.12", 12}, {"libnppicc.so.12", 12}, {"libnppidei.so.12", 12},
    {"libnppif.so.12", 12}, {"libnppig.so.12", 12}, {"libnppim.so.12", 12}, {"libnppist.so.12", 12},
    {"libnppisu.so.12", 12}, {"libnppitc.so.12", 12}, {"libnpps.so.12", 12},
    {"libnppc.so.13", 13}, {"libnppial.so.13", 13}, {"libnppicc.so.13", 13}, {"libnppidei.so.13", 13},
    {"libnppif.so.13", 13}, {"libnppig.so.13", 13}, {"libnppim.so.13", 13}, {"libnppist.so.13", 13},
    {"libnppisu.so.13", 13}, {"libnppitc.so.13", 13}, {"libnpps.so.13", 13},
    // Versioned apart from CUDA, or shipped by more than one CUDA major.
    {"libcudnn.so.9", std::nullopt}, {"libcudnn_ops.so.9", std::nullopt}, {"libnccl.so.2", std::nullopt},
    {"libcufile.so.0", std::nullopt}, {"libnvToolsExt.so.1", std::nullopt}, {"libnvtx3interop.so.1", std::nullopt},
    {"libnvvm.so.4", std::nullopt}, {"libcusparseLt.so.0", std::nullopt}, {"libcuda.so.1", std::nullopt},
    // Unversioned, or not CUDA's.
    {"libcudart.so", std::nullopt}, {"libtorch_cuda.so", std::nullopt}, {"libfoo.so.12", std::nullopt},
    {"libc.so.6", std::nullopt},
};

}  // namespace

TEST_SUITE("binary") {
    TEST_CASE("cuda_major_of: every expectation, and every table row met by one") {
        for (const auto& e : expectations) {
            CAPTURE(e.soname);
            CHECK(cuda_major_of(e.soname) == e.major);
        }
        for (const auto& row : cuda_major_rows()) {
            std::string soname = std::string(row.stem) + ".so." + std::string(row.soversion);
            CAPTURE(soname);
            bool met = false;
            for (const auto& e : expectations) {
                std::string name = e.soname;
                met = met || ((name == soname || name.starts_with(soname + ".")) && e.major == row.cuda_major);
            }
            CHECK(met);
        }
    }

    TEST_CASE("cuda_library: the toolkit's, the wheels' and the driver's libraries; nothing else") {
        for (const char* soname :
             {"libcudart.so.13", "libcudart.so", "libcublas.so.13", "libcublasLt.so.12", "libnvrtc.so.13",
              "libnvrtc-builtins.so.13.0", "libnvrtc.alt.so.13", "libcufft.so.12", "libcufftw.so.12",
              "libcurand.so.10", "libcusolver.so.12", "libcusolverMg.so.12", "libcusparse.so.12",
              "libcusparseLt.so.0", "libnvJitLink.so.13", "libcupti.so.13", "libnvToolsExt.so.1",
              "libnvtx3interop.so.1", "libcudnn.so.9", "libcudnn_engines_precompiled.so.9", "libnccl.so.2",
              "libnvshmem_host.so.3", "nvshmem_bootstrap_uid.so.3", "libcufile.so.0", "libcufile_rdma.so.1",
              "libnppc.so.13", "libnppial.so.12", "libnvjpeg.so.13", "libnvblas.so.13", "libnvvm.so.4",
              "libnvperf_host.so", "libpcsamplingutil.so"}) {
            CAPTURE(soname);
            auto library = cuda_library(soname);
            REQUIRE(library.has_value());
            CHECK_FALSE(library->driver);
        }
        for (const char* soname : {"libcuda.so.1", "libnvidia-ml.so.1", "libnvcuvid.so.1", "libnvidia-encode.so.1",
                                   "libnvidia-ptxjitcompiler.so.1"}) {
            CAPTURE(soname);
            auto library = cuda_library(soname);
            REQUIRE(library.has_value());
            CHECK(library->driver);
        }
        CHECK(cuda_library("libcudart.so.12")->stem == "libcudart");
        CHECK(cuda_library("libcublasLt.so.13")->stem == "libcublasLt");
        CHECK(cuda_library("libcudnn_ops.so.9")->stem == "libcudnn");
        CHECK(cuda_library("libcuda.so.1")->stem == "libcuda");
        for (const char* soname : {"libtorch.so", "libtorch_cuda.so", "libc10_cuda.so", "libc.so.6", "libcudart",
                                   "libcudartx.so.12", "cudart.so.12", "libcudart.so12", ".so.12", "", "libcuda.sox",
                                   "libnvidia-ml", "libstdc++.so.6"}) {
            CAPTURE(soname);
            CHECK_FALSE(cuda_library(soname).has_value());
        }
    }
}

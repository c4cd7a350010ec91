#pragma once
// The CUDA library a soname is, and the CUDA major version a soname pins, from two data tables
// in cuda_libs.cpp (checked against the CUDA 13.0 toolkit's and the CUDA 13 wheels' sonames).

#include <optional>
#include <span>
#include <string_view>

namespace stackup::binary {

struct CudaLibrary {
    std::string_view stem;      // "libcudart"; for a family named by prefix, the prefix: "libcudnn", "libnpp"
    bool driver = false;        // libcuda.so.1, libnvidia-ml.so.1: the driver's, not a wheel's
};

// Any NVIDIA CUDA library's soname ("libcublasLt.so.13", "libcudnn_ops.so.9", "libcuda.so.1",
// an unversioned "libcudart.so"); nullopt for anything else (libtorch.so, libc.so.6).
std::optional<CudaLibrary> cuda_library(std::string_view soname);

// The CUDA major a soname pins, where only one CUDA major ships that soname: libcudart.so.12
// -> 12, libcufft.so.12 -> 13; nullopt where several do (libcusolver.so.11: CUDA 11 and 12,
// libcurand.so.10: all of them) or the library is versioned apart from CUDA (cuDNN, NCCL).
std::optional<int> cuda_major_of(std::string_view soname);

// One row of the table cuda_major_of reads: the soname's first version component -> CUDA major.
struct CudaMajorRow {
    std::string_view stem;        // "libcufft"
    std::string_view soversion;   // "12": matches libcufft.so.12 and libcufft.so.12.1
    int cuda_major = 0;           // 13
};
std::span<const CudaMajorRow> cuda_major_rows();

}  // namespace stackup::binary

#include "binary/cuda_libs.hpp"

#include <algorithm>
#include <iterator>

namespace stackup::binary {

namespace {

enum class Match { exact, prefix };

struct LibraryRow {
    std::string_view stem;
    Match match = Match::exact;
    bool driver = false;
};

// Every NVIDIA CUDA library, by its soname's stem (the part before ".so"). The toolkit's from
// /usr/local/cuda/lib64 of CUDA 13.0 and the nvidia-* wheels; families by prefix.
constexpr LibraryRow libraries[] = {
    {"libcudart"}, {"libcublas"}, {"libcublasLt"}, {"libnvblas"},
    {"libnvrtc"}, {"libnvrtc-builtins"}, {"libnvrtc.alt"}, {"libnvrtc-builtins.alt"},
    {"libnvJitLink"}, {"libnvfatbin"}, {"libnvvm"},
    {"libcufft"}, {"libcufftw"}, {"libcurand"},
    {"libcusolver"}, {"libcusolverMg"}, {"libcusparse"}, {"libcusparseLt"},
    {"libcupti"}, {"libnvperf_host"}, {"libnvperf_target"}, {"libpcsamplingutil"}, {"libcheckpoint"},
    {"libnvToolsExt"}, {"libnvtx3interop"},
    {"libnccl"}, {"libnvjpeg"},
    {"libnpp", Match::prefix},        // libnppc, libnppial, ... libnpps
    {"libcudnn", Match::prefix},      // libcudnn, libcudnn_ops, libcudnn_engines_precompiled, ...
    {"libnvshmem", Match::prefix},    // libnvshmem_host
    {"nvshmem_", Match::prefix},      // nvshmem_bootstrap_uid.so.3, nvshmem_transport_ibrc.so.3
    {"libcufile", Match::prefix},     // libcufile, libcufile_rdma
    {"libcuda", Match::exact, true},
    {"libnvidia-ml", Match::exact, true},
    {"libnvcuvid", Match::exact, true},
    {"libnvidia-encode", Match::exact, true},
    {"libnvidia-ptxjitcompiler", Match::exact, true},
    {"libnvidia-nvvm", Match::exact, true},
};

// A soname's first version component -> the one CUDA major that ships it. CUDA 13 rows are
// the sonames of the CUDA 13.0 toolkit (readelf -d) and of nvidia-npp 13.2 / nvidia-nvjpeg 13.3;
// absent on purpose: libcusolver(Mg).so.11 (CUDA 11 and 12), libcusparse.so.12 (12 and 13),
// libcurand.so.10 (11, 12 and 13), libnvvm.so.4 (12 and 13), cuDNN, NCCL, cuFile, NVTX.
constexpr CudaMajorRow majors[] = {
    {"libcudart", "11", 11}, {"libcudart", "12", 12}, {"libcudart", "13", 13},
    {"libcublas", "11", 11}, {"libcublas", "12", 12}, {"libcublas", "13", 13},
    {"libcublasLt", "11", 11}, {"libcublasLt", "12", 12}, {"libcublasLt", "13", 13},
    {"libnvrtc", "11", 11}, {"libnvrtc", "12", 12}, {"libnvrtc", "13", 13},
    {"libnvrtc-builtins", "12", 12}, {"libnvrtc-builtins", "13", 13},
    {"libnvrtc.alt", "13", 13}, {"libnvrtc-builtins.alt", "13", 13},
    {"libnvJitLink", "12", 12}, {"libnvJitLink", "13", 13},
    {"libcupti", "12", 12}, {"libcupti", "13", 13},
    {"libcufft", "10", 11}, {"libcufft", "11", 12}, {"libcufft", "12", 13},
    {"libcufftw", "10", 11}, {"libcufftw", "11", 12}, {"libcufftw", "12", 13},
    {"libcusolver", "12", 13}, {"libcusolverMg", "12", 13},
    {"libcusparse", "11", 11},
    {"libnvjpeg", "12", 12}, {"libnvjpeg", "13", 13},
    {"libnvblas", "12", 12}, {"libnvblas", "13", 13},
    {"libnppc", "12", 12}, {"libnppial", "12", 12}, {"libnppicc", "12", 12}, {"libnppidei", "12", 12},
    {"libnppif", "12", 12}, {"libnppig", "12", 12}, {"libnppim", "12", 12}, {"libnppist", "12", 12},
    {"libnppisu", "12", 12}, {"libnppitc", "12", 12}, {"libnpps", "12", 12},
    {"libnppc", "13", 13}, {"libnppial", "13", 13}, {"libnppicc", "13", 13}, {"libnppidei", "13", 13},
    {"libnppif", "13", 13}, {"libnppig", "13", 13}, {"libnppim", "13", 13}, {"libnppist", "13", 13},
    {"libnppisu", "13", 13}, {"libnppitc", "13", 13}, {"libnpps", "13", 13},
};

struct Soname {
    std::string_view stem;       // before ".so"
    std::string_view version;    // after ".so.", empty for "libx.so"
};

// "libnvrtc.alt.so.13" -> {"libnvrtc.alt", "13"}; nullopt without a ".so" that ends the name
// or starts its version.
std::optional<Soname> split(std::string_view soname) {
    for (auto at = soname.find(".so"); at != std::string_view::npos; at = soname.find(".so", at + 1)) {
        auto rest = soname.substr(at + 3);
        if (at > 0 && (rest.empty() || (rest.size() > 1 && rest[0] == '.'))) {
            return Soname{soname.substr(0, at), rest.empty() ? rest : rest.substr(1)};
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<CudaLibrary> cuda_library(std::string_view soname) {
    auto parts = split(soname);
    if (!parts) {
        return std::nullopt;
    }
    for (const auto& row : libraries) {
        bool matches = row.match == Match::exact ? parts->stem == row.stem : parts->stem.starts_with(row.stem);
        if (matches) {
            return CudaLibrary{row.stem, row.driver};
        }
    }
    return std::nullopt;
}

std::optional<int> cuda_major_of(std::string_view soname) {
    auto parts = split(soname);
    if (!parts || parts->version.empty()) {
        return std::nullopt;
    }
    auto first = parts->version.substr(0, parts->version.find('.'));
    auto row = std::find_if(std::begin(majors), std::end(majors), [&](const CudaMajorRow& r) {
        return r.stem == parts->stem && r.soversion == first;
    });
    if (row == std::end(majors)) {
        return std::nullopt;
    }
    return row->cuda_major;
}

std::span<const CudaMajorRow> cuda_major_rows() {
    return majors;
}

}  // namespace stackup::binary

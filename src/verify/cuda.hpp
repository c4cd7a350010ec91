#pragma once
// Which CUDA a distribution is built for, from one data table (cuda.cpp):
// local labels (+cu130), name markers (-cu12, cuda12x, -cuda12-), and NVIDIA's
// unsuffixed CUDA 13 component wheels and bindings, judged by name and version.

#include <optional>
#include <string>
#include <vector>

namespace stackup::verify {

struct CudaFlavour {
    int major = 0;            // 12, 13
    std::string label;        // "cu128" when a local label decided, else ""
    std::string family;       // the name without its CUDA marker: "nvidia-cuda-runtime", "cupy", "torch"
    std::string rule;         // the table row that decided, for messages: "name suffix -cu12"
    friend bool operator==(const CudaFlavour&, const CudaFlavour&) = default;
};

// nullopt for a dist the table knows nothing CUDA-specific about (numpy, triton, nvidia-ml-py).
// `normalized` is the PEP 503 name; `version` as installed.
std::optional<CudaFlavour> cuda_flavour(const std::string& normalized, const std::string& version);

// The target CUDA: the label "cu130" and the major 13.
struct CudaTarget {
    std::string label;
    int major = 0;
    friend bool operator==(const CudaTarget&, const CudaTarget&) = default;
};

// "13.0" -> {cu130, 13}; "cu128" -> {cu128, 12}; nullopt when neither.
std::optional<CudaTarget> cuda_target_of_toolkit(const std::string& toolkit);
std::optional<CudaTarget> cuda_target_of_label(const std::string& label);

// True when `flavour` is another CUDA than `target`: a local label must be the
// target's exactly (a cu128 torch in a cu130 stack), a name or version marker
// must have the target's major.
bool is_other_cuda(const CudaFlavour& flavour, const CudaTarget& target);

// "CUDA 12 (cu128)" / "CUDA 13"
std::string describe(const CudaFlavour& flavour);

}  // namespace stackup::verify

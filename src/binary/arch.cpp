#include "binary/arch.hpp"

#include <algorithm>

#include "base/text.hpp"

namespace stackup::binary {

namespace {

Gpu target_of(const Kernel& kernel) {
    return {kernel.sm / 10, kernel.sm % 10};
}

// "90", "90a", "100f": a kernel's target without its kind.
std::string label(const Kernel& kernel) {
    std::string out = std::to_string(kernel.sm);
    if (kernel.variant == Variant::arch_specific) {
        out += 'a';
    } else if (kernel.variant == Variant::family) {
        out += 'f';
    }
    return out;
}

// The distinct labels of one kind, in the order of the (sorted) kernels.
std::vector<std::string> labels_of(std::vector<Kernel> kernels, KernelKind kind) {
    std::sort(kernels.begin(), kernels.end());
    std::vector<std::string> out;
    for (const auto& k : kernels) {
        if (k.kind == kind && std::find(out.begin(), out.end(), label(k)) == out.end()) {
            out.push_back(label(k));
        }
    }
    return out;
}

}  // namespace

std::optional<Gpu> parse_gpu(std::string_view text) {
    auto dot = text.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot > 2 || text.size() != dot + 2) {
        return std::nullopt;
    }
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (i != dot && !base::is_ascii_digit(text[i])) {
            return std::nullopt;
        }
    }
    if (text[0] == '0') {
        return std::nullopt;
    }
    Gpu gpu;
    for (std::size_t i = 0; i < dot; ++i) {
        gpu.major = gpu.major * 10 + (text[i] - '0');
    }
    gpu.minor = text[dot + 1] - '0';
    return gpu;
}

std::string spelled(Gpu gpu) {
    return std::to_string(gpu.major) + "." + std::to_string(gpu.minor);
}

std::string sm_of(Gpu gpu) {
    return "sm_" + std::to_string(gpu.major) + std::to_string(gpu.minor);
}

// The rules, from NVIDIA's documents:
//  - CUDA C++ Programming Guide, "Binary Compatibility": a cubin generated for compute
//    capability X.y only executes on devices of compute capability X.z where z >= y
//    (so sm_90 SASS does not run on 10.0).
//  - Programming Guide, "PTX Compatibility" / "Application Compatibility": PTX for a compute
//    capability can always be compiled (by the driver, just in time) to binary code of greater
//    or equal compute capability.
//  - Programming Guide, "Feature Availability", and the NVIDIA blog "NVIDIA Blackwell and NVIDIA
//    CUDA 12.9 Introduce Family-Specific Architecture Features" (2025): code for an
//    architecture-specific target (sm_90a, compute_90a) runs only on exactly that compute
//    capability, neither forward nor within the family; code for a family-specific target
//    (sm_100f, compute_100f, new in CUDA 12.9) runs on the family's later members of the same
//    major version: sm_100f on 10.0 and 10.3, sm_103f on 10.3 only, sm_120f on 12.0 and 12.1.
bool runs_on(const Kernel& kernel, Gpu gpu) {
    if (kernel.kind == KernelKind::lto_ir) {
        return false;
    }
    auto target = target_of(kernel);
    bool same_major_not_older = gpu.major == target.major && gpu.minor >= target.minor;
    switch (kernel.variant) {
    case Variant::arch_specific:
        return gpu == target;
    case Variant::family:
        return same_major_not_older;
    case Variant::plain:
        break;
    }
    return kernel.kind == KernelKind::ptx ? gpu >= target : same_major_not_older;
}

std::string summarize(const std::vector<Kernel>& kernels) {
    auto sass = labels_of(kernels, KernelKind::sass);
    auto ptx = labels_of(kernels, KernelKind::ptx);
    auto lto = labels_of(kernels, KernelKind::lto_ir);
    std::vector<std::string> parts;
    if (!sass.empty()) {
        parts.push_back("SASS for " + base::join(sass) + (ptx.empty() ? ", no PTX" : ""));
    }
    if (!ptx.empty()) {
        parts.push_back("PTX for " + base::join(ptx));
    }
    if (!lto.empty()) {
        parts.push_back("LTO IR for " + base::join(lto));
    }
    return parts.empty() ? "no kernels" : base::join(parts, "; ");
}

}  // namespace stackup::binary

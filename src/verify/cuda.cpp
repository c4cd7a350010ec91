#include "verify/cuda.hpp"

#include <regex>
#include <string_view>

#include "pep/version.hpp"

namespace stackup::verify {
namespace {

// How a row reads the CUDA major off a dist.
enum class Evidence {
    local_label,     // 2.11.0+cu130: the label's digits, the last one the minor
    name_marker,     // a name segment cu12 / cu118 / cuda12x / cuda117
    version_major,   // the dist's version is the CUDA version (nvidia-cuda-runtime 13.0.96)
    fixed,           // the name exists for one CUDA only (nvidia-cufft: the library's own version)
};

struct Row {
    std::string_view names;  // regex over the PEP 503 name
    Evidence evidence;
    int major;               // for `fixed`
    std::string_view rule;   // said in messages
};

// Order matters: the first row that decides wins. A row per way the world marks
// CUDA builds; tests/unit pin each row with real names (verify/test_cuda.cpp).
const Row kTable[] = {
    {".*", Evidence::local_label, 0, "local label +cuXYZ"},
    {"(.+-)?cu[0-9]{2,3}(-.+)?", Evidence::name_marker, 0, "name marker -cuNN"},
    {"(.+-)?cuda[0-9]{2,3}x?(-.+)?", Evidence::name_marker, 0, "name marker cudaNN"},
    // NVIDIA's CUDA component wheels lost their -cuNN suffix with CUDA 13 (12.x has none of these
    // names but 0.0.x placeholders); these carry the CUDA version, as do cuda-bindings and its metapackages.
    {"nvidia-cuda-runtime|nvidia-cuda-nvrtc|nvidia-cuda-cupti|nvidia-cuda-nvcc|nvidia-cuda-cccl|nvidia-cuda-crt|"
     "nvidia-cuda-sanitizer-api|nvidia-cuda-opencl|nvidia-cuda-cuobjdump|nvidia-cuda-nvdisasm|"
     "nvidia-cuda-profiler-api|nvidia-cublas|nvidia-nvjitlink|nvidia-nvtx|nvidia-nvvm|nvidia-nvfatbin|"
     "nvidia-nvml-dev|nvidia-npp|nvidia-nvjpeg|cuda-bindings|cuda-python|cuda-toolkit",
     Evidence::version_major, 0, "CUDA wheel versioned as its CUDA release"},
    // ... and these their library's own version (cufft 12.5 and cusparse 12.9 are CUDA 13's, curand 10.4, cufile 1.20).
    {"nvidia-cufft|nvidia-curand|nvidia-cusolver|nvidia-cusparse|nvidia-cufile", Evidence::fixed, 13,
     "CUDA 13 library wheel (unsuffixed since CUDA 13)"},
};

const std::regex& regex_of(const Row& row) {
    static const auto compiled = [] {
        std::vector<std::regex> out;
        for (const auto& r : kTable) {
            out.emplace_back(r.names.begin(), r.names.end());
        }
        return out;
    }();
    return compiled[static_cast<std::size_t>(&row - kTable)];
}

// "cu128" -> 12 (the last digit is the minor); "cu12" in a name -> 12.
std::optional<int> major_of_digits(std::string_view digits, bool last_is_minor) {
    if (digits.size() < 2 || digits.size() > 3) {
        return std::nullopt;
    }
    if (last_is_minor || digits.size() == 3) {
        digits.remove_suffix(1);
    }
    return std::stoi(std::string(digits));
}

std::optional<CudaFlavour> from_label(const std::string& name, const std::string& version, const Row& row) {
    static const std::regex label_re("cu([0-9]{2,3})");
    auto v = pep::Version::parse(version);
    std::smatch m;
    std::string label = v ? v->local() : "";
    if (!std::regex_match(label, m, label_re)) {
        return std::nullopt;
    }
    return CudaFlavour{*major_of_digits(m[1].str(), true), label, name, std::string(row.rule)};
}

// The segment that marks CUDA, and the name without it: "cupy-cuda12x" -> 12, "cupy".
std::optional<CudaFlavour> from_name(const std::string& name, const Row& row) {
    static const std::regex segment_re("cu(?:da)?([0-9]{2,3})x?");
    std::string family;
    std::optional<int> major;
    std::size_t start = 0;
    while (start <= name.size()) {
        std::size_t end = name.find('-', start);
        std::string segment = name.substr(start, end == std::string::npos ? std::string::npos : end - start);
        std::smatch m;
        if (!major && std::regex_match(segment, m, segment_re)) {
            major = major_of_digits(m[1].str(), false);
        } else {
            family += (family.empty() ? "" : "-") + segment;
        }
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
    if (!major) {
        return std::nullopt;
    }
    return CudaFlavour{*major, "", family, std::string(row.rule)};
}

std::optional<CudaFlavour> from_version(const std::string& name, const std::string& version, const Row& row) {
    auto v = pep::Version::parse(version);
    if (!v || v->release().empty()) {
        return std::nullopt;
    }
    auto major = static_cast<int>(v->release().front());
    if (major < 9 || major > 99) {
        return std::nullopt;  // a placeholder release (0.0.1) says nothing
    }
    return CudaFlavour{major, "", name, std::string(row.rule)};
}

std::optional<CudaFlavour> from_fixed(const std::string& name, const std::string& version, const Row& row) {
    auto v = pep::Version::parse(version);
    if (!v || v->release().empty() || v->release().front() == 0) {
        return std::nullopt;  // the index's 0.0.1.dev5 placeholders say nothing
    }
    return CudaFlavour{row.major, "", name, std::string(row.rule)};
}

}  // namespace

std::optional<CudaFlavour> cuda_flavour(const std::string& normalized, const std::string& version) {
    for (const auto& row : kTable) {
        if (!std::regex_match(normalized, regex_of(row))) {
            continue;
        }
        std::optional<CudaFlavour> found;
        switch (row.evidence) {
            case Evidence::local_label: found = from_label(normalized, version, row); break;
            case Evidence::name_marker: found = from_name(normalized, row); break;
            case Evidence::version_major: found = from_version(normalized, version, row); break;
            case Evidence::fixed: found = from_fixed(normalized, version, row); break;
        }
        if (found) {
            return found;
        }
    }
    return std::nullopt;
}

std::optional<CudaTarget> cuda_target_of_toolkit(const std::string& toolkit) {
    static const std::regex toolkit_re("([0-9]+)\\.([0-9])(\\.[0-9]+)*");
    std::smatch m;
    if (!std::regex_match(toolkit, m, toolkit_re)) {
        return std::nullopt;
    }
    return CudaTarget{"cu" + m[1].str() + m[2].str(), std::stoi(m[1].str())};
}

std::optional<CudaTarget> cuda_target_of_label(const std::string& label) {
    static const std::regex label_re("cu([0-9]{2,3})");
    std::smatch m;
    if (!std::regex_match(label, m, label_re)) {
        return std::nullopt;
    }
    return CudaTarget{label, *major_of_digits(m[1].str(), true)};
}

bool is_other_cuda(const CudaFlavour& flavour, const CudaTarget& target) {
    if (!flavour.label.empty()) {
        return flavour.label != target.label;
    }
    return flavour.major != target.major;
}

std::string describe(const CudaFlavour& flavour) {
    std::string out = "CUDA " + std::to_string(flavour.major);
    return flavour.label.empty() ? out : out + " (" + flavour.label + ")";
}

}  // namespace stackup::verify

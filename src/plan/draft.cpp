#include "plan/draft.hpp"
#include "plan/draft_parts.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <regex>
#include <set>

#include "base/error.hpp"
#include "manifest/yaml_scalar.hpp"
#include "pep/version.hpp"

namespace stackup::plan {
namespace detail {
namespace {

// The GPU stack: pinned in a baseline even without a CUDA marker.
constexpr std::array<Known, 10> known_dists{{
    {"torch", Group::torch, ""},
    {"torchvision", Group::torch, ""},
    {"torchaudio", Group::torch, ""},
    {"xformers", Group::torch, ""},
    {"flashinfer-python", Group::torch, ""},
    {"sgl-kernel", Group::sglang, ""},
    {"triton", Group::with_torch, "comes with torch as its dependency"},
    {"pytorch-triton", Group::with_torch, "comes with the torch nightly as its dependency"},
    {"flash-attn", Group::note, "built against the old CUDA, and PyPI has its source only: rebuild it, or add "
                                "an index with a wheel built for the target"},
    {"flashinfer-jit-cache", Group::note, "its CUDA-specific index is FlashInfer's own: add it if you need it"},
}};

std::string local_label(const std::string& version) {
    auto v = pep::Version::parse(version);
    return v ? v->local() : "";
}

}  // namespace

const Known* known(const std::string& normalized) {
    for (const auto& k : known_dists) {
        if (k.name == normalized) {
            return &k;
        }
    }
    return nullptr;
}

std::string describe_flavour(const std::optional<verify::CudaFlavour>& f) {
    if (!f) {
        return "";
    }
    return f->label.empty() ? "CUDA " + std::to_string(f->major) + " (" + f->rule + ")" : verify::describe(*f);
}

std::vector<Tracked> tracked_dists(const DraftInput& in) {
    std::vector<Tracked> out;
    for (const auto& d : in.distributions) {
        auto flavour = verify::cuda_flavour(d.normalized, d.version);
        if (flavour || is_gpu_stack(d.normalized)) {
            out.push_back({&d, flavour, local_label(d.version)});
        }
    }
    return out;
}

std::string with_comment(const std::string& text, std::size_t width, const std::string& comment) {
    if (comment.empty()) {
        return text + "\n";
    }
    std::size_t pad = text.size() < width ? width - text.size() : 1;
    return text + std::string(pad, ' ') + "# " + comment + "\n";
}

std::string installed_block(const DraftInput& in) {
    std::size_t width = 0;
    for (const auto& d : in.distributions) {
        width = std::max(width, d.name.size() + d.version.size() + 1);
    }
    width = std::min<std::size_t>(width, 60);
    std::string out = "# Installed distributions (" + std::to_string(in.distributions.size()) + "), with the CUDA each is built for:\n";
    for (const auto& d : in.distributions) {
        std::string line = d.name + " " + d.version;
        std::string cuda = describe_flavour(verify::cuda_flavour(d.normalized, d.version));
        if (!cuda.empty()) {
            line += std::string(line.size() < width ? width - line.size() : 0, ' ') + "   " + cuda;
        }
        out += "#   " + line + "\n";
    }
    return out;
}

std::string head(const DraftInput& in, const std::string& name) {
    std::string out = "version: 1\n";
    out += "name: " + manifest::yaml_scalar(name) + "\n";
    out += "venv: " + manifest::yaml_scalar(in.venv.string()) + "\n";
    out += with_comment("python: \"" + std::to_string(in.interpreter.major) + "." + std::to_string(in.interpreter.minor) +
                            "\"",
                        40, "the venv's interpreter (" + in.interpreter.version + ")");
    return out;
}

std::string inline_map(const std::vector<std::pair<std::string, std::string>>& fields) {
    std::string out = "{";
    for (const auto& [key, value] : fields) {
        out += (out.size() > 1 ? ", " : "") + key + ": " + value;
    }
    return out + "}";
}

std::string inline_list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (const auto& item : items) {
        out += (out.size() > 1 ? ", " : "") + manifest::yaml_scalar(item);
    }
    return out + "]";
}

}  // namespace detail

namespace {

using detail::Tracked;
using detail::describe_flavour;
using detail::head;
using detail::inline_list;
using detail::inline_map;
using detail::installed_block;
using detail::known;
using detail::tracked_dists;
using detail::with_comment;

// The target's CUDA among the baseline's facts, as verify will judge it (verify::target_cuda).
std::optional<verify::CudaTarget> baseline_target(const DraftInput& in, const std::vector<Tracked>& tracked) {
    if (in.toolkit) {
        return verify::cuda_target_of_toolkit(in.toolkit->release);
    }
    std::optional<verify::CudaTarget> found;
    for (const auto& t : tracked) {
        auto target = t.local.empty() ? std::nullopt : verify::cuda_target_of_label(t.local);
        if (!target) {
            continue;
        }
        if (found && *found != *target) {
            return std::nullopt;
        }
        found = target;
    }
    return found;
}

}  // namespace

bool is_gpu_stack(const std::string& normalized) {
    return known(normalized) != nullptr;
}

std::string draft_baseline(const DraftInput& in) {
    auto tracked = tracked_dists(in);
    if (tracked.empty()) {
        throw Error(ExitCode::usage, "nothing in " + in.venv.string() + " is built for a CUDA or belongs to the GPU stack (" +
                                         std::to_string(in.distributions.size()) +
                                         " distribution(s)): a baseline would check nothing");
    }
    std::string out = "# The baseline of " + in.venv.string() + ", written by `stackup init`: the venv as it is.\n"
                      "# `stackup verify` on this file passes while the venv stays so; keep it beside the server.\n"
                      "# Its one step installs nothing (no packages): it only expects what was found.\n#\n";
    out += installed_block(in);
    out += head(in, in.venv.filename().string() + "-baseline");
    if (in.toolkit) {
        out += "cuda:                                   # the toolkit found: <home>/bin/nvcc reports it\n";
        out += "  toolkit: \"" + in.toolkit->release + "\"\n";
        out += "  home: " + manifest::yaml_scalar(in.toolkit->home.string()) + "\n";
    }
    out += "indexes:\n";
    out += "  pypi: https://pypi.example/simple     # placeholder: the index this venv's wheels came from "
           "(nothing is fetched for a step that installs nothing)\n";
    out += "steps:\n  - name: baseline\n    index: pypi\n";
    out += "    expect:                             # every CUDA-flavoured dist and the GPU stack, pinned as installed\n";
    for (const auto& t : tracked) {
        std::vector<std::pair<std::string, std::string>> fields{{"version", manifest::yaml_scalar("==" + t.dist->version)}};
        if (!t.local.empty()) {
            fields.push_back({"local", manifest::yaml_scalar(t.local)});
        }
        std::string cuda = describe_flavour(t.flavour);
        out += with_comment("      " + manifest::yaml_scalar(t.dist->normalized) + ": " + inline_map(fields), 56,
                            cuda.empty() ? "no CUDA marker" : cuda);
    }
    auto target = baseline_target(in, tracked);
    std::vector<std::string> mixed;
    for (const auto& t : tracked) {
        if (target && t.flavour && verify::is_other_cuda(*t.flavour, *target)) {
            mixed.push_back(t.dist->normalized);
        }
    }
    if (!mixed.empty()) {
        out += with_comment("allow_mixed: " + inline_list(mixed), 40,
                            "built for another CUDA than " + target->label + ", as found");
    }
    return out;
}

}  // namespace stackup::plan

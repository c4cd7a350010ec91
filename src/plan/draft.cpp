#include "plan/draft.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <regex>
#include <set>

#include "base/error.hpp"
#include "pep/version.hpp"

namespace stackup::plan {
namespace {

// Where the GPU stack's dists come from in an upgrade draft: the step (and index) they go in.
enum class Group { torch, sglang, with_torch, note };

struct Known {
    std::string_view name;
    Group group;
    std::string_view note;   // for Group::note: why it is not listed as a package
};

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

const Known* known(const std::string& normalized) {
    for (const auto& k : known_dists) {
        if (k.name == normalized) {
            return &k;
        }
    }
    return nullptr;
}

// One installed dist that the manifest speaks about.
struct Tracked {
    const venv::Distribution* dist;
    std::optional<verify::CudaFlavour> flavour;
    std::string local;   // its local version label, "" when none
};

std::string local_label(const std::string& version) {
    auto v = pep::Version::parse(version);
    return v ? v->local() : "";
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

// `text` padded with spaces to `width` (at least one space after it), then `comment`.
std::string with_comment(const std::string& text, std::size_t width, const std::string& comment) {
    if (comment.empty()) {
        return text + "\n";
    }
    std::size_t pad = text.size() < width ? width - text.size() : 1;
    return text + std::string(pad, ' ') + "# " + comment + "\n";
}

// Every installed dist with its version and CUDA, as comment lines.
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

// version, name, venv, python (and the toolkit for a baseline): the manifest's head.
std::string head(const DraftInput& in, const std::string& name) {
    std::string out = "version: 1\n";
    out += "name: " + yaml_scalar(name) + "\n";
    out += "venv: " + yaml_scalar(in.venv.string()) + "\n";
    out += with_comment("python: \"" + std::to_string(in.interpreter.major) + "." + std::to_string(in.interpreter.minor) +
                            "\"",
                        40, "the venv's interpreter (" + in.interpreter.version + ")");
    return out;
}

// "{version: \"==2.10.0+cu128\", local: cu128}"
std::string inline_map(const std::vector<std::pair<std::string, std::string>>& fields) {
    std::string out = "{";
    for (const auto& [key, value] : fields) {
        out += (out.size() > 1 ? ", " : "") + key + ": " + value;
    }
    return out + "}";
}

// "[a, b]"
std::string inline_list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (const auto& item : items) {
        out += (out.size() > 1 ? ", " : "") + yaml_scalar(item);
    }
    return out + "]";
}

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

// --- the upgrade draft ---------------------------------------------------------------------

struct DraftStep {
    std::string name;
    std::string index;
    std::vector<std::string> packages;
    std::vector<std::string> comments;                          // above the step
    bool prerelease = false;
    bool no_deps = false;
    std::vector<std::pair<std::string, std::string>> remove;    // pattern -> what it matches
    std::vector<std::pair<std::string, std::string>> expect;    // "dist: {...}" -> comment
};

// "cupy-cuda12x" -> "cupy-cuda13x", "nvidia-cudnn-cu12" -> "nvidia-cudnn-cu13"; "" when the
// marker is not a bare major (cupy-cuda117).
std::string renamed_for(const std::string& normalized, int major) {
    static const std::regex segment_re("(^|-)(cu|cuda)([0-9]{2})(x?)(-|$)");
    std::smatch m;
    if (!std::regex_search(normalized, m, segment_re)) {
        return "";
    }
    return m.prefix().str() + m[1].str() + m[2].str() + std::to_string(major) + m[4].str() + m[5].str() +
           m.suffix().str();
}

// The `remove:` entries for the dists whose name marks another CUDA: a pattern for a
// family of NVIDIA wheels (nvidia-*-cu12) when several share the suffix, else the names.
std::vector<std::pair<std::string, std::string>> removals(const std::vector<const Tracked*>& marked) {
    std::map<std::string, std::vector<const Tracked*>> by_suffix;   // "-cu12" -> nvidia wheels
    std::vector<std::pair<std::string, std::string>> out;
    static const std::regex nvidia_re("nvidia-.+(-cu[0-9]{2,3})");
    for (const Tracked* t : marked) {
        std::smatch m;
        if (std::regex_match(t->dist->normalized, m, nvidia_re)) {
            by_suffix[m[1].str()].push_back(t);
        } else {
            out.push_back({t->dist->normalized, t->dist->name + " " + t->dist->version});
        }
    }
    for (const auto& [suffix, group] : by_suffix) {
        if (group.size() == 1) {
            out.push_back({group[0]->dist->normalized, group[0]->dist->name + " " + group[0]->dist->version});
        } else {
            out.push_back({"nvidia-*" + suffix, std::to_string(group.size()) + " NVIDIA wheels"});
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string render_step(const DraftStep& s) {
    std::string out;
    for (const auto& c : s.comments) {
        out += "  # " + c + "\n";
    }
    out += "  - name: " + yaml_scalar(s.name) + "\n";
    out += "    index: " + s.index + "\n";
    if (!s.packages.empty()) {
        out += "    packages: " + inline_list(s.packages) + "\n";
    }
    if (s.prerelease) {
        out += with_comment("    prerelease: true", 40, "check: nightlies are .devYYYYMMDD pre-releases; false for a stable index");
    }
    if (s.no_deps) {
        out += with_comment("    deps: false", 40, "as its project installs it: its declared dependencies are elsewhere");
    }
    if (!s.remove.empty()) {
        out += "    remove:                             # built for another CUDA, replaced under new names; uv never removes them\n";
        for (const auto& [pattern, what] : s.remove) {
            out += with_comment("      - " + yaml_scalar(pattern), 40, what);
        }
    }
    if (!s.expect.empty()) {
        out += "    expect:\n";
        for (const auto& [line, comment] : s.expect) {
            out += with_comment("      " + line, 56, comment);
        }
    }
    return out;
}

struct UpgradeSteps {
    DraftStep torch{"torch", "pytorch", {}, {}, true, false, {}, {}};
    DraftStep sglang{"sgl-kernel", "sglang", {}, {}, false, true, {}, {}};
    DraftStep others{"cuda-" + std::string(), "pypi", {}, {}, false, false, {}, {}};
    std::vector<const Tracked*> marked;     // to remove
    std::vector<std::string> notes;         // dists left as they are, and why
};

void place(UpgradeSteps& s, const Tracked& t, const verify::CudaTarget& target, const std::string& cuda) {
    const std::string& name = t.dist->normalized;
    const std::string was = "was " + t.dist->version + (t.flavour ? " (" + describe_flavour(t.flavour) + ")" : "");
    if (t.flavour && !verify::is_other_cuda(*t.flavour, target)) {
        s.notes.push_back(t.dist->name + " " + t.dist->version + ": already built for " + describe_flavour(t.flavour) +
                          "; left as it is");
        return;
    }
    const Known* k = known(name);
    std::vector<std::pair<std::string, std::string>> fields;
    if (!t.local.empty()) {
        fields.push_back({"local", yaml_scalar(target.label)});
    }
    if (name == "torch") {
        fields.push_back({"cuda", "\"" + cuda + "\""});
    }
    std::string comment = t.local.empty() && k != nullptr && (!t.flavour || t.flavour->label.empty())
                              ? was + ": check the new build's label, e.g. local: " + target.label
                              : was;
    auto expect_line = [&] { return yaml_scalar(name) + ": " + inline_map(fields); };
    if (k != nullptr && (k->group == Group::torch || k->group == Group::sglang)) {
        DraftStep& step = k->group == Group::torch ? s.torch : s.sglang;
        step.packages.push_back(name);
        step.expect.push_back({expect_line(), comment});
        return;
    }
    if (k != nullptr) {
        s.notes.push_back(t.dist->name + " " + t.dist->version + ": " + std::string(k->note));
        return;
    }
    if (!t.flavour->label.empty()) {  // another label, not a dist the table knows
        s.others.packages.push_back(name);
        s.others.expect.push_back({expect_line(), was + ": check which index has its " + target.label + " build"});
        return;
    }
    if (t.flavour->rule.find("versioned as its CUDA") != std::string::npos) {
        std::string spec = "==" + std::to_string(target.major) + ".*";
        s.others.packages.push_back(name + spec);
        s.others.expect.push_back({yaml_scalar(name) + ": {version: \"" + spec + "\"}", was});
        return;
    }
    s.marked.push_back(&t);
    std::string renamed = renamed_for(name, target.major);
    if (!renamed.empty() && name.rfind("nvidia-", 0) != 0 && renamed != name) {
        s.others.packages.push_back(renamed);
        s.others.expect.push_back({yaml_scalar(renamed) + ": {}", "replaces " + t.dist->name + " " + t.dist->version});
    }
}

}  // namespace

bool is_gpu_stack(const std::string& normalized) {
    return known(normalized) != nullptr;
}

std::string yaml_scalar(std::string_view text) {
    static const std::regex plain_re("[A-Za-z_/][A-Za-z0-9._/+-]*");
    static const std::set<std::string> special{"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (std::regex_match(lower, plain_re) && special.count(lower) == 0) {
        return std::string(text);
    }
    std::string out = "\"";
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20 || u == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
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
        out += "  home: " + yaml_scalar(in.toolkit->home.string()) + "\n";
    }
    out += "indexes:\n";
    out += "  pypi: https://pypi.example/simple     # placeholder: the index this venv's wheels came from "
           "(nothing is fetched for a step that installs nothing)\n";
    out += "steps:\n  - name: baseline\n    index: pypi\n";
    out += "    expect:                             # every CUDA-flavoured dist and the GPU stack, pinned as installed\n";
    for (const auto& t : tracked) {
        std::vector<std::pair<std::string, std::string>> fields{{"version", yaml_scalar("==" + t.dist->version)}};
        if (!t.local.empty()) {
            fields.push_back({"local", yaml_scalar(t.local)});
        }
        std::string cuda = describe_flavour(t.flavour);
        out += with_comment("      " + yaml_scalar(t.dist->normalized) + ": " + inline_map(fields), 56,
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

std::string draft_upgrade(const DraftInput& in, const std::string& toolkit) {
    auto target = verify::cuda_target_of_toolkit(toolkit);
    static const std::regex toolkit_re("[0-9]+\\.[0-9]");
    if (!target || !std::regex_match(toolkit, toolkit_re)) {
        throw Error(ExitCode::usage, "--target-cuda '" + toolkit + "' is not a CUDA version like 13.0");
    }
    auto tracked = tracked_dists(in);
    UpgradeSteps s;
    s.others.name = "cuda-" + std::to_string(target->major);
    for (const auto& t : tracked) {
        place(s, t, *target, toolkit);
    }
    auto remove = removals(s.marked);
    std::vector<DraftStep*> steps;
    for (DraftStep* step : {&s.torch, &s.sglang, &s.others}) {
        if (!step->packages.empty()) {
            steps.push_back(step);
        }
    }
    if (steps.empty() && remove.empty()) {
        throw Error(ExitCode::usage, "nothing in " + in.venv.string() + " is built for another CUDA than " +
                                         target->label + ": no upgrade to draft");
    }
    if (steps.empty()) {
        s.others.name = "remove-other-cuda";
        steps.push_back(&s.others);
    }
    steps.front()->remove = remove;
    s.torch.comments = {"the PyTorch family: only PyTorch's own index has its " + target->label + " builds"};
    s.sglang.comments = {"SGLang's kernel, from SGLang's own index"};
    if (s.others.name != "remove-other-cuda") {
        s.others.comments = {"the rest built for another CUDA: check each name and where its CUDA " +
                             std::to_string(target->major) + " build lives"};
    }

    std::string out = "# A DRAFT of the upgrade of " + in.venv.string() + " to CUDA " + toolkit +
                      ", written by `stackup init --target-cuda " + toolkit + "`.\n"
                      "# Review every line marked \"check:\" (the index URLs, the toolkit's home), then run\n"
                      "# `stackup plan` on it: it proves every wheel exists before anything is touched.\n#\n";
    out += installed_block(in);
    if (!s.notes.empty()) {
        out += "#\n# Left as they are:\n";
        for (const auto& note : s.notes) {
            out += "#   " + note + "\n";
        }
    }
    out += head(in, in.venv.filename().string() + "-" + target->label);
    out += "cuda:\n  toolkit: \"" + toolkit + "\"\n";
    out += with_comment("  home: /usr/local/cuda-" + toolkit, 40,
                        "check: where the CUDA " + toolkit + " toolkit is; its bin/nvcc must report " + toolkit);
    out += "indexes:\n";
    std::set<std::string> used;
    for (const DraftStep* step : steps) {
        used.insert(step->index);
    }
    if (used.count("pytorch")) {
        out += with_comment("  pytorch: https://download.pytorch.org/whl/nightly/" + target->label, 56,
                            "check: PyTorch's nightly builds (stable: .../whl/" + target->label +
                                ", then drop prerelease)");
    }
    if (used.count("sglang")) {
        out += with_comment("  sglang: https://docs.sglang.ai/whl/" + target->label, 56,
                            "check: SGLang's kernel index for " + target->label);
    }
    out += with_comment("  pypi: https://pypi.example/simple", 56, "check: placeholder: PyPI, or your mirror of it");
    out += with_comment("default_index: pypi", 56, "dependencies not on a step's own index come from here");
    out += "steps:\n";
    for (const DraftStep* step : steps) {
        out += render_step(*step);
    }
    if (!s.sglang.packages.empty()) {
        out += with_comment("allow_unmet: [sgl-kernel]", 56, "deps: false leaves its declared dependencies out on purpose");
    }
    if (std::find(s.torch.packages.begin(), s.torch.packages.end(), "torch") != s.torch.packages.end()) {
        out += "checks:\n  - name: torch reports CUDA " + toolkit + "\n";
        out += "    python: \"import torch; assert torch.version.cuda == '" + toolkit + "', torch.version.cuda\"\n";
    }
    return out;
}

}  // namespace stackup::plan

// The upgrade draft (`stackup init --target-cuda`): the dists built for another CUDA, moved to the target's.
#include "plan/draft.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "base/error.hpp"
#include "manifest/yaml_scalar.hpp"
#include "plan/draft_parts.hpp"

namespace stackup::plan {
namespace {

using detail::Group;
using detail::Known;
using detail::Tracked;
using detail::describe_flavour;
using detail::head;
using detail::inline_list;
using detail::inline_map;
using detail::installed_block;
using detail::known;
using detail::tracked_dists;
using detail::with_comment;

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
    out += "  - name: " + manifest::yaml_scalar(s.name) + "\n";
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
            out += with_comment("      - " + manifest::yaml_scalar(pattern), 40, what);
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
        fields.push_back({"local", manifest::yaml_scalar(target.label)});
    }
    if (name == "torch") {
        fields.push_back({"cuda", "\"" + cuda + "\""});
    }
    std::string comment = t.local.empty() && k != nullptr && (!t.flavour || t.flavour->label.empty())
                              ? was + ": check the new build's label, e.g. local: " + target.label
                              : was;
    auto expect_line = [&] { return manifest::yaml_scalar(name) + ": " + inline_map(fields); };
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
        s.others.expect.push_back({manifest::yaml_scalar(name) + ": {version: \"" + spec + "\"}", was});
        return;
    }
    s.marked.push_back(&t);
    std::string renamed = renamed_for(name, target.major);
    if (!renamed.empty() && name.rfind("nvidia-", 0) != 0 && renamed != name) {
        s.others.packages.push_back(renamed);
        s.others.expect.push_back({manifest::yaml_scalar(renamed) + ": {}", "replaces " + t.dist->name + " " + t.dist->version});
    }
}

// The steps an upgrade draft lists, in order (torch, sglang, the rest), the removals in the first;
// a usage error when nothing in the venv is built for another CUDA.
std::vector<DraftStep*> ordered_steps(UpgradeSteps& s, const DraftInput& in, const verify::CudaTarget& target) {
    auto remove = removals(s.marked);
    std::vector<DraftStep*> steps;
    for (DraftStep* step : {&s.torch, &s.sglang, &s.others}) {
        if (!step->packages.empty()) {
            steps.push_back(step);
        }
    }
    if (steps.empty() && remove.empty()) {
        throw Error(ExitCode::usage, "nothing in " + in.venv.string() + " is built for another CUDA than " +
                                         target.label + ": no upgrade to draft");
    }
    if (steps.empty()) {
        s.others.name = "remove-other-cuda";
        steps.push_back(&s.others);
    }
    steps.front()->remove = remove;
    s.torch.comments = {"the PyTorch family: only PyTorch's own index has its " + target.label + " builds"};
    s.sglang.comments = {"SGLang's kernel, from SGLang's own index"};
    if (s.others.name != "remove-other-cuda") {
        s.others.comments = {"the rest built for another CUDA: check each name and where its CUDA " +
                             std::to_string(target.major) + " build lives"};
    }
    return steps;
}

// The `indexes:` section: the own index of each step that uses one, PyPI, and the default.
std::string upgrade_indexes(const std::vector<DraftStep*>& steps, const verify::CudaTarget& target) {
    std::string out = "indexes:\n";
    std::set<std::string> used;
    for (const DraftStep* step : steps) {
        used.insert(step->index);
    }
    if (used.count("pytorch")) {
        out += with_comment("  pytorch: https://download.pytorch.org/whl/nightly/" + target.label, 56,
                            "check: PyTorch's nightly builds (stable: .../whl/" + target.label +
                                ", then drop prerelease)");
    }
    if (used.count("sglang")) {
        out += with_comment("  sglang: https://docs.sglang.ai/whl/" + target.label, 56,
                            "check: SGLang's kernel index for " + target.label);
    }
    out += with_comment("  pypi: https://pypi.example/simple", 56, "check: placeholder: PyPI, or your mirror of it");
    out += with_comment("default_index: pypi", 56, "dependencies not on a step's own index come from here");
    return out;
}

}  // namespace

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
    std::vector<DraftStep*> steps = ordered_steps(s, in, *target);
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
    out += upgrade_indexes(steps, *target);
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

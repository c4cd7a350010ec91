// What the plan predicts of the venv after its steps (predicted_state), and the verdict the
// verifier will give on the end state's CUDA builds (end_state_problem, untargeted_mix).

#include <map>
#include <optional>

#include "base/text.hpp"
#include "plan/planner.hpp"
#include "verify/verify.hpp"

namespace stackup::plan {

std::vector<venv::Distribution> predicted_state(const venv::Facts& facts, const Plan& plan, std::size_t through) {
    std::map<std::string, venv::Distribution> state;
    for (const auto& d : facts.distributions) {
        state[d.normalized] = d;
    }
    for (std::size_t i = 0; i <= through && i < plan.steps.size(); ++i) {
        for (const auto& r : plan.steps[i].removals) {
            state.erase(r.name);
        }
        for (const auto& p : plan.steps[i].packages) {
            if (!p.choice) {
                continue;
            }
            std::string version = p.choice->wheel.version.str();
            auto it = state.find(p.name);
            if (it == state.end() || it->second.version != version) {  // a reinstall keeps its requirements
                state[p.name] = {p.name, p.name, version, {}};
            }
        }
    }
    std::vector<venv::Distribution> out;
    for (auto& [_, d] : state) {
        out.push_back(std::move(d));
    }
    return out;
}

std::vector<venv::Distribution> predicted_end_state(const venv::Facts& facts, const Plan& plan) {
    return predicted_state(facts, plan, plan.steps.size());
}

namespace {

// The step that brings a leftover's replacement (same family, the target's
// CUDA); else the first step that installs anything for the target; else the last.
std::size_t step_for(const verify::CudaFlavour& leftover, const Plan& plan, const verify::CudaTarget& target) {
    std::optional<std::size_t> first_target;
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
        for (const auto& p : plan.steps[i].packages) {
            auto flavour = p.choice ? verify::cuda_flavour(p.name, p.choice->wheel.version.str()) : std::nullopt;
            if (!flavour || verify::is_other_cuda(*flavour, target)) {
                continue;
            }
            if (flavour->family == leftover.family) {
                return i;
            }
            first_target = first_target.value_or(i);
        }
    }
    return first_target.value_or(plan.steps.size() - 1);
}

}  // namespace

std::string end_state_problem(const manifest::Manifest& m, const venv::Facts& facts, const Plan& plan) {
    auto target = verify::target_cuda(m);
    if (!target || plan.steps.empty()) {
        return "";
    }
    auto end = predicted_end_state(facts, plan);
    auto scan = verify::scan_cuda(end, target, m.allow_mixed, {}, &facts.binaries);
    if (scan.mixed.empty()) {
        return "";
    }
    std::map<std::string, venv::Distribution> dists;
    for (const auto& d : end) {
        dists[d.normalized] = d;
    }
    std::map<std::size_t, std::vector<std::string>> by_step;
    std::vector<std::string> names;
    std::vector<std::string> labelled;  // a +cuXYZ build: its target build, installed by a step, also fixes it
    std::string out = "after the last step these would still be built for another CUDA than " + target->label +
                      " (uv never uninstalls a dist it did not replace):";
    for (const auto& x : scan.mixed) {
        out += "\n    " + x.dist + " " + x.found;
        auto flavour = *verify::cuda_build(dists[x.dist], &facts.binaries, target);
        by_step[step_for(flavour, plan, *target)].push_back(x.dist);
        names.push_back(x.dist);
        if (!flavour.label.empty()) {
            labelled.push_back(x.dist);
        }
    }
    if (!labelled.empty()) {
        out += "\n  to upgrade them too, add to a step's packages (with a " + target->label + " build on its index): " +
               base::join(labelled);
    }
    out += "\n  to remove them, add to the manifest:";
    for (const auto& [i, dists] : by_step) {
        auto all = m.steps[i].remove;
        all.insert(all.end(), dists.begin(), dists.end());
        out += "\n    step '" + m.steps[i].name + "':  remove: [" + base::join(all) + "]";
    }
    out += "\n  or, to keep them as they are:  allow_mixed: [" + base::join(names) + "]";
    out += "\n  (a CUDA " + std::to_string(target->major) +
           " replacement that comes as a dependency is not known to the plan; the check after each step judges it)";
    return out;
}


std::string untargeted_mix(const manifest::Manifest& m, const venv::Facts& facts, const Plan& plan) {
    if (verify::target_cuda(m)) {
        return "";  // with a target, end_state_problem judges
    }
    auto scan = verify::scan_cuda(predicted_end_state(facts, plan), std::nullopt, m.allow_mixed, {}, &facts.binaries);
    if (scan.seen.size() < 2) {
        return "";
    }
    return "no target CUDA is given (cuda.toolkit, or an expectation's local label), and after the last step "
           "builds for several CUDAs would stand side by side: " +
           verify::describe_seen(scan) + "; nothing will judge them";
}

}  // namespace stackup::plan

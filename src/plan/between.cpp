// What the plan can tell of requirements between steps: the venv's own Requires-Dist lines
// against the versions each step pins (README, "Requirements between steps").

#include <map>
#include <set>
#include <utility>

#include "plan/planner.hpp"

namespace stackup::plan {
namespace {

std::string text_of(const manifest::Manifest& m, const PredictedBreak& p) {
    std::string out = "after step '" + m.steps[p.step].name + "': " + verify::describe(p.broken) + "; ";
    if (p.accepted) {
        return out + "accepted: allow_unmet lists " + p.broken.dist;
    }
    if (p.gone) {
        bool by_rule = p.repair.by == verify::Repair::By::step && m.steps[*p.gone].name == p.repair.step;
        return out + "step '" + m.steps[*p.gone].name + "' " +
               (by_rule ? p.repair.how : std::string("changes what it needs")) +
               ": expected to repair it (checked after that step)";
    }
    switch (p.repair.by) {
        case verify::Repair::By::step:
            return out + "step '" + p.repair.step + "' " + p.repair.how +
                   ", but as far as the plan knows it is still broken after the last step: apply fails then, "
                   "unless what that step or uv brings repairs it";
        case verify::Repair::By::dependencies:
            return out + "no later step names " + p.broken.dist + " or " + p.broken.required +
                   "; a dependency uv adds in a later step may repair it, else apply fails after the last step "
                   "(to accept it, add " + p.broken.dist + " to allow_unmet)";
        case verify::Repair::By::nothing: break;
    }
    return out + "nothing after it changes " + p.broken.dist + " or " + p.broken.required +
           ": apply will fail there (to accept it, add " + p.broken.dist + " to allow_unmet)";
}

}  // namespace

std::vector<PredictedBreak> predicted_breaks(const manifest::Manifest& m, const venv::Facts& facts, const Plan& plan) {
    const auto baseline = verify::broken_requirements(facts.distributions, facts.markers);
    std::vector<PredictedBreak> out;
    std::map<std::pair<std::string, std::string>, std::size_t> open;  // (dist, requirement) -> index in out
    for (std::size_t i = 0; i < plan.steps.size() && i < m.steps.size(); ++i) {
        auto state = predicted_state(facts, plan, i);
        std::set<std::pair<std::string, std::string>> now;
        for (auto& v : verify::judge_breakage(m, i, baseline, verify::broken_requirements(state, facts.markers))) {
            std::pair key{v.broken.dist, v.broken.requirement};
            now.insert(key);
            if (!open.count(key)) {
                open[key] = out.size();
                out.push_back({i, std::move(v.broken), std::move(v.repair), v.accepted, std::nullopt, ""});
            }
        }
        for (auto it = open.begin(); it != open.end();) {
            if (now.count(it->first)) {
                ++it;
            } else {
                out[it->second].gone = i;
                it = open.erase(it);
            }
        }
    }
    for (auto& p : out) {
        p.text = text_of(m, p);
    }
    return out;
}

}  // namespace stackup::plan

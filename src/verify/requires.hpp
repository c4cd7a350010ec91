#pragma once
// `pip check`, pure: every installed dist's Requires-Dist against what is installed.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "venv/probe.hpp"

namespace stackup::verify {

struct BrokenRequirement {
    std::string dist;          // normalized name of the dist that declares the requirement
    std::string version;       // its installed version
    std::string requirement;   // the Requires-Dist line as written (marker included)
    std::string problem;       // "not installed" | "2.3.1 is installed" | "unreadable requirement: ..."
    friend bool operator==(const BrokenRequirement&, const BrokenRequirement&) = default;
};

// Every installed dist's Requires-Dist (venv::Distribution::requires_dist) against what is installed,
// markers evaluated with `markers` and extra "" (so requirements only for an extra are skipped, as
// pip check does); specifiers admit pre-releases, and one without a local label admits any local
// label. A "name @ url" requirement only asks for presence. Sorted by dist then requirement.
std::vector<BrokenRequirement> broken_requirements(const std::vector<venv::Distribution>& dists,
                                                   const std::map<std::string, std::string>& markers);

// What `after` breaks that `before` did not: identity is (dist, requirement); a venv that was already
// inconsistent must not fail every apply.
std::vector<BrokenRequirement> new_breakage(const std::vector<BrokenRequirement>& before,
                                            const std::vector<BrokenRequirement>& after);

// The installed dists whose import can differ once `changed` (normalized names) changed: those
// and every dist that requires one of them, directly or through others (Requires-Dist, markers
// and extras ignored: more, never fewer). Normalized names.
std::set<std::string> affected_by(const std::vector<venv::Distribution>& dists, const std::set<std::string>& changed);

// "cuda-bindings 12.9.10 requires cuda-pathfinder~=1.1: not installed"
std::string describe(const BrokenRequirement& b);

}  // namespace stackup::verify

#pragma once
// `pip check`, pure: every installed dist's Requires-Dist against what is installed, and the
// rule for a multi-step apply: a requirement broken between steps that a later step can still
// repair is shown, not failed; after the last step nothing newly broken passes (README,
// "Requirements between steps").

#include <map>
#include <set>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "venv/probe.hpp"

namespace stackup::verify {

struct BrokenRequirement {
    std::string dist;          // normalized name of the dist that declares the requirement
    std::string version;       // its installed version
    std::string requirement;   // the Requires-Dist line as written (marker included)
    std::string problem;       // "not installed" | "2.3.1 is installed" | "unreadable requirement: ..."
    std::string required;      // normalized name of the dist the requirement names ("" when unreadable)
    std::string installed;     // that dist's installed version ("" when not installed, or unreadable)
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

// Who can still repair a requirement broken after step `last`, before the run ends.
struct Repair {
    enum class By {
        nothing,       // no later step can change either dist: the outcome is certain
        step,          // `step` names the broken dist or the one it requires (or removes the broken one)
        dependencies,  // no later step names them, but one installs with dependencies: uv may change them
    };
    By by = By::nothing;
    std::string step;  // By::step: that step's name
    std::string how;   // By::step: "installs pandas" | "removes pandas"
    friend bool operator==(const Repair&, const Repair&) = default;
};

// The rule, after step `last` (0-based) of `m`: the first later step whose packages name
// `b.dist` or `b.required`, or whose `remove:` matches `b.dist`; else, when a later step installs
// packages with dependencies (deps not false), By::dependencies; else By::nothing. After the last
// step there is no later one: By::nothing.
Repair repair_of(const manifest::Manifest& m, std::size_t last, const BrokenRequirement& b);

// One newly broken requirement after a step, and what becomes of it.
struct RequirementVerdict {
    BrokenRequirement broken;
    Repair repair;          // who can repair it (By::nothing after the last step)
    bool accepted = false;  // allow_unmet names its dist
    bool final = false;     // judged after the last step
    // Fails the step: no later step can repair it and allow_unmet does not name its dist.
    bool fails() const { return repair.by == Repair::By::nothing && !accepted; }
    friend bool operator==(const RequirementVerdict&, const RequirementVerdict&) = default;
};

// What `after` newly breaks (against `baseline`, the venv before the apply), judged after step
// `last` of `m` by repair_of and allow_unmet. In the order of new_breakage.
std::vector<RequirementVerdict> judge_breakage(const manifest::Manifest& m, std::size_t last,
                                               const std::vector<BrokenRequirement>& baseline,
                                               const std::vector<BrokenRequirement>& after);

// "pandas 2.1.4 requires numpy<2,>=1.23.2 (python_version == \"3.11\"), but numpy 2.2.6 is installed";
// "..., but cuda-pathfinder is not installed"; "odd 0.1 has an unreadable requirement '[broken': ..."
std::string describe(const BrokenRequirement& b);
// describe(v.broken) and what becomes of it: " (to be repaired by step 'pandas', which installs pandas)",
// " (accepted: allow_unmet lists pandas)", " (to accept it, add pandas to allow_unmet)", ...
std::string describe(const RequirementVerdict& v);

}  // namespace stackup::verify

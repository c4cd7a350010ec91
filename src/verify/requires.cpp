// pip check's rules: a requirement whose marker is false (with extra "") is skipped; one that
// cannot be read is reported, not thrown, so one odd dist does not hide what else is broken.

#include "verify/requires.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "pep/marker.hpp"
#include "pep/name.hpp"
#include "pep/requirement.hpp"

namespace stackup::verify {

namespace {

using Installed = std::map<std::string, std::string>;  // normalized name -> version

std::string normalized_of(const venv::Distribution& d) {
    return d.normalized.empty() ? pep::normalize_name(d.name) : d.normalized;
}

// What is wrong with one Requires-Dist line of `dist`; nullopt when nothing is, or when it does
// not apply here.
std::optional<BrokenRequirement> problem_of(const venv::Distribution& dist, const std::string& line,
                                            const Installed& installed, const pep::MarkerEnvironment& env) {
    BrokenRequirement b{normalized_of(dist), dist.version, line, "", "", ""};
    std::string error;
    auto req = pep::parse_requirement(line, &error);
    if (!req) {
        b.problem = "unreadable requirement: " + error;
        return b;
    }
    if (!req->marker.empty()) {
        auto applies = pep::evaluate_marker(req->marker, env, &error);
        if (!applies) {
            b.problem = "unreadable requirement: " + error;
            return b;
        }
        if (!*applies) {
            return std::nullopt;
        }
    }
    b.required = req->normalized_name();
    auto it = installed.find(b.required);
    if (it == installed.end()) {
        b.problem = "not installed";
        return b;
    }
    // A "name @ url" requirement has no specifier, so this asks for presence only.
    if (!req->specifier.contains(it->second, pep::Prereleases::allow)) {
        b.installed = it->second;
        b.problem = it->second + " is installed";
        return b;
    }
    return std::nullopt;
}

// "numpy<2,>=1.23.2; python_version == '3.11'" -> "numpy<2,>=1.23.2 (python_version == '3.11')",
// spelled as the metadata wrote it.
std::string readable(const std::string& line) {
    auto req = pep::parse_requirement(line);
    if (!req || req->marker.empty()) {
        return line;
    }
    std::string head = line;
    while (!head.empty() && std::isspace(static_cast<unsigned char>(head.back()))) {
        head.pop_back();
    }
    if (head.size() < req->marker.size() || head.compare(head.size() - req->marker.size(), std::string::npos, req->marker) != 0) {
        return line;
    }
    head.resize(head.size() - req->marker.size());
    while (!head.empty() && (head.back() == ';' || std::isspace(static_cast<unsigned char>(head.back())))) {
        head.pop_back();
    }
    return head + " (" + req->marker + ")";
}

// What step `s` does to the dists `b` names: "installs X" / "removes X"; "" when nothing.
std::string touches(const manifest::Step& s, const BrokenRequirement& b) {
    for (const auto& req : s.packages) {
        auto name = req.normalized_name();
        if (name == b.dist || (!b.required.empty() && name == b.required)) {
            return "installs " + name;
        }
    }
    for (const auto& pattern : s.remove) {
        if (manifest::removal_matches(pattern, b.dist)) {
            return "removes " + b.dist;
        }
    }
    return "";
}

auto key_of(const BrokenRequirement& b) { return std::tie(b.dist, b.requirement, b.version, b.problem); }

}  // namespace

std::vector<BrokenRequirement> broken_requirements(const std::vector<venv::Distribution>& dists,
                                                   const std::map<std::string, std::string>& markers) {
    pep::MarkerEnvironment env = markers;
    env["extra"] = "";
    Installed installed;
    for (const auto& d : dists) {
        installed.emplace(normalized_of(d), d.version);
    }
    std::vector<BrokenRequirement> broken;
    for (const auto& d : dists) {
        for (const auto& line : d.requires_dist) {
            if (auto b = problem_of(d, line, installed, env)) {
                broken.push_back(std::move(*b));
            }
        }
    }
    std::sort(broken.begin(), broken.end(), [](const auto& a, const auto& b) { return key_of(a) < key_of(b); });
    broken.erase(std::unique(broken.begin(), broken.end()), broken.end());  // a line listed twice
    return broken;
}

std::set<std::string> affected_by(const std::vector<venv::Distribution>& dists, const std::set<std::string>& changed) {
    std::map<std::string, std::vector<std::string>> required_by;  // dist -> the dists that require it
    for (const auto& d : dists) {
        for (const auto& line : d.requires_dist) {
            if (auto req = pep::parse_requirement(line)) {
                required_by[req->normalized_name()].push_back(normalized_of(d));
            }
        }
    }
    std::set<std::string> out = changed;
    std::vector<std::string> todo(changed.begin(), changed.end());
    while (!todo.empty()) {
        const std::string name = todo.back();
        todo.pop_back();
        for (const auto& dependent : required_by[name]) {
            if (out.insert(dependent).second) {
                todo.push_back(dependent);
            }
        }
    }
    return out;
}

std::vector<BrokenRequirement> new_breakage(const std::vector<BrokenRequirement>& before,
                                            const std::vector<BrokenRequirement>& after) {
    std::set<std::pair<std::string, std::string>> known;
    for (const auto& b : before) {
        known.emplace(b.dist, b.requirement);
    }
    std::vector<BrokenRequirement> fresh;
    std::copy_if(after.begin(), after.end(), std::back_inserter(fresh),
                 [&](const BrokenRequirement& b) { return !known.contains({b.dist, b.requirement}); });
    return fresh;
}

Repair repair_of(const manifest::Manifest& m, std::size_t last, const BrokenRequirement& b) {
    Repair out;
    for (std::size_t i = last + 1; i < m.steps.size(); ++i) {
        if (auto how = touches(m.steps[i], b); !how.empty()) {
            return {Repair::By::step, m.steps[i].name, how};
        }
        if (m.steps[i].deps && !m.steps[i].packages.empty()) {
            out.by = Repair::By::dependencies;
        }
    }
    return out;
}

std::vector<RequirementVerdict> judge_breakage(const manifest::Manifest& m, std::size_t last,
                                               const std::vector<BrokenRequirement>& baseline,
                                               const std::vector<BrokenRequirement>& after) {
    std::vector<RequirementVerdict> out;
    for (auto& b : new_breakage(baseline, after)) {
        bool accepted = std::find(m.allow_unmet.begin(), m.allow_unmet.end(), b.dist) != m.allow_unmet.end();
        Repair repair = repair_of(m, last, b);
        out.push_back({std::move(b), std::move(repair), accepted, last + 1 >= m.steps.size()});
    }
    return out;
}

std::string describe(const BrokenRequirement& b) {
    std::string head = b.dist + " " + b.version;
    if (b.required.empty()) {
        return head + " has an " + b.problem;  // "unreadable requirement: ..."
    }
    return head + " requires " + readable(b.requirement) + ", but " + b.required +
           (b.installed.empty() ? " is not installed" : " " + b.installed + " is installed");
}

std::string describe(const RequirementVerdict& v) {
    std::string out = describe(v.broken);
    const std::string& dist = v.broken.dist;
    if (v.accepted) {
        return out + " (accepted: allow_unmet lists " + dist + ")";
    }
    switch (v.repair.by) {
        case Repair::By::step:
            return out + " (to be repaired by step '" + v.repair.step + "', which " + v.repair.how + ")";
        case Repair::By::dependencies:
            return out + " (no later step names " + dist + (v.broken.required.empty() ? "" : " or " + v.broken.required) +
                   ", but a later step installs dependencies, which may repair it; judged again after each step)";
        case Repair::By::nothing: break;
    }
    std::string fix = "to accept it, add " + dist + " to allow_unmet)";
    if (v.final) {
        return out + " (" + fix;
    }
    return out + " (no later step can repair it: none installs " + dist +
           (v.broken.required.empty() ? "" : " or " + v.broken.required) + ", removes " + dist +
           " or installs dependencies; " + fix;
}

}  // namespace stackup::verify

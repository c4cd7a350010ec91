// pip check's rules: a requirement whose marker is false (with extra "") is skipped; one that
// cannot be read is reported, not thrown, so one odd dist does not hide what else is broken.

#include "verify/requires.hpp"

#include <algorithm>
#include <iterator>
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

// What is wrong with one Requires-Dist line; "" when nothing is, or when it does not apply here.
std::string problem_of(std::string_view line, const Installed& installed, const pep::MarkerEnvironment& env) {
    std::string error;
    auto req = pep::parse_requirement(line, &error);
    if (!req) {
        return "unreadable requirement: " + error;
    }
    if (!req->marker.empty()) {
        auto applies = pep::evaluate_marker(req->marker, env, &error);
        if (!applies) {
            return "unreadable requirement: " + error;
        }
        if (!*applies) {
            return "";
        }
    }
    auto it = installed.find(req->normalized_name());
    if (it == installed.end()) {
        return "not installed";
    }
    // A "name @ url" requirement has no specifier, so this asks for presence only.
    if (!req->specifier.contains(it->second, pep::Prereleases::allow)) {
        return it->second + " is installed";
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
            std::string problem = problem_of(line, installed, env);
            if (!problem.empty()) {
                broken.push_back({normalized_of(d), d.version, line, std::move(problem)});
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

std::string describe(const BrokenRequirement& b) {
    return b.dist + " " + b.version + " requires " + b.requirement + ": " + b.problem;
}

}  // namespace stackup::verify

#include "plan/planner.hpp"

#include <algorithm>

#include <map>

#include "base/text.hpp"
#include "pep/marker.hpp"
#include "pep/tags.hpp"
#include "venv/platform.hpp"
#include "verify/verify.hpp"

namespace stackup::plan {
namespace {

const index::ProjectPage* page_of(const std::vector<index::ProjectPage>& pages, const std::string& index,
                                  const std::string& project) {
    for (const auto& p : pages) {
        if (p.request.index == index && p.request.project == project) {
            return &p;
        }
    }
    return nullptr;
}

const manifest::Expectation* expectation_of(const manifest::Step& step, const std::string& dist) {
    for (const auto& e : step.expect) {
        if (e.dist == dist) {
            return &e;
        }
    }
    return nullptr;
}

// The requirement narrowed by the step's expectation: a version the expectation
// rules out would only fail after the install, so it is never chosen.
pep::Requirement narrowed(const pep::Requirement& req, const manifest::Expectation* e) {
    pep::Requirement out = req;
    if (e != nullptr && e->version) {
        std::string joined = req.specifier.str();
        joined += (joined.empty() ? "" : ",") + e->version->str();
        if (auto both = pep::SpecifierSet::parse(joined)) {
            out.specifier = *both;
        }
    }
    return out;
}

// Where else the package is, for the message.
std::string found_elsewhere(const manifest::Manifest& m, const std::vector<index::ProjectPage>& pages,
                            const std::string& project) {
    std::vector<std::string> on;
    for (const auto& [name, _] : m.indexes) {
        const auto* p = page_of(pages, name, project);
        if (p != nullptr && p->outcome == base::HttpOutcome::ok && p->file_count > 0) {
            on.push_back("'" + name + "'");
        }
    }
    if (on.empty()) {
        return "it is on none of this manifest's indexes";
    }
    std::string out = "it is on ";
    for (std::size_t i = 0; i < on.size(); ++i) {
        out += (i ? ", " : "") + on[i];
    }
    return out;
}

// What select_wheel is asked for package `req` of `step`, on whichever index has it.
index::SelectRequest request_of(const manifest::Step& step, const pep::Requirement& req, const venv::Facts& facts,
                                const SelectionTarget& target) {
    const auto* e = expectation_of(step, req.normalized_name());
    return {narrowed(req, e), step.prerelease, e ? e->local : std::nullopt, target.python, target.python_tag,
            facts.interpreter.machine, facts.interpreter.libc};
}

// The indexes uv looks at for a step's packages, in its order.
std::vector<std::string> order_of(const manifest::Manifest& m, const manifest::Step& step) {
    std::vector<std::string> order{step.index};
    if (m.default_index && *m.default_index != step.index) {
        order.push_back(*m.default_index);
    }
    return order;
}

struct Context {
    const manifest::Manifest& m;
    const venv::Facts& facts;
    const std::vector<index::ProjectPage>& pages;
    const Picker* picker;
    SelectionTarget target;
};

PlannedPackage plan_package(const Context& c, std::size_t s, std::size_t j) {
    const manifest::Step& step = c.m.steps[s];
    const pep::Requirement& req = step.packages[j];
    PlannedPackage out;
    out.name = req.normalized_name();
    out.requirement = req.str();
    if (const auto* d = c.facts.find(out.name)) {
        out.installed = d->version;
    }
    const auto request = request_of(step, req, c.facts, c.target);
    const auto order = order_of(c.m, step);
    std::vector<std::string> misses;
    for (const auto& index_name : order) {
        const auto* page = page_of(c.pages, index_name, out.name);
        if (page == nullptr) {
            misses.push_back("not asked of index '" + index_name + "'");
            continue;
        }
        if (page->outcome != base::HttpOutcome::ok && page->outcome != base::HttpOutcome::not_found) {
            // uv would stop here too: an index that fails is not "not there". One that answered
            // with something that is not a page (truncated, another type) is told apart.
            const bool answered =
                page->outcome == base::HttpOutcome::fatal && page->status >= 200 && page->status < 300;
            out.problem = "index '" + index_name + "' " +
                          (answered ? "answered for " + out.name + " with no page stackup can read: "
                                    : "did not answer for " + out.name + ": ") +
                          page->error;
            return out;
        }
        if (page->outcome == base::HttpOutcome::not_found) {
            misses.push_back("not on index '" + index_name + "' (" + std::to_string(page->status) + ")");
            continue;
        }
        // uv's first-index strategy: the first index that has the project decides.
        const auto* picked = c.picker ? c.picker->picked(s, j, index_name) : nullptr;
        auto selection = picked ? *picked : index::select_wheel(page->files, request, c.target.tags);
        if (selection.chosen) {
            out.index = index_name;
            out.choice = std::move(selection.chosen);
        } else {
            out.problem = selection.why_none + " (index '" + index_name + "')";
        }
        return out;
    }
    out.problem = out.name + " is " + misses.front();
    for (std::size_t i = 1; i < misses.size(); ++i) {
        out.problem += ", " + misses[i];
    }
    out.problem += "; " + found_elsewhere(c.m, c.pages, out.name);
    return out;
}

}  // namespace

std::string PlannedPackage::pin(const pep::Requirement& requirement) const {
    if (!choice) {
        return requirement.str();
    }
    std::string out = requirement.name;
    if (!requirement.extras.empty()) {
        out += "[";
        for (std::size_t i = 0; i < requirement.extras.size(); ++i) {
            out += (i ? "," : "") + requirement.extras[i];
        }
        out += "]";
    }
    out += "==" + choice->wheel.version.str();
    if (!requirement.marker.empty()) {
        out += "; " + requirement.marker;
    }
    return out;
}

std::string PlannedPackage::change() const {
    if (!skipped.empty()) {
        return "skip";
    }
    if (!choice) {
        return "none";
    }
    if (installed.empty()) {
        return "new";
    }
    auto now = pep::Version::parse(installed);
    const auto& next = choice->wheel.version;
    if (!now || *now == next) {
        return "reinstall";
    }
    return next > *now ? "upgrade" : "downgrade";
}

std::vector<index::PageRequest> pages_needed(const manifest::Manifest& m) {
    std::vector<index::PageRequest> out;
    auto add = [&](const std::string& index, const std::string& project) {
        auto same = [&](const index::PageRequest& r) { return r.index == index && r.project == project; };
        if (std::none_of(out.begin(), out.end(), same)) {
            out.push_back({index, m.indexes.at(index), project});
        }
    };
    for (const auto& step : m.steps) {
        for (const auto& req : step.packages) {
            add(step.index, req.normalized_name());
            if (m.default_index) {
                add(*m.default_index, req.normalized_name());
            }
        }
    }
    return out;
}

std::vector<index::PageRequest> pages_elsewhere(const manifest::Manifest& m,
                                                const std::vector<index::ProjectPage>& pages) {
    std::vector<index::PageRequest> out;
    for (const auto& step : m.steps) {
        for (const auto& req : step.packages) {
            std::string project = req.normalized_name();
            bool found = std::any_of(pages.begin(), pages.end(), [&](const index::ProjectPage& p) {
                return p.request.project == project && p.outcome == base::HttpOutcome::ok;
            });
            if (found) {
                continue;
            }
            for (const auto& entry : m.indexes) {
                // A named reference, not a structured binding: clang before 16 cannot capture those.
                const std::string& name = entry.first;
                auto asked = [&](const index::ProjectPage& p) { return p.request.index == name && p.request.project == project; };
                auto queued = [&](const index::PageRequest& r) { return r.index == name && r.project == project; };
                if (std::none_of(pages.begin(), pages.end(), asked) && std::none_of(out.begin(), out.end(), queued)) {
                    out.push_back({name, entry.second, project});
                }
            }
        }
    }
    return out;
}

SelectionTarget::SelectionTarget(const venv::Facts& facts)
    : tags(pep::supported_tags(venv::tag_interpreter(facts.interpreter))),
      python(pep::Version::parse(facts.interpreter.version).value_or(*pep::Version::parse("0"))),
      python_tag(venv::tag_interpreter(facts.interpreter).abi) {}

Picker::Picker(const manifest::Manifest& m, const venv::Facts& facts) : m_(m), facts_(facts), target_(facts) {}

void Picker::operator()(index::ProjectPage& page) {
    for (std::size_t s = 0; s < m_.steps.size(); ++s) {
        const auto& step = m_.steps[s];
        const auto order = order_of(m_, step);
        if (std::find(order.begin(), order.end(), page.request.index) == order.end()) {
            continue;
        }
        for (std::size_t j = 0; j < step.packages.size(); ++j) {
            if (step.packages[j].normalized_name() == page.request.project) {
                picked_[{s, j, page.request.index}] =
                    index::select_wheel(page.files, request_of(step, step.packages[j], facts_, target_), target_.tags);
            }
        }
    }
    std::vector<index::IndexFile>().swap(page.files);  // `files = {}` would keep the buffer
}

const index::Selection* Picker::picked(std::size_t step, std::size_t package, const std::string& index) const {
    auto it = picked_.find({step, package, index});
    return it == picked_.end() ? nullptr : &it->second;
}

Plan make_plan(const manifest::Manifest& m, const venv::Facts& facts, const std::vector<index::ProjectPage>& pages,
               const Picker* picker) {
    Context c{m, facts, pages, picker, SelectionTarget(facts)};
    Plan plan;
    for (std::size_t s = 0; s < m.steps.size(); ++s) {
        const auto& step = m.steps[s];
        PlannedStep planned{step.name, step.index, resolve_removals(step, facts.distributions), {}};
        for (const auto& r : planned.removals) {
            if (r.name.empty()) {
                plan.notes.push_back("step '" + step.name + "': remove: " + r.pattern + " matches nothing installed");
            }
        }
        for (std::size_t j = 0; j < step.packages.size(); ++j) {
            const auto& req = step.packages[j];
            auto skip = marker_skip(req, facts);
            auto p = skip ? std::move(*skip) : plan_package(c, s, j);
            if (!p.skipped.empty() && expectation_of(step, p.name) != nullptr) {
                plan.warnings.push_back("step '" + step.name + "': " + p.name + " is skipped (" + p.skipped +
                                        ") although the step expects it");
            }
            if (!p.problem.empty()) {
                plan.problems.push_back("step '" + step.name + "': " + p.problem);
            } else if (p.choice) {
                for (const auto& w : p.choice->warnings) {
                    plan.warnings.push_back("step '" + step.name + "': " + w);
                }
            }
            planned.packages.push_back(std::move(p));
        }
        plan.steps.push_back(std::move(planned));
    }
    if (plan.ok()) {
        plan.end_state = end_state_problem(m, facts, plan);
        if (!plan.end_state.empty()) {
            plan.problems.push_back(plan.end_state);
        }
        if (auto mixed = untargeted_mix(m, facts, plan); !mixed.empty()) {
            plan.warnings.push_back(mixed);
        }
        plan.between = predicted_breaks(m, facts, plan);
    }
    return plan;
}

std::optional<PlannedPackage> marker_skip(const pep::Requirement& req, const venv::Facts& facts) {
    if (req.marker.empty()) {
        return std::nullopt;
    }
    auto env = facts.markers;
    env["extra"] = "";
    std::string error;
    auto holds = pep::evaluate_marker(req.marker, env, &error);
    if (holds && *holds) {
        return std::nullopt;
    }
    PlannedPackage out;
    out.name = req.normalized_name();
    out.requirement = req.str();
    if (const auto* d = facts.find(out.name)) {
        out.installed = d->version;
    }
    if (!holds) {
        out.problem = "the marker of " + out.requirement + " cannot be judged for this venv: " + error;
    } else {
        out.skipped = "marker is false for this venv: " + req.marker;
    }
    return out;
}

std::vector<PlannedRemoval> resolve_removals(const manifest::Step& step, const std::vector<venv::Distribution>& dists) {
    std::vector<PlannedRemoval> out;
    for (const auto& pattern : step.remove) {
        bool any = false;
        for (const auto& d : dists) {
            if (manifest::removal_matches(pattern, d.normalized)) {
                out.push_back({pattern, d.normalized, d.version});
                any = true;
            }
        }
        if (!any) {
            out.push_back({pattern, "", ""});
        }
    }
    return out;
}

}  // namespace stackup::plan

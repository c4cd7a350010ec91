#include "verify/verify.hpp"

#include <algorithm>
#include <regex>

#include "pep/name.hpp"
#include "pep/version.hpp"

namespace stackup::verify {
namespace {

using manifest::Expectation;

std::string installed_label(const venv::Distribution& d) {
    auto v = pep::Version::parse(d.version);
    return v ? v->local() : std::string();
}

void check_version(const ActiveExpectation& a, const venv::Distribution& d, std::vector<Mismatch>& out) {
    const Expectation& e = a.expectation;
    auto installed = pep::Version::parse(d.version);
    if (e.version && (!installed || !e.version->contains(*installed, pep::Prereleases::allow))) {
        out.push_back({a.step, e.dist, "version", e.version->str(), d.version});
    }
    if (e.local && (!installed || installed->local() != *e.local)) {
        std::string found = installed && !installed->local().empty() ? installed->local() : "no local label";
        out.push_back({a.step, e.dist, "local", *e.local, found + " (" + d.version + ")"});
    }
}

// The import must agree with the metadata: a module whose __version__ names
// another release means stale files shadow what was installed.
void check_module_version(const ActiveExpectation& a, const venv::Distribution& d, const venv::ImportResult& r,
                          std::vector<Mismatch>& out) {
    if (!r.version) {
        return;
    }
    auto reported = pep::Version::parse(*r.version);
    auto installed = pep::Version::parse(d.version);
    if (reported && installed && reported->without_local() != installed->without_local()) {
        out.push_back({a.step, a.expectation.dist, "__version__", d.version, *r.version});
    }
}

void check_import(const ActiveExpectation& a, const venv::Distribution& d, const venv::Facts& facts,
                  std::vector<Mismatch>& out) {
    const Expectation& e = a.expectation;
    const venv::ImportResult* r = facts.import_of(e.dist);
    if (r == nullptr) {
        out.push_back({a.step, e.dist, "import", "an import result", "none (probe did not run it)"});
        return;
    }
    if (r->error) {
        out.push_back({a.step, e.dist, "import", "import " + r->module + " succeeds", *r->error});
        return;
    }
    check_module_version(a, d, *r, out);
    if (e.cuda && r->cuda != e.cuda) {
        out.push_back({a.step, e.dist, "cuda", *e.cuda, r->cuda.value_or("None")});
    }
    for (const auto& [attr, want] : e.attrs) {
        auto got = r->attrs.find(attr);
        if (got == r->attrs.end()) {
            auto why = r->attr_errors.find(attr);
            out.push_back({a.step, e.dist, "attrs." + attr, want,
                           why == r->attr_errors.end() ? "not resolved" : why->second});
        } else if (got->second != want) {
            out.push_back({a.step, e.dist, "attrs." + attr, want, got->second});
        }
    }
}

std::optional<std::string> cuda_major_of_label(const std::string& label) {
    static const std::regex re("cu(\\d+?)(\\d)");
    std::smatch m;
    if (std::regex_match(label, m, re)) {
        return m[1].str();
    }
    return std::nullopt;
}

}  // namespace

std::string describe(const Mismatch& m) {
    std::string where = m.step.empty() ? "" : "step '" + m.step + "': ";
    return where + m.dist + ": " + m.field + ": expected " + m.expected + ", found " + m.found;
}

std::vector<ActiveExpectation> expectations_through(const manifest::Manifest& m, std::size_t last) {
    std::vector<ActiveExpectation> active;
    for (std::size_t i = 0; i <= last && i < m.steps.size(); ++i) {
        for (const auto& e : m.steps[i].expect) {
            auto same = [&](const ActiveExpectation& a) { return a.expectation.dist == e.dist; };
            active.erase(std::remove_if(active.begin(), active.end(), same), active.end());
            active.push_back({m.steps[i].name, e});
        }
    }
    return active;
}

std::vector<venv::ImportRequest> import_requests(const std::vector<ActiveExpectation>& active) {
    std::vector<venv::ImportRequest> requests;
    for (const auto& a : active) {
        std::vector<std::string> attrs;
        for (const auto& [attr, _] : a.expectation.attrs) {
            attrs.push_back(attr);
        }
        requests.push_back({a.expectation.dist, a.expectation.import_name.value_or(""), attrs});
    }
    return requests;
}

std::vector<Mismatch> check_expectations(const std::vector<ActiveExpectation>& active, const venv::Facts& facts) {
    std::vector<Mismatch> out;
    for (const auto& a : active) {
        const venv::Distribution* d = facts.find(a.expectation.dist);
        if (d == nullptr) {
            out.push_back({a.step, a.expectation.dist, "installed", "installed", "not installed"});
            continue;
        }
        check_version(a, *d, out);
        check_import(a, *d, facts, out);
    }
    return out;
}

std::optional<std::string> target_cuda_label(const manifest::Manifest& m) {
    if (m.cuda && !m.cuda->toolkit.empty()) {
        std::string label = "cu";
        for (char c : m.cuda->toolkit) {
            if (c != '.') {
                label.push_back(c);
            }
        }
        return label;
    }
    std::optional<std::string> found;
    for (const auto& step : m.steps) {
        for (const auto& e : step.expect) {
            if (e.local && cuda_major_of_label(*e.local)) {
                if (found && *found != *e.local) {
                    return std::nullopt;  // the expectations disagree: no single target
                }
                found = e.local;
            }
        }
    }
    return found;
}

std::vector<Mismatch> scan_mixed_cuda(const std::vector<venv::Distribution>& dists, const std::string& target,
                                      const std::vector<std::string>& allow_mixed) {
    static const std::regex nvidia_re("nvidia-.*-cu(\\d+)");
    auto target_major = cuda_major_of_label(target);
    std::vector<Mismatch> out;
    for (const auto& d : dists) {
        if (std::find(allow_mixed.begin(), allow_mixed.end(), d.normalized) != allow_mixed.end()) {
            continue;
        }
        std::string label = installed_label(d);
        if (cuda_major_of_label(label) && label != target) {
            out.push_back({"", d.normalized, "mixed-cuda", "a " + target + " build", d.version});
            continue;
        }
        std::smatch m;
        if (target_major && std::regex_match(d.normalized, m, nvidia_re) && m[1].str() != *target_major) {
            out.push_back({"", d.normalized, "mixed-cuda", "CUDA " + *target_major + " runtime wheels",
                           d.name + " " + d.version});
        }
    }
    return out;
}

std::vector<Mismatch> check_all(const manifest::Manifest& m, std::size_t last, const venv::Facts& facts) {
    auto out = check_expectations(expectations_through(m, last), facts);
    if (auto target = target_cuda_label(m)) {
        // A dist that a later step installs may still be the old build now.
        std::vector<std::string> exempt = m.allow_mixed;
        for (std::size_t i = last + 1; i < m.steps.size(); ++i) {
            for (const auto& req : m.steps[i].packages) {
                exempt.push_back(req.normalized_name());
            }
        }
        auto mixed = scan_mixed_cuda(facts.distributions, *target, exempt);
        out.insert(out.end(), mixed.begin(), mixed.end());
    }
    return out;
}

}  // namespace stackup::verify

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

void judge(std::vector<Judgement>& out, const ActiveExpectation& a, std::string field, std::string expected,
           std::string found, bool ok) {
    out.push_back({a.step, a.expectation.dist, std::move(field), std::move(expected), std::move(found), ok});
}

void judge_version(const ActiveExpectation& a, const venv::Distribution& d, std::vector<Judgement>& out) {
    const Expectation& e = a.expectation;
    auto installed = pep::Version::parse(d.version);
    if (e.version) {
        judge(out, a, "version", e.version->str(), d.version,
              installed && e.version->contains(*installed, pep::Prereleases::allow));
    }
    if (e.local) {
        bool ok = installed && installed->local() == *e.local;
        std::string found = installed && !installed->local().empty() ? installed->local() : "no local label";
        judge(out, a, "local", *e.local, ok ? found : found + " (" + d.version + ")", ok);
    }
}

// The import must agree with the metadata: a module whose __version__ names
// another release means stale files shadow what was installed.
void judge_module_version(const ActiveExpectation& a, const venv::Distribution& d, const venv::ImportResult& r,
                          std::vector<Judgement>& out) {
    if (!r.version) {
        return;
    }
    auto reported = pep::Version::parse(*r.version);
    auto installed = pep::Version::parse(d.version);
    if (reported && installed) {
        judge(out, a, "__version__", d.version, *r.version, reported->without_local() == installed->without_local());
    }
}

void judge_import(const ActiveExpectation& a, const venv::Distribution& d, const venv::Facts& facts,
                  std::vector<Judgement>& out) {
    const Expectation& e = a.expectation;
    const venv::ImportResult* r = facts.import_of(e.dist);
    if (r == nullptr) {
        judge(out, a, "import", "an import result", "none (probe did not run it)", false);
        return;
    }
    if (r->error) {
        judge(out, a, "import", "import " + r->module + " succeeds", *r->error, false);
        return;
    }
    judge(out, a, "import", "import " + r->module + " succeeds", "imported", true);
    judge_module_version(a, d, *r, out);
    if (e.cuda) {
        judge(out, a, "cuda", *e.cuda, r->cuda.value_or("None"), r->cuda == e.cuda);
    }
    for (const auto& [attr, want] : e.attrs) {
        auto got = r->attrs.find(attr);
        if (got == r->attrs.end()) {
            auto why = r->attr_errors.find(attr);
            judge(out, a, "attrs." + attr, want, why == r->attr_errors.end() ? "not resolved" : why->second, false);
        } else {
            judge(out, a, "attrs." + attr, want, got->second, got->second == want);
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

std::vector<Judgement> judge_expectations(const std::vector<ActiveExpectation>& active, const venv::Facts& facts) {
    std::vector<Judgement> out;
    for (const auto& a : active) {
        const venv::Distribution* d = facts.find(a.expectation.dist);
        if (d == nullptr) {
            judge(out, a, "installed", "installed", "not installed", false);
            continue;
        }
        judge(out, a, "installed", "installed", d->version, true);
        judge_version(a, *d, out);
        judge_import(a, *d, facts, out);
    }
    return out;
}

std::vector<Mismatch> failures(const std::vector<Judgement>& judgements) {
    std::vector<Mismatch> out;
    for (const auto& j : judgements) {
        if (!j.ok) {
            out.push_back({j.step, j.dist, j.field, j.expected, j.found});
        }
    }
    return out;
}

std::vector<Mismatch> check_expectations(const std::vector<ActiveExpectation>& active, const venv::Facts& facts) {
    return failures(judge_expectations(active, facts));
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

std::vector<Judgement> judge_all(const manifest::Manifest& m, std::size_t last, const venv::Facts& facts) {
    auto out = judge_expectations(expectations_through(m, last), facts);
    if (auto target = target_cuda_label(m)) {
        // A dist that a later step installs may still be the old build now.
        std::vector<std::string> exempt = m.allow_mixed;
        for (std::size_t i = last + 1; i < m.steps.size(); ++i) {
            for (const auto& req : m.steps[i].packages) {
                exempt.push_back(req.normalized_name());
            }
        }
        auto mixed = scan_mixed_cuda(facts.distributions, *target, exempt);
        for (const auto& x : mixed) {
            out.push_back({x.step, x.dist, x.field, x.expected, x.found, false});
        }
        if (mixed.empty()) {
            out.push_back({"", "", "mixed-cuda", "only " + *target + " builds", "no other CUDA build", true});
        }
    }
    return out;
}

std::vector<Mismatch> check_all(const manifest::Manifest& m, std::size_t last, const venv::Facts& facts) {
    return failures(judge_all(m, last, facts));
}

}  // namespace stackup::verify

#include "verify/verify.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "pep/name.hpp"
#include "pep/version.hpp"

namespace stackup::verify {
namespace {

using manifest::Expectation;

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

// Does a module's __version__ name the release its metadata names? Local labels count only when
// both carry one (flashinfer's module says 0.2.5+cu128torch2.6 of a plain 0.2.5); a release of two
// or more parts that is a prefix of the dist's, all else equal, agrees (cv2 says 4.9.0 of
// 4.9.0.80); numbers that are not PEP 440 agree only when equal as text.
bool module_version_agrees(const std::string& reported_text, const std::string& installed_text) {
    auto reported = pep::Version::parse(reported_text);
    auto installed = pep::Version::parse(installed_text);
    if (!reported || !installed) {
        return pep::strip_whitespace(reported_text) == pep::strip_whitespace(installed_text);
    }
    if (!reported->local().empty() && !installed->local().empty() && reported->local() != installed->local()) {
        return false;
    }
    const pep::Version r = reported->without_local();
    const pep::Version i = installed->without_local();
    if (r == i) {
        return true;
    }
    const auto& short_release = r.release();
    const auto& long_release = i.release();
    return r.epoch() == i.epoch() && r.pre() == i.pre() && r.post() == i.post() && r.dev() == i.dev() &&
           short_release.size() >= 2 && short_release.size() < long_release.size() &&
           std::equal(short_release.begin(), short_release.end(), long_release.begin());
}

std::string record_verdict(const venv::ImportResult& r) {
    using Record = venv::ImportResult::Record;
    switch (r.file_record) {
        case Record::matches:
            return r.file + " matches the dist's RECORD";
        case Record::differs:
            return r.file + " differs from the dist's RECORD";
        case Record::not_listed:
            return r.file + " is not in the dist's RECORD";
        case Record::no_record:
            return "the dist has no RECORD to check " + r.file + " against";
        case Record::unchecked:
            break;
    }
    return "not checked against the dist's RECORD";
}

// The import must agree with the metadata. A __version__ that does not is the module's own
// numbering (regex says 2.5.148 of 2024.11.6) only when the files imported are exactly the ones
// the dist installed; otherwise stale files shadow what was installed.
void judge_module_version(const ActiveExpectation& a, const venv::Distribution& d, const venv::ImportResult& r,
                          std::vector<Judgement>& out) {
    if (!r.version) {
        return;
    }
    if (module_version_agrees(*r.version, d.version)) {
        judge(out, a, "__version__", d.version, *r.version, true);
    } else if (r.file_record == venv::ImportResult::Record::matches) {
        judge(out, a, "__version__", d.version, *r.version + " (the module's own numbering: " + record_verdict(r) + ")",
              true);
    } else {
        judge(out, a, "__version__", d.version, *r.version + " (stale or shadowed module: " + record_verdict(r) + ")",
              false);
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
    if (!r->skipped.empty()) {
        judge(out, a, "import", "the dist's own module", "skipped (" + r->skipped + ")", true);
        const std::string nothing = "nothing imported (" + r->skipped + "); name a module with import:";
        if (e.cuda) {
            judge(out, a, "cuda", *e.cuda, nothing, false);
        }
        for (const auto& [attr, want] : e.attrs) {
            judge(out, a, "attrs." + attr, want, nothing, false);
        }
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

// A step in (removed_at, last] lists it: installing it again is the manifest's own wish.
bool installed_by(const manifest::Manifest& m, std::size_t removed_at, std::size_t last, const std::string& dist) {
    for (std::size_t i = removed_at; i <= last && i < m.steps.size(); ++i) {
        for (const auto& req : m.steps[i].packages) {
            if (req.normalized_name() == dist) {
                return true;
            }
        }
    }
    return false;
}

}  // namespace

std::string describe(const Mismatch& m) {
    std::string where = m.step.empty() ? "" : "step '" + m.step + "': ";
    if (m.field == "requires" && !m.dist.empty()) {
        return where + m.found;  // verify::describe(RequirementVerdict): a sentence of its own
    }
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

std::optional<CudaTarget> target_cuda(const manifest::Manifest& m) {
    if (m.cuda && !m.cuda->toolkit.empty()) {
        return cuda_target_of_toolkit(m.cuda->toolkit);
    }
    std::optional<CudaTarget> found;
    for (const auto& step : m.steps) {
        for (const auto& e : step.expect) {
            auto target = e.local ? cuda_target_of_label(*e.local) : std::nullopt;
            if (!target) {
                continue;
            }
            if (found && *found != *target) {
                return std::nullopt;  // the expectations disagree: no single target
            }
            found = target;
        }
    }
    return found;
}

std::optional<std::string> target_cuda_label(const manifest::Manifest& m) {
    auto target = target_cuda(m);
    return target ? std::optional<std::string>(target->label) : std::nullopt;
}

std::optional<CudaFlavour> cuda_build(const venv::Distribution& d, const venv::BinaryFacts* binaries,
                                      const std::optional<CudaTarget>& target) {
    auto named = cuda_flavour(d.normalized, d.version);
    const venv::DistBinaries* found = nullptr;
    if (binaries) {
        for (const auto& b : binaries->dists) {
            // Another version than the one read (a plan's predicted end state): its binaries are not known.
            found = b.dist == d.normalized && b.version == d.version ? &b : found;
        }
    }
    auto majors = found ? binary_cuda_majors(*found) : std::map<int, std::string>{};
    if (majors.empty()) {
        return named;
    }
    if (named && majors.count(named->major)) {
        return named;  // the binaries agree with the label: the label says the minor too
    }
    // Binaries needing two majors pass where one is the target's: what of it cannot load, the
    // library check names.
    auto chosen = target && majors.count(target->major) ? majors.find(target->major) : majors.begin();
    return CudaFlavour{chosen->first, "", d.normalized, chosen->second};
}

CudaScan scan_cuda(const std::vector<venv::Distribution>& dists, const std::optional<CudaTarget>& target,
                   const std::vector<std::string>& allow_mixed, const std::vector<std::string>& spared,
                   const venv::BinaryFacts* binaries) {
    auto listed = [](const std::vector<std::string>& names, const std::string& name) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };
    CudaScan scan;
    for (const auto& d : dists) {
        auto flavour = cuda_build(d, binaries, target);
        if (!flavour) {
            continue;
        }
        scan.seen[flavour->major].push_back(d.normalized + " " + d.version);
        if (!target || !is_other_cuda(*flavour, *target) || listed(spared, d.normalized)) {
            continue;
        }
        if (listed(allow_mixed, d.normalized)) {
            scan.allowed.push_back(d.normalized + " " + d.version + " (" + describe(*flavour) + ")");
        } else if (!flavour->label.empty()) {
            scan.mixed.push_back({"", d.normalized, "mixed-cuda", "a " + target->label + " build", d.version});
        } else {
            scan.mixed.push_back({"", d.normalized, "mixed-cuda", "CUDA " + std::to_string(target->major),
                                  d.version + " (" + describe(*flavour) + ": " + flavour->rule + ")"});
        }
    }
    return scan;
}

std::vector<Mismatch> scan_mixed_cuda(const std::vector<venv::Distribution>& dists, const std::string& target,
                                      const std::vector<std::string>& allow_mixed) {
    return scan_cuda(dists, cuda_target_of_label(target), allow_mixed).mixed;
}

std::string describe_seen(const CudaScan& scan) {
    if (scan.seen.empty()) {
        return "no CUDA-specific builds";
    }
    std::string out;
    for (const auto& [major, names] : scan.seen) {
        out += (out.empty() ? "" : "; ") + ("CUDA " + std::to_string(major) + ": ") + base::join(names);
    }
    return out;
}

std::vector<DistSummary> summarize_dists(const std::vector<venv::Distribution>& dists,
                                         const venv::BinaryFacts& binaries, const GpuTargets& targets) {
    auto out = summarize_binaries(binaries, targets);
    for (auto& s : out) {
        for (const auto& dist : dists) {
            if (dist.normalized != s.dist) {
                continue;
            }
            if (auto flavour = cuda_build(dist, &binaries)) {
                s.cuda = describe(*flavour) + ": " + flavour->rule;
            }
        }
    }
    return out;
}

std::vector<Judgement> cuda_judgements(const CudaScan& scan, const std::optional<CudaTarget>& target) {
    std::vector<Judgement> out;
    if (!target) {
        // Never "no mixed CUDA builds" when nothing was judged: say what was seen.
        out.push_back({"", "", "cuda-builds", "no target CUDA given (cuda.toolkit, or an expectation's local label)",
                       "not judged; seen: " + describe_seen(scan), true});
        return out;
    }
    for (const auto& x : scan.mixed) {
        out.push_back({x.step, x.dist, x.field, x.expected, x.found, false});
    }
    if (scan.mixed.empty()) {
        std::string found = "no other CUDA build";
        if (!scan.allowed.empty()) {
            found += "; allow_mixed let pass: " + base::join(scan.allowed);
        }
        out.push_back({"", "", "mixed-cuda", "only " + target->label + " builds", found, true});
    }
    return out;
}

std::vector<Judgement> judge_removals(const manifest::Manifest& m, std::size_t last,
                                      const std::vector<venv::Distribution>& dists) {
    std::vector<Judgement> out;
    for (std::size_t s = 0; s <= last && s < m.steps.size(); ++s) {
        for (const auto& pattern : m.steps[s].remove) {
            bool any = false;
            for (const auto& d : dists) {
                if (!manifest::removal_matches(pattern, d.normalized) || installed_by(m, s, last, d.normalized)) {
                    continue;
                }
                any = true;
                out.push_back({m.steps[s].name, d.normalized, "removed", "absent (remove: " + pattern + ")", d.version,
                               false});
            }
            if (!any) {
                out.push_back({m.steps[s].name, "", "removed", "nothing matches " + pattern, "none installed", true});
            }
        }
    }
    return out;
}

std::vector<Judgement> judge_all(const manifest::Manifest& m, std::size_t last, const venv::Facts& facts,
                                 const Context& context) {
    auto out = judge_expectations(expectations_through(m, last), facts);
    auto removals = judge_removals(m, last, facts.distributions);
    out.insert(out.end(), removals.begin(), removals.end());
    // A dist that a later step installs may still be the old build now.
    std::vector<std::string> spared;
    for (std::size_t i = last + 1; i < m.steps.size(); ++i) {
        for (const auto& req : m.steps[i].packages) {
            spared.push_back(req.normalized_name());
        }
    }
    auto target = target_cuda(m);
    auto cuda = cuda_judgements(scan_cuda(facts.distributions, target, m.allow_mixed, spared, &facts.binaries), target);
    out.insert(out.end(), cuda.begin(), cuda.end());
    const auto* before = context.before ? &context.before->binaries : nullptr;
    auto libraries = judge_libraries(m, last, facts.binaries, before, spared);
    out.insert(out.end(), libraries.begin(), libraries.end());
    auto targets = gpu_targets(m, context.gpus);
    auto kernels = judge_kernels(facts.binaries, targets, spared);
    out.insert(out.end(), kernels.begin(), kernels.end());
    auto unreadable = judge_unreadable(facts.binaries);
    out.insert(out.end(), unreadable.begin(), unreadable.end());
    out.push_back(binaries_summary(facts.binaries, targets));
    return out;
}

std::vector<Mismatch> check_all(const manifest::Manifest& m, std::size_t last, const venv::Facts& facts,
                                const Context& context) {
    return failures(judge_all(m, last, facts, context));
}

}  // namespace stackup::verify

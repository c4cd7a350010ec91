#include "txn/verify_env.hpp"

#include "txn/checks.hpp"
#include "manifest/environment.hpp"
#include "venv/driver.hpp"
#include "verify/verify.hpp"

namespace stackup::txn {

VerifyReport verify_env(const manifest::Manifest& m, const Options& options) {
    auto env = manifest::child_environment(m, options.venv, options.caller_env);
    VerifyReport report;
    std::size_t last = m.steps.empty() ? 0 : m.steps.size() - 1;
    report.expectations = verify::expectations_through(m, last);
    report.facts = venv::probe(options.venv, verify::import_requests(report.expectations), env);
    verify::Context context;
    if (!(m.cuda && !m.cuda->arch.empty())) {
        context.gpus = venv::probe_gpus(env);
    }
    report.judgements = verify::judge_all(m, last, report.facts, context);
    report.mismatches = verify::failures(report.judgements);
    report.broken = verify::broken_requirements(report.facts.distributions, report.facts.markers);
    for (const auto& check : m.checks) {
        CheckReport c = run_check(m, options.venv, env, check);
        if (!c.ok) {
            report.mismatches.push_back(check_mismatch(c));
        }
        report.checks.push_back(std::move(c));
    }
    return report;
}

InspectReport inspect_env(const manifest::Manifest* m, const Options& options, const std::vector<std::string>& arch) {
    auto env = m ? manifest::child_environment(*m, options.venv, options.caller_env) : options.caller_env;
    InspectReport report;
    report.facts = venv::probe(options.venv, {}, env);
    manifest::Manifest targets_of = m ? *m : manifest::Manifest{};
    if (!arch.empty()) {
        targets_of.cuda = targets_of.cuda.value_or(manifest::Cuda{});
        targets_of.cuda->arch = arch;
    }
    std::optional<venv::GpuFacts> gpus;
    if (!(targets_of.cuda && !targets_of.cuda->arch.empty())) {
        gpus = venv::probe_gpus(env);
    }
    report.targets = verify::gpu_targets(targets_of, gpus);
    if (!arch.empty()) {
        report.targets.from = "--arch";
    }
    report.dists = verify::summarize_dists(report.facts.distributions, report.facts.binaries, report.targets);
    return report;
}

}  // namespace stackup::txn

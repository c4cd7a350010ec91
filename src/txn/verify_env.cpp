#include "txn/verify_env.hpp"

#include "txn/checks.hpp"
#include "manifest/environment.hpp"

namespace stackup::txn {

VerifyReport verify_env(const manifest::Manifest& m, const Options& options) {
    auto env = manifest::child_environment(m, options.venv, options.caller_env);
    VerifyReport report;
    std::size_t last = m.steps.empty() ? 0 : m.steps.size() - 1;
    report.expectations = verify::expectations_through(m, last);
    report.facts = venv::probe(options.venv, verify::import_requests(report.expectations), env);
    report.judgements = verify::judge_all(m, last, report.facts);
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

}  // namespace stackup::txn

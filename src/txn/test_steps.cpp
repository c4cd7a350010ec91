// The steps of an apply behind their seam (txn::Tools): every outcome of a step, driven
// without uv or a python, from what the tools answer.
#include <doctest/doctest.h>

#include <deque>

#include "base/error.hpp"
#include "manifest/manifest.hpp"
#include "temp_dir.hpp"
#include "txn/steps.hpp"

using namespace stackup;
using namespace stackup::txn;

namespace {

const char* const kManifest = R"(version: 1
name: seam
venv: /srv/venv
indexes:
  pytorch: https://example.invalid/cu130
steps:
  - name: torch
    index: pytorch
    packages: ["torch==2.11.0+cu130"]
    expect:
      torch: {local: cu130}
checks:
  - name: imports
    python: "import torch"
)";

venv::Facts facts_with(const std::string& torch) {
    venv::Facts f;
    f.distributions.push_back({"torch", "torch", torch});
    venv::ImportResult imported;
    imported.dist = "torch";
    imported.module = "torch";
    imported.version = torch;
    f.imports.push_back(imported);
    return f;
}

// Answers as told, and remembers what it was asked.
class ScriptedTools : public Tools {
public:
    installer::RunResult install_result;
    std::deque<venv::Facts> probes;
    bool probe_fails = false;
    bool check_passes = true;
    std::vector<installer::Invocation> installs;
    std::vector<std::filesystem::path> probed;
    std::vector<venv::Bytecode> bytecodes;  // what each probe was told of bytecode
    std::vector<std::vector<std::string>> asked;  // the dists each probe was asked to import

    installer::RunResult install(const installer::Invocation& invocation, const base::LineSink& on_line) override {
        installs.push_back(invocation);
        on_line(" + torch==2.11.0+cu130");
        return install_result;
    }
    venv::Facts probe(const std::filesystem::path& venv, const std::vector<venv::ImportRequest>& requests,
                      const base::Environment&, const venv::Bytecode& bytecode) override {
        probed.push_back(venv);
        bytecodes.push_back(bytecode);
        asked.emplace_back();
        for (const auto& r : requests) {
            asked.back().push_back(r.dist);
        }
        if (probe_fails || probes.empty()) {
            throw Error(ExitCode::preflight_failed, "the venv's python does not answer");
        }
        auto f = probes.front();
        probes.pop_front();
        return f;
    }
    CheckReport check(const manifest::Manifest&, const std::filesystem::path&, const base::Environment&,
                      const manifest::Check& check) override {
        return {check.name, check_passes, check_passes ? "" : "AssertionError"};
    }
};

struct Run {
    testing::TempDir dir;
    manifest::Manifest m = manifest::parse(kManifest, "m.yaml");
    Options options;
    Observer observer;
    ScriptedTools tools;
    ApplyReport report;
    venv::Facts facts = facts_with("2.10.0+cu128");

    Run() {
        options.venv = "/srv/clone";
        options.uv = "uv";
        plan::PlannedStep planned;
        planned.name = "torch";
        planned.index = "pytorch";
        plan::PlannedPackage p;
        p.name = "torch";
        p.requirement = "torch==2.11.0+cu130";
        p.installed = "2.10.0+cu128";
        planned.packages.push_back(p);
        report.plan.steps.push_back(planned);
        report.steps.push_back({});
        report.steps[0].name = "torch";
        tools.install_result.process.exit_code = 0;
    }

    bool step() {
        StepRunner runner(m, options, observer, {}, dir.path(), installer::Mode::install, tools);
        runner.set_baseline(facts);
        return runner.step(0, facts, report);
    }
    void checks() {
        StepRunner runner(m, options, observer, {}, dir.path(), installer::Mode::install, tools);
        runner.checks(report);
    }
};

// Three steps: alpha, beta, gamma to version 2, one each.
const char* const kAbcManifest = R"(version: 1
name: three
venv: /srv/venv
indexes:
  pypi: https://example.invalid/simple
steps:
  - {name: one, index: pypi, packages: ["alpha==2"], expect: {alpha: {version: "==2"}}}
  - {name: two, index: pypi, packages: ["beta==2"], expect: {beta: {version: "==2"}}}
  - {name: three, index: pypi, packages: ["gamma==2"], expect: {gamma: {version: "==2"}}}
)";

// The report of kAbcManifest before its run: each step planned with its one package.
ApplyReport abc_report(const manifest::Manifest& m) {
    ApplyReport report;
    for (const auto& step : m.steps) {
        plan::PlannedStep planned;
        planned.name = step.name;
        plan::PlannedPackage p;
        p.name = step.packages[0].normalized_name();
        p.requirement = step.name == "one" ? "alpha==2" : step.name == "two" ? "beta==2" : "gamma==2";
        planned.packages.push_back(p);
        report.plan.steps.push_back(planned);
        report.steps.push_back({});
        report.steps.back().name = step.name;
    }
    return report;
}

// The venv after `upgraded` steps of kAbcManifest: alpha, beta, gamma at 2 one by one; alpha may require beta.
venv::Facts abc_after(int upgraded, bool alpha_needs_beta) {
    venv::Facts f;
    for (const std::string name : {"alpha", "beta", "gamma"}) {
        const int n = name == "alpha" ? 1 : name == "beta" ? 2 : 3;
        venv::Distribution d{name, name, upgraded >= n ? "2" : "1"};
        if (name == "alpha" && alpha_needs_beta) {
            d.requires_dist = {"beta>=1"};
        }
        f.distributions.push_back(d);
        venv::ImportResult imported;
        imported.dist = name;
        imported.module = name;
        imported.version = d.version;
        f.imports.push_back(imported);
    }
    return f;
}

}  // namespace

TEST_SUITE("txn") {
    TEST_CASE("a step installs into the tree it is given and passes on what the probe of that tree says") {
        Run r;
        r.options.bytecode = {true, "/srv/venv"};  // a generation being built at /srv/clone
        r.tools.install_result.summary.changes.push_back({installer::PackageChange::Kind::added, "torch", "2.11.0+cu130"});
        r.tools.probes.push_back(facts_with("2.11.0+cu130"));
        CHECK(r.step());
        CHECK(r.report.steps[0].status == StepStatus::ok);
        REQUIRE(r.tools.installs.size() == 1);
        const auto& argv = r.tools.installs[0].argv;
        CHECK(std::find(argv.begin(), argv.end(), "/srv/clone/bin/python") != argv.end());
        CHECK(r.tools.probed == std::vector<std::filesystem::path>{"/srv/clone"});
        REQUIRE(r.tools.bytecodes.size() == 1);  // the step's probe writes bytecode named for the venv
        CHECK(r.tools.bytecodes[0].write);
        CHECK(r.tools.bytecodes[0].named_as == "/srv/venv");
        CHECK(r.facts.find("torch")->version == "2.11.0+cu130");  // the next step starts from here
        CHECK(outcome_of(r.report.steps) == Outcome::applied);
        r.checks();
        CHECK(r.report.mismatches.empty());
    }

    TEST_CASE("uv failing is an installer failure, and nothing is probed") {
        Run r;
        r.tools.install_result.process.exit_code = 2;
        CHECK_FALSE(r.step());
        CHECK(r.report.steps[0].status == StepStatus::installer_failed);
        CHECK(r.report.failure.find("the installer failed (uv exit status 2)") != std::string::npos);
        CHECK(r.tools.probed.empty());
        CHECK(outcome_of(r.report.steps) == Outcome::installer_failed);
    }

    TEST_CASE("uv changing nothing while the step fails is the installer no-op, named as such") {
        Run r;
        r.tools.probes.push_back(facts_with("2.10.0+cu128"));  // the "Audited" trap: still cu128
        CHECK_FALSE(r.step());
        CHECK(r.report.steps[0].status == StepStatus::installer_no_op);
        CHECK(r.report.failure.find("installer no-op: torch 2.10.0+cu128 did not change") != std::string::npos);
        CHECK(outcome_of(r.report.steps) == Outcome::installer_failed);
    }

    TEST_CASE("a changed package that does not meet the step fails verification") {
        Run r;
        r.tools.install_result.summary.changes.push_back({installer::PackageChange::Kind::added, "torch", "2.11.0+cu129"});
        r.tools.probes.push_back(facts_with("2.11.0+cu129"));
        CHECK_FALSE(r.step());
        CHECK(r.report.steps[0].status == StepStatus::verification_failed);
        REQUIRE_FALSE(r.report.mismatches.empty());
        CHECK(r.report.mismatches.front().field == "local");
        CHECK(outcome_of(r.report.steps) == Outcome::verification_failed);
    }

    TEST_CASE("a tree whose python no longer answers fails the step, saying so") {
        Run r;
        r.tools.probe_fails = true;
        CHECK_FALSE(r.step());
        REQUIRE_FALSE(r.report.mismatches.empty());
        CHECK(r.report.mismatches.front().field == "probe");
        CHECK(r.report.mismatches.front().found.find("does not answer") != std::string::npos);
    }

    TEST_CASE("a failing manifest check is a verification failure after the last step") {
        Run r;
        r.tools.check_passes = false;
        r.checks();
        CHECK(decide(r.report) == Outcome::verification_failed);
        CHECK(r.report.failure.find("check 'imports'") != std::string::npos);
    }

    TEST_CASE("decide: a failed restore beats everything, then the steps, the checks, what stopped the run") {
        ApplyReport report;
        report.steps.resize(2);
        report.steps[0].status = StepStatus::ok;
        CHECK(decide(report) == Outcome::applied);
        report.stopped = "the switch failed: EXDEV";
        CHECK(decide(report) == Outcome::not_finished);   // stackup's own, not the installer's
        report.outcome = decide(report);
        CHECK(report.exit_code() == ExitCode::not_finished);
        CHECK(static_cast<int>(report.exit_code()) == 9);
        report.checks.push_back({"imports", false, "AssertionError"});
        CHECK(decide(report) == Outcome::verification_failed);
        report.steps[1].status = StepStatus::installer_no_op;
        CHECK(decide(report) == Outcome::installer_failed);
        report.steps[0].status = StepStatus::verification_failed;
        CHECK(decide(report) == Outcome::verification_failed);
        report.rollback_error = "cannot exchange";
        CHECK(decide(report) == Outcome::rollback_failed);
    }

    TEST_CASE("after a step, only the expectations that can have changed are imported again; the last step asks all") {
        for (const bool alpha_needs_beta : {false, true}) {
            CAPTURE(alpha_needs_beta);
            testing::TempDir dir;
            const auto m = manifest::parse(kAbcManifest, "m.yaml");
            ScriptedTools tools;
            tools.install_result.process.exit_code = 0;
            ApplyReport report = abc_report(m);
            auto state = [&](int upgraded) { return abc_after(upgraded, alpha_needs_beta); };
            venv::Facts facts = state(0);
            facts.imports.clear();  // preflight's probe imports nothing
            Observer observer;
            Options options;
            options.venv = "/srv/clone";
            StepRunner runner(m, options, observer, {}, dir.path(), installer::Mode::install, tools);
            runner.set_baseline(facts);
            for (int i = 0; i < 3; ++i) {
                const std::string name = i == 0 ? "alpha" : i == 1 ? "beta" : "gamma";
                tools.install_result.summary.changes = {{installer::PackageChange::Kind::added, name, "2"}};
                tools.probes.push_back(state(i + 1));
                REQUIRE(runner.step(static_cast<std::size_t>(i), facts, report));
            }
            CHECK(tools.asked[0] == std::vector<std::string>{"alpha"});
            CHECK(tools.asked[1] == (alpha_needs_beta ? std::vector<std::string>{"alpha", "beta"}
                                                      : std::vector<std::string>{"beta"}));
            CHECK(report.steps[1].carried == (alpha_needs_beta ? 0u : 1u));
            CHECK(tools.asked[2] == std::vector<std::string>{"alpha", "beta", "gamma"});  // the last round is whole
            CHECK(report.steps[2].carried == 0);
            for (const auto& step : report.steps) {
                CHECK(step.status == StepStatus::ok);
            }
        }
    }
}

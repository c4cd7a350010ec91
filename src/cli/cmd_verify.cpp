// stackup verify MANIFEST: judge the venv against the manifest; touches nothing.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "txn/verify_env.hpp"

namespace stackup::cli {
namespace {

// What the CUDA scan concluded, in its own words: judged against a target, or only seen.
std::string cuda_verdict(const std::vector<verify::Judgement>& judgements) {
    for (const auto& j : judgements) {
        if (j.dist.empty() && (j.field == "mixed-cuda" || j.field == "cuda-builds")) {
            return j.field == "mixed-cuda" ? j.expected + ": " + j.found : j.found + " (" + j.expected + ")";
        }
    }
    return "not judged";
}

// What the dists' shared objects said, in one line.
std::string binaries_verdict(const std::vector<verify::Judgement>& judgements) {
    for (const auto& j : judgements) {
        if (j.dist.empty() && j.field == "binaries") {
            return j.found;
        }
    }
    return "not read";
}

}  // namespace

std::function<int()> setup_verify(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    sub.add_option("manifest", *manifest_path, "the manifest (YAML)")->required()->type_name("MANIFEST");
    return [manifest_path, &common] {
        auto m = load_manifest(*manifest_path, common);
        auto options = txn_options(common, &m);
        auto report = txn::verify_env(m, options);
        common.doc->body()["manifest"] = m.source.string();
        add_verify(*common.doc, report);
        for (const auto& j : report.judgements) {
            if (j.warning) {
                std::cerr << "stackup: warning: " << j.dist << ": " << j.found << "\n";
            }
        }
        for (const auto& b : report.broken) {
            std::cerr << "stackup: warning: unmet requirement (as pip check sees it): " << verify::describe(b) << "\n";
        }
        if (report.ok()) {
            if (common.verbosity != Verbosity::quiet) {
                std::cout << "verified: " << options.venv.string() << " meets " << *manifest_path << " ("
                          << report.expectations.size() << " expectation(s), " << report.checks.size()
                          << " check(s))\n  CUDA builds: " << cuda_verdict(report.judgements)
                          << "\n  binaries: " << binaries_verdict(report.judgements) << "\n";
            }
            return 0;
        }
        std::cerr << "stackup: verification FAILED for " << options.venv.string() << ":\n";
        for (const auto& mismatch : report.mismatches) {
            std::cerr << "  " << verify::describe(mismatch) << "\n";
        }
        return static_cast<int>(ExitCode::verification_failed);
    };
}

}  // namespace stackup::cli

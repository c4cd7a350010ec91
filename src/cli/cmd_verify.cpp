// stackup verify MANIFEST: judge the venv against the manifest; touches nothing.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "txn/inspect.hpp"

namespace stackup::cli {

std::function<int()> setup_verify(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    sub.add_option("manifest", *manifest_path, "the manifest (YAML)")->required()->type_name("MANIFEST");
    return [manifest_path, &common] {
        auto m = load_manifest(*manifest_path, common);
        auto options = txn_options(common, &m);
        auto report = txn::verify_env(m, options);
        common.doc->body()["manifest"] = m.source.string();
        add_verify(*common.doc, report);
        if (report.ok()) {
            if (common.verbosity != Verbosity::quiet) {
                std::cout << "verified: " << options.venv.string() << " meets " << *manifest_path << " ("
                          << report.expectations.size() << " expectation(s), " << report.checks.size()
                          << " check(s), no mixed CUDA builds)\n";
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

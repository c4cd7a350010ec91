// stackup inspect [MANIFEST] [--arch X.Y]: what the venv's shared objects say, per dist: the CUDA
// build they need, their kernels (SASS / PTX), the GPUs they have none for, the CUDA libraries
// nothing provides. Touches nothing; judges nothing (verify does), so it exits 0.
#include <iostream>

#include <CLI/CLI.hpp>

#include "base/text.hpp"
#include "binary/arch.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/json.hpp"
#include "txn/verify_env.hpp"

namespace stackup::cli {
namespace {

Json summary_json(const verify::DistSummary& d) {
    return {{"dist", d.dist},           {"version", d.version},       {"files", d.files},
            {"cuda", d.cuda.empty() ? Json(nullptr) : Json(d.cuda)},  {"kernels", d.kernels},       {"kernels_text", d.kernels_text},
            {"no_kernel_for", d.no_kernel}, {"missing_libraries", d.missing}, {"unreadable", d.unreadable}};
}

void print(std::ostream& out, const txn::InspectReport& r) {
    const auto& b = r.facts.binaries;
    if (!b.scanned) {
        out << "binaries: not read: " << b.why_not << "\n";
        return;
    }
    out << "GPUs: " << (r.targets.gpus.empty() ? "not judged: " + r.targets.from
                                               : base::join(r.targets.gpus) + " (" + r.targets.from + ")")
        << "\n";
    if (r.dists.empty()) {
        out << "no distribution installs a shared object\n";
    }
    for (const auto& d : r.dists) {
        out << d.dist << " " << d.version << " (" << d.files << " shared object(s))\n"
            << "  CUDA build: " << (d.cuda.empty() ? "none needed" : d.cuda) << "\n"
            << "  kernels:    " << d.kernels_text << "\n";
        if (!d.no_kernel.empty()) {
            out << "  no kernel for: " << base::join(d.no_kernel) << "\n";
        }
        for (const auto& m : d.missing) {
            out << "  MISSING:    " << m << "\n";
        }
        for (const auto& u : d.unreadable) {
            out << "  unreadable: " << u << "\n";
        }
    }
}

}  // namespace

std::function<int()> setup_inspect(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    auto arch = std::make_shared<std::vector<std::string>>();
    add_venv_manifest(sub, *manifest_path);
    sub.add_option("--arch", *arch, "a GPU's compute capability the kernels must run on, as nvidia-smi prints it "
                                     "(repeatable): 9.0, 10.0, 12.0")
        ->type_name("X.Y");
    return [manifest_path, arch, &common] {
        for (const auto& a : *arch) {
            if (!binary::parse_gpu(a)) {
                throw Error(ExitCode::usage, "--arch '" + a + "' is not a compute capability (expected X.Y, like 12.0)");
            }
        }
        std::optional<manifest::Manifest> m;
        if (!manifest_path->empty()) {
            m = load_manifest(*manifest_path, common);
        }
        auto options = txn_options(common, m ? &*m : nullptr);
        auto report = txn::inspect_env(m ? &*m : nullptr, options, *arch);
        Json dists = Json::array();
        for (const auto& d : report.dists) {
            dists.push_back(summary_json(d));
        }
        auto& body = common.doc->body();
        body["venv"] = options.venv.string();
        body["gpus"] = report.targets.gpus;
        body["gpus_from"] = report.targets.from;
        body["binaries_read"] = report.facts.binaries.scanned;
        body["scan"] = {{"files_listed", report.facts.binaries.files_listed},
                        {"headers_read", report.facts.binaries.files_read},
                        {"seconds", report.facts.binaries.seconds}};
        body["dists"] = dists;
        if (common.verbosity != Verbosity::quiet) {
            print(std::cout, report);
        }
        return 0;
    };
}

}  // namespace stackup::cli

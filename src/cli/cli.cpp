#include "cli/cli.hpp"

#include <signal.h>

#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "base/log.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"

namespace stackup::cli {
namespace {

void add_common_options(CLI::App& app, CommonOptions& common, bool& verbose, bool& quiet) {
    app.add_option("--venv", common.venv, "the venv to work on (overrides the manifest's)");
    app.add_option("--state-dir", common.state_dir, "where snapshots live (default: .stackup/ beside the venv)")
        ->envname("STACKUP_STATE_DIR");
    app.add_option("--uv", common.uv, "the uv to run (default: uv on PATH)")->envname("STACKUP_UV");
    app.add_option("--http-timeout", common.http_timeout, "seconds per index request (failed requests are retried)")
        ->check(CLI::PositiveNumber);
    app.add_flag("-v,--verbose", verbose, "say more, including each child's argv");
    app.add_flag("-q,--quiet", quiet, "say only what failed");
}

void apply_verbosity(CommonOptions& common, bool verbose, bool quiet) {
    if (verbose) {
        common.verbosity = Verbosity::verbose;
        base::log::set_level(base::log::Level::debug);
    } else if (quiet) {
        common.verbosity = Verbosity::quiet;
        base::log::set_level(base::log::Level::error);
    }
}

}  // namespace

int run(int argc, char** argv) {
    // A reader that goes away (`stackup apply ... | tee` killed) must not kill a
    // transaction halfway: writes fail instead, and the run still ends or rolls back.
    ::signal(SIGPIPE, SIG_IGN);
    CLI::App app{"stackup: upgrade the GPU stack of a Python venv from a manifest, and never leave it broken"};
    app.require_subcommand(1);
    // Options may stand before or after the command.
    app.fallthrough();
    CommonOptions common;
    bool verbose = false;
    bool quiet = false;
    add_common_options(app, common, verbose, quiet);

    std::function<int()> chosen;
    for (const auto& command : commands()) {
        CLI::App* sub = app.add_subcommand(command.name, command.summary);
        auto runner = std::make_shared<std::function<int()>>(command.setup(*sub, common));
        sub->callback([&chosen, runner] { chosen = *runner; });
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : static_cast<int>(ExitCode::usage);
    }
    apply_verbosity(common, verbose, quiet);
    try {
        return chosen();
    } catch (const Error& e) {
        std::cerr << "stackup: " << e.describe() << "\n";
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        // apply and rollback turn every failure after the first change into an
        // Error; anything else escaping here happened before the venv was touched.
        std::cerr << "stackup: " << e.what() << "\n";
        return static_cast<int>(ExitCode::preflight_failed);
    }
}

}  // namespace stackup::cli

#include "cli/cli.hpp"

#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>

#include "base/argv.hpp"
#include "base/error.hpp"
#include "base/interrupt.hpp"
#include "base/log.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/json.hpp"
#include "cli/recovery.hpp"
#include "txn/running.hpp"

namespace stackup::cli {
namespace {

void add_common_options(CLI::App& app, CommonOptions& common, bool& verbose, bool& quiet) {
    app.add_option("--venv", common.venv, "the venv to work on (overrides the manifest's)")->type_name("DIR");
    app.add_option("--state-dir", common.state_dir,
                   "lock, journal, snapshots and last-transaction record live under DIR/<venv>-<hash>/ "
                   "(default: .stackup/ beside the venv)")
        ->envname("STACKUP_STATE_DIR")
        ->type_name("DIR");
    app.add_option("--uv", common.uv, "the uv to run (default: uv on PATH)")->envname("STACKUP_UV")->type_name("PATH");
    app.add_option("--http-timeout", common.http_timeout, "seconds per index request (failed requests are retried)")
        ->check(CLI::PositiveNumber)
        ->type_name("SECONDS");
    app.add_option("--cache-dir", common.cache_dir,
                   "where index pages are cached (default: $XDG_CACHE_HOME/stackup, else ~/.cache/stackup)")
        ->envname("STACKUP_CACHE_DIR")
        ->type_name("DIR");
    app.add_flag("--no-cache", common.no_cache, "neither read nor write the index page cache");
    app.add_flag("--refresh", common.refresh, "revalidate every cached index page, even a fresh one");
    app.add_option("--snapshot-strategy", common.snapshot_strategy,
                   "automatic (reflink, else hard links on the venv's filesystem, else copy), reflink, hardlink, copy")
        ->check(CLI::IsMember({"automatic", "reflink", "hardlink", "copy"}))
        ->type_name("STRATEGY");
    app.add_option("--log-file", common.log_file, "also append the debug log (each child's argv and environment) here")
        ->type_name("FILE");
    app.add_flag("--json", common.json, "one JSON document on stdout; everything else goes to stderr");
    app.add_flag("-v,--verbose", verbose, "say more, including each child's argv");
    app.add_flag("-q,--quiet", quiet, "say only what failed");
}

// Each command's --help ends with the options every command takes, as
// `stackup --help` has them (names, placeholders and descriptions).
std::string common_options_footer(const CLI::App& app) {
    constexpr std::size_t kColumn = 30;  // where CLI11 starts descriptions
    std::string out = "Common options (before or after the command):";
    for (const CLI::Option* option : app.get_options()) {
        const std::string names = option->get_name(false, true);
        if (names.find("--help") != std::string::npos || names.find("--version") != std::string::npos) {
            continue;
        }
        std::string left = "  " + names;
        if (option->get_expected_min() > 0) {
            const std::string type = option->get_type_name();
            left += " " + type.substr(0, type.find(':'));  // "SECONDS", not "SECONDS:POSITIVE"
        }
        left += left.size() < kColumn ? std::string(kColumn - left.size(), ' ') : "\n" + std::string(kColumn, ' ');
        std::string description = option->get_description();
        if (!option->get_envname().empty()) {
            description += " (env " + option->get_envname() + ")";
        }
        out += "\n" + left + description;
    }
    return out;
}

// Known before parsing, so that a usage error is a JSON document too.
bool asks_for_json(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--json") == 0) {
            return true;
        }
    }
    return false;
}

// With --json, stdout carries the document only: std::cout (people's text, uv's
// lines) goes to stderr while the command runs; `stdout_` is the real one.
class JsonStdout {
public:
    explicit JsonStdout(bool active) : active_(active), saved_(std::cout.rdbuf()) {
        if (active_) {
            std::cout.rdbuf(std::cerr.rdbuf());
        }
    }
    ~JsonStdout() { std::cout.rdbuf(saved_); }
    JsonStdout(const JsonStdout&) = delete;
    JsonStdout& operator=(const JsonStdout&) = delete;

    int finish(const Document& doc, int code) {
        if (active_) {
            std::cout.flush();
            std::ostream out(saved_);
            out << doc.finish(code).dump(2) << "\n" << std::flush;
        }
        return code;
    }

private:
    bool active_;
    std::streambuf* saved_;
};

// A command that changes the venv or the state dir, run so that a signal lets it finish or undo
// what it did; then it exits 128+N (an apply says itself what became of the venv).
int run_deferring(const std::function<int()>& command, const CommonOptions& common) {
    base::interrupts::Deferred deferred;
    int code = 0;
    try {
        code = command();
    } catch (const Error& e) {
        if (base::interrupts::received() == 0) {
            throw;
        }
        // What the stopped child made of it, in one line (its traceback is the signal's, not news).
        const std::string what = message_of(e);
        std::cerr << "stackup: " << what.substr(0, what.find('\n')) << "\n";
        common.doc->add_error(error_json(e));
        code = static_cast<int>(e.code());
    }
    const int signal = base::interrupts::received();
    if (signal == 0 || code == base::interrupts::exit_status(signal)) {
        return code;
    }
    const std::string what = std::string("interrupted by ") + base::interrupts::name(signal) +
                             (code == 0 ? " after the command had done its work: what it printed above stands"
                                        : "; the command stopped (exit " + std::to_string(code) + " above)");
    std::cerr << "stackup: " << what << "\n";
    common.doc->add_error(error_json(static_cast<ExitCode>(base::interrupts::exit_status(signal)), what));
    return base::interrupts::exit_status(signal);
}

// Runs the chosen command; every failure becomes its exit code (and a JSON error).
int run_command(const std::function<int()>& command, Document& doc) {
    try {
        return command();
    } catch (const txn::RunningError& e) {
        std::cerr << "stackup: " << message_of(e) << "\n";
        Json error = error_json(e);
        error["running"] = running_json(e.scan().using_venv);
        error["running_unreadable"] = e.scan().unreadable;
        doc.add_error(error);
        return static_cast<int>(e.code());
    } catch (const Error& e) {
        std::cerr << "stackup: " << message_of(e) << "\n";
        doc.add_error(error_json(e));
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        // apply and rollback turn every failure after the first change into an
        // Error; anything else escaping here happened before the venv was touched.
        std::cerr << "stackup: " << e.what() << "\n";
        doc.add_error(error_json(ExitCode::preflight_failed, e.what()));
        return static_cast<int>(ExitCode::preflight_failed);
    }
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
    base::interrupts::catch_signals();
    CLI::App app{"stackup: upgrade the GPU stack of a Python venv from a manifest, and never leave it broken"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "stackup " STACKUP_VERSION);
    // Options may stand before or after the command.
    app.fallthrough();
    CommonOptions common;
    bool verbose = false;
    bool quiet = false;
    add_common_options(app, common, verbose, quiet);

    const std::string footer = common_options_footer(app);
    std::function<int()> chosen;
    for (const auto& command : commands()) {
        CLI::App* sub = app.add_subcommand(command.name, command.summary);
        sub->footer(footer);
        auto runner = std::make_shared<std::function<int()>>(command.setup(*sub, common));
        std::string name = command.name;
        const bool transactional = command.transactional;
        sub->callback([&chosen, &common, runner, name, transactional] {
            common.doc->set_command_once(name);
            chosen = transactional ? std::function<int()>([runner, &common] { return run_deferring(*runner, common); })
                                   : *runner;
        });
    }
    JsonStdout json(asks_for_json(argc, argv));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        if (code != 0) {
            code = static_cast<int>(ExitCode::usage);
            common.doc->add_error(error_json(ExitCode::usage, e.what()));
        }
        return json.finish(*common.doc, code);
    }
    apply_verbosity(common, verbose, quiet);
    // People's text goes to stdout, or to stderr under --json: colour what goes to a terminal.
    const int human_fd = common.json ? 2 : 1;
    const auto env = base::current_environment();
    common.paint.enabled = wants_color(human_fd, env);
    common.live = is_terminal(human_fd, env) && common.verbosity != Verbosity::quiet;
    if (!common.log_file.empty()) {
        try {
            base::log::add_file(common.log_file);
        } catch (const std::exception& e) {
            std::cerr << "stackup: cannot write the log file " << common.log_file << ": " << e.what() << "\n";
            common.doc->add_error(error_json(ExitCode::usage, "cannot write the log file " + common.log_file));
            return json.finish(*common.doc, static_cast<int>(ExitCode::usage));
        }
        base::log::debug("stackup " STACKUP_VERSION ": " + base::render_argv(std::vector<std::string>(argv, argv + argc)));
    }
    return json.finish(*common.doc, run_command(chosen, *common.doc));
}

}  // namespace stackup::cli

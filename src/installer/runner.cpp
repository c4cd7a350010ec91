#include "installer/runner.hpp"

#include "base/argv.hpp"
#include "base/error.hpp"
#include "base/log.hpp"
#include "base/url.hpp"
#include "manifest/environment.hpp"
#include "pep/version.hpp"

namespace stackup::installer {

RunResult run(const Invocation& invocation, const base::LineSink& on_line) {
    base::log::debug("running: " + base::render_argv(invocation.argv));
    std::string env;
    for (const auto& [key, value] : manifest::masked(invocation.env)) {
        env += (env.empty() ? "" : " ") + base::render_argv({key + "=" + value});
    }
    base::log::debug("  with the environment: " + env);
    RunResult result;
    result.process = base::run_process({invocation.argv, invocation.env, std::nullopt}, [&](std::string_view line) {
        parse_uv_line(line, result.summary);
        if (on_line) {
            on_line(base::redact(line));
        }
    });
    return result;
}

namespace {

// "uv" when found on PATH by that name, else "uv (/opt/uv)": never "uv (uv)".
std::string named(const std::string& uv) { return uv == "uv" ? uv : "uv (" + uv + ")"; }

}  // namespace

std::string uv_version(const std::string& uv, const base::Environment& env) {
    auto r = base::run_process({{uv, "--version"}, env, std::nullopt});
    if (!r.ok()) {
        throw Error(ExitCode::preflight_failed, "cannot run " + named(uv) + ": " + r.describe() +
                                                    (r.output.empty() ? "" : "\n" + r.output) +
                                                    "\n  install uv, or pass --uv PATH / set STACKUP_UV");
    }
    std::string line = r.output.substr(0, r.output.find('\n'));
    if (auto problem = check_uv_version(line, uv); !problem.empty()) {
        throw Error(ExitCode::preflight_failed, problem + "\n  install uv " + kMinimumUv +
                                                    " or newer, or pass --uv PATH / set STACKUP_UV");
    }
    return line;
}

std::string check_uv_version(std::string_view line, const std::string& uv) {
    // "uv 0.13.9", "uv 0.13.9 (abc1234 2025-01-01)", "uv 0.13.9+1 (...)" (a dev build).
    std::string_view rest = line.starts_with("uv ") ? line.substr(3) : std::string_view{};
    std::string_view number = rest.substr(0, rest.find(' '));
    number = number.substr(0, number.find('+'));
    auto version = pep::Version::parse(number);
    if (!version) {
        return named(uv) + " answered --version with \"" + std::string(line) +
               "\", not \"uv X.Y.Z\": is it uv?";
    }
    if (*version < *pep::Version::parse(kMinimumUv)) {
        return named(uv) + " is " + std::string(number) + ", too old: stackup needs uv " + kMinimumUv +
               " or newer (named indexes, --index NAME=URL)";
    }
    return "";
}

}  // namespace stackup::installer

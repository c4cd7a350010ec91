#include "installer/runner.hpp"

#include "base/error.hpp"
#include "base/log.hpp"
#include "base/text.hpp"
#include "base/url.hpp"
#include "manifest/environment.hpp"

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

std::string uv_version(const std::string& uv, const base::Environment& env) {
    auto r = base::run_process({{uv, "--version"}, env, std::nullopt});
    if (!r.ok()) {
        throw Error(ExitCode::preflight_failed, "cannot run uv (" + uv + "): " + r.describe() +
                                                    (r.output.empty() ? "" : "\n" + r.output) +
                                                    "\n  install uv, or pass --uv PATH / set STACKUP_UV");
    }
    std::string line = r.output.substr(0, r.output.find('\n'));
    return line;
}

}  // namespace stackup::installer

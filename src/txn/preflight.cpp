#include "txn/preflight.hpp"

#include <future>
#include <optional>

#include "base/error.hpp"
#include "base/log.hpp"
#include "installer/command.hpp"
#include "pep/version.hpp"
#include "venv/driver.hpp"
#include "venv/toolkit.hpp"

namespace stackup::txn {

void check_interpreter(const manifest::Manifest& m, const venv::Facts& facts, const std::filesystem::path& venv) {
    if (!facts.interpreter.is_venv) {
        throw Error(ExitCode::preflight_failed,
                    venv.string() + " is not a virtual environment (its python's sys.prefix is its base prefix)");
    }
    std::string have = std::to_string(facts.interpreter.major) + "." + std::to_string(facts.interpreter.minor);
    if (m.python && *m.python != have) {
        throw Error(ExitCode::preflight_failed, "the venv's python is " + facts.interpreter.version +
                                                    "; the manifest requires " + *m.python);
    }
}

std::string check_toolkit(const manifest::Manifest& m, const base::Environment& env) {
    if (!m.cuda || m.cuda->toolkit.empty()) {
        return "";
    }
    auto toolkit = venv::probe_toolkit(m.cuda->home, env);
    if (!toolkit.release) {
        throw Error(ExitCode::preflight_failed,
                    "CUDA toolkit " + m.cuda->toolkit + " asked, but " + toolkit.problem);
    }
    if (*toolkit.release != m.cuda->toolkit) {
        throw Error(ExitCode::preflight_failed, "CUDA toolkit " + m.cuda->toolkit + " asked, but " +
                                                    toolkit.nvcc.string() + " reports " + *toolkit.release);
    }
    return *toolkit.release;
}

std::string check_driver(const manifest::Manifest& m, const base::Environment& env) {
    if (!m.cuda || (!m.cuda->driver && !m.cuda->require_driver)) {
        return "";
    }
    auto driver = venv::probe_driver(env);
    std::string wanted = m.cuda->driver ? m.cuda->driver->str() : "a driver";
    if (!driver.version) {
        if (m.cuda->require_driver) {
            throw Error(ExitCode::preflight_failed, "NVIDIA driver " + wanted + " required, but none was seen: " +
                                                        driver.source);
        }
        base::log::warn("no NVIDIA driver seen (" + driver.source + "); the manifest asks " + wanted +
                        ": going on, as require_driver is false");
        return "";
    }
    auto version = pep::Version::parse(*driver.version);
    if (m.cuda->driver && (!version || !m.cuda->driver->contains(*version, pep::Prereleases::allow))) {
        throw Error(ExitCode::preflight_failed, "NVIDIA driver " + wanted + " asked, but " + driver.source +
                                                    " reports " + *driver.version);
    }
    return *driver.version;
}

Host inspect_host(const manifest::Manifest& m, const std::filesystem::path& venv, const base::Environment& env) {
    Host host;
    host.facts = venv::probe(venv, {}, env);
    check_interpreter(m, host.facts, venv);
    host.seen = {check_toolkit(m, env), check_driver(m, env)};
    return host;
}

Preflight inspect_and_plan(const manifest::Manifest& m, const std::filesystem::path& venv, const base::Environment& env,
                           const base::HttpOptions& http, const index::CacheOptions& cache_options) {
    std::shared_future<Host> host = std::async(std::launch::async, [&] { return inspect_host(m, venv, env); }).share();
    const index::PageCache cache(cache_options);
    std::optional<plan::Picker> picker;
    bool host_failed = false;  // then pages keep their files: the host's failure is thrown below
    const index::PageDone pick = [&](index::ProjectPage& page) {
        if (!picker && !host_failed) {
            try {
                picker.emplace(m, host.get().facts);
            } catch (...) {
                host_failed = true;
            }
        }
        if (picker) {
            (*picker)(page);
        }
    };
    auto pages = index::fetch_pages(plan::pages_needed(m), http, cache, pick);
    const Host& seen = host.get();  // the probe's, the toolkit's or the driver's failure, as when they ran first
    if (!picker) {
        picker.emplace(m, seen.facts);
    }
    // Only for what was found nowhere: a second round, to say where it is.
    auto elsewhere = plan::pages_elsewhere(m, pages);
    if (!elsewhere.empty()) {
        auto more = index::fetch_pages(elsewhere, http, cache, pick);  // `pick` only counts their files
        pages.insert(pages.end(), more.begin(), more.end());
    }
    for (const auto& p : pages) {
        base::log::debug("index '" + p.request.index + "' " + p.request.project + ": " +
                         std::string(base::to_string(p.outcome)) + ", " + std::to_string(p.file_count) + " files" +
                         (p.from_cache ? " (from the page cache)" : ""));
    }
    return {seen, plan::make_plan(m, seen.facts, pages, &*picker)};
}

std::vector<std::string> requirement_lines(const plan::PlannedStep& planned, const manifest::Step& step) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < step.packages.size(); ++i) {
        const auto& p = planned.packages.at(i);
        if (!p.skipped.empty()) {
            continue;  // its marker is false here: uv would skip it too, but say so by leaving it out
        }
        out.push_back(installer::requirement_line(p.pin(step.packages[i]), p.choice ? p.choice->file.sha256() : ""));
    }
    return out;
}

void require_plan_ok(const plan::Plan& plan) {
    if (plan.ok()) {
        return;
    }
    std::string message = plan.end_state.empty() || plan.problems.size() > 1
                              ? "preflight failed: not every requested wheel exists for this venv"
                              : "preflight failed: the upgrade cannot end well";
    for (const auto& problem : plan.problems) {
        message += "\n  " + problem;
    }
    throw Error(ExitCode::preflight_failed, message);
}

}  // namespace stackup::txn

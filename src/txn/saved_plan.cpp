#include "txn/saved_plan.hpp"

#include "base/error.hpp"
#include "base/fs.hpp"
#include "base/sha256.hpp"
#include "base/system.hpp"
#include "base/url.hpp"
#include "installer/command.hpp"
#include "manifest/environment.hpp"
#include "txn/preflight.hpp"
#include "txn/state_dir.hpp"

namespace stackup::txn {
namespace {

// What stackup sets for uv on purpose: the manifest's env and ours, masked.
std::map<std::string, std::string> env_set(const manifest::Manifest& m, const Options& options) {
    return manifest::masked(manifest::child_environment(m, options.venv, {}));
}

std::vector<std::string> env_dropped(const manifest::Manifest& m, const Options& options) {
    auto child = manifest::child_environment(m, options.venv, options.caller_env);
    std::vector<std::string> out;
    for (const auto& [key, _] : options.caller_env) {
        if (!child.count(key)) {
            out.push_back(key);
        }
    }
    return out;
}

plan::SavedPackage saved_package(const plan::PlannedPackage& p, const pep::Requirement& req) {
    plan::SavedPackage out;
    out.name = p.name;
    out.requirement = p.requirement;
    out.installed = p.installed;
    out.change = p.change();
    if (!p.skipped.empty()) {
        out.skipped = p.skipped;  // no file: its marker is false for this venv
        return out;
    }
    out.version = p.choice->wheel.version.str();
    out.index = p.index;
    out.filename = p.choice->file.filename;
    out.url = base::without_credentials(p.choice->file.url);
    out.sha256 = p.choice->file.sha256();
    out.pin = p.pin(req);
    return out;
}

}  // namespace

plan::SavedPlan make_saved_plan(const manifest::Manifest& m, const Options& options, const venv::Facts& facts,
                                const Seen& seen, const plan::Plan& plan) {
    plan::SavedPlan saved;
    saved.created = base::utc_now();
    saved.stackup_version = STACKUP_VERSION;
    saved.manifest = std::filesystem::absolute(m.source).lexically_normal().string();
    saved.manifest_sha256 = m.digest;
    saved.venv = options.venv.string();
    saved.venv_state = plan::venv_state_of(facts);
    saved.toolkit = seen.toolkit;
    saved.driver = seen.driver;
    saved.env_dropped = env_dropped(m, options);
    auto env = env_set(m, options);
    for (std::size_t i = 0; i < m.steps.size(); ++i) {
        const auto& step = m.steps[i];
        const auto& planned = plan.steps.at(i);
        plan::SavedStep s{step.name, step.index, {}, {}, requirement_lines(planned, step), env};
        for (std::size_t k = 0; k < step.packages.size(); ++k) {
            s.packages.push_back(saved_package(planned.packages.at(k), step.packages[k]));
        }
        auto path = requirements_file(options.state_dir, i);
        for (const auto& arg : installer::install_argv(m, step, path, options.uv, options.venv, installer::Mode::install)) {
            s.argv.push_back(base::redact(arg));
        }
        if (step.packages.empty()) {
            s.argv.clear();  // a step that only removes runs no install
        }
        for (const auto& r : planned.removals) {
            if (!r.name.empty()) {
                s.remove.push_back(r.name);
            }
        }
        if (!s.remove.empty()) {
            s.remove_argv = installer::uninstall_argv(s.remove, options.uv, options.venv, installer::Mode::install);
        }
        saved.steps.push_back(std::move(s));
    }
    return saved;
}

void check_saved_plan(const plan::SavedPlan& saved, const manifest::Manifest& m, const venv::Facts& facts) {
    bool same_steps = saved.steps.size() == m.steps.size();
    for (std::size_t i = 0; same_steps && i < m.steps.size(); ++i) {
        same_steps = saved.steps[i].name == m.steps[i].name &&
                     saved.steps[i].packages.size() == m.steps[i].packages.size();
    }
    if (!same_steps) {
        throw Error(ExitCode::usage, "the saved plan's steps are not the manifest's (" + saved.manifest +
                                         "): was the plan edited by hand? make the plan again");
    }
    if (m.digest != saved.manifest_sha256) {
        throw Error(ExitCode::preflight_failed, "stale plan: the manifest " + saved.manifest +
                                                    " changed since the plan was made (" + saved.created +
                                                    "); make the plan again");
    }
    auto changes = plan::venv_changes(saved.venv_state, plan::venv_state_of(facts));
    if (changes.empty()) {
        return;
    }
    std::string message = "stale plan: the venv changed since the plan was made (" + saved.created + "):";
    for (const auto& change : changes) {
        message += "\n  " + change;
    }
    throw Error(ExitCode::preflight_failed, message + "\nmake the plan again");
}

}  // namespace stackup::txn

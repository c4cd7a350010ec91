#include "installer/command.hpp"

#include "base/url.hpp"
#include "manifest/environment.hpp"
#include "venv/probe.hpp"

namespace stackup::installer {
namespace {

// "pytorch" -> "PYTORCH", "sg-lang.x" -> "SG_LANG_X": how uv names a named index's variables.
std::string env_key(const std::string& index_name) {
    std::string out;
    for (char c : index_name) {
        bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        out.push_back(alnum ? static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c) : '_');
    }
    return out;
}

// uv's --index / --default-index value: a URL with credentials becomes "NAME=URL" without
// them, so that uv takes them from UV_INDEX_<NAME>_USERNAME/_PASSWORD, not from argv.
std::string index_argument(const manifest::Manifest& m, const std::string& name) {
    const std::string& url = m.indexes.at(name);
    auto credentials = base::credentials_of(url);
    return credentials ? name + "=" + credentials->url : url;
}

}  // namespace

std::vector<std::string> install_argv(const manifest::Manifest& m, const manifest::Step& step,
                                      const std::filesystem::path& requirements_file, const std::string& uv,
                                      const std::filesystem::path& venv, Mode mode) {
    std::vector<std::string> argv{uv, "pip", "install", "--python", venv::python_of(venv).string(), "--no-config",
                                  "--no-progress", "--color", "never"};
    const std::string step_index = index_argument(m, step.index);
    if (m.default_index && *m.default_index != step.index) {
        argv.insert(argv.end(), {"--index", step_index, "--default-index", index_argument(m, *m.default_index)});
    } else {
        argv.insert(argv.end(), {"--default-index", step_index});
    }
    if (step.prerelease) {
        argv.insert(argv.end(), {"--prerelease", "allow"});
    }
    if (!step.deps) {
        argv.push_back("--no-deps");
    }
    if (mode == Mode::dry_run) {
        argv.push_back("--dry-run");
    }
    // uv drops an installed copy from the candidates only when told to reinstall
    // it; without this an installed 2.10.0+cu128 "satisfies" torch.
    for (const auto& req : step.packages) {
        argv.insert(argv.end(), {"--reinstall-package", req.normalized_name()});
    }
    argv.insert(argv.end(), {"--requirements", requirements_file.string()});
    return argv;
}

Invocation step_invocation(const manifest::Manifest& m, const manifest::Step& step,
                           const std::filesystem::path& requirements_file, const std::string& uv,
                           const std::filesystem::path& venv, const base::Environment& caller, Mode mode) {
    auto env = manifest::child_environment(m, venv, caller);
    // Credentials reach uv here, never on its command line (which `ps` shows to everyone),
    // and only uv: the python that verifies and runs the checks never sees them.
    for (const auto& [name, url] : m.indexes) {
        if (auto credentials = base::credentials_of(url)) {
            env["UV_INDEX_" + env_key(name) + "_USERNAME"] = credentials->username;
            env["UV_INDEX_" + env_key(name) + "_PASSWORD"] = credentials->password;
        }
    }
    return {install_argv(m, step, requirements_file, uv, venv, mode), std::move(env)};
}

std::vector<std::string> uninstall_argv(const std::vector<std::string>& names, const std::string& uv,
                                        const std::filesystem::path& venv, Mode mode) {
    std::vector<std::string> argv{uv, "pip", "uninstall", "--python", venv::python_of(venv).string(), "--no-config",
                                  "--no-progress", "--color", "never"};
    if (mode == Mode::dry_run) {
        argv.push_back("--dry-run");
    }
    argv.insert(argv.end(), names.begin(), names.end());
    return argv;
}

Invocation removal_invocation(const manifest::Manifest& m, const std::vector<std::string>& names,
                              const std::string& uv, const std::filesystem::path& venv,
                              const base::Environment& caller, Mode mode) {
    return {uninstall_argv(names, uv, venv, mode), manifest::child_environment(m, venv, caller)};
}

std::string requirement_line(const std::string& requirement, const std::string& sha256) {
    return sha256.empty() ? requirement : requirement + " --hash=sha256:" + sha256;
}

std::string requirements_text(const std::vector<std::string>& lines) {
    std::string out = "# written by stackup: the exact files of one step (uv checks each hash)\n";
    for (const auto& line : lines) {
        out += line + "\n";
    }
    return out;
}

}  // namespace stackup::installer

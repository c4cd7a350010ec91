#include "manifest/environment.hpp"

#include "base/url.hpp"

namespace stackup::manifest {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool secret_name(const std::string& key) {
    for (const char* word : {"PASSWORD", "TOKEN", "SECRET", "AUTH", "CREDENTIAL"}) {
        if (key.find(word) != std::string::npos) {
            return true;
        }
    }
    return false;
}

}  // namespace

base::Environment masked(const base::Environment& env) {
    base::Environment out;
    for (const auto& [key, value] : env) {
        out[key] = secret_name(key) ? "***" : base::redact(value);
    }
    return out;
}

base::Environment child_environment(const Manifest& m, const std::filesystem::path& venv,
                                    const base::Environment& caller) {
    base::Environment env;
    for (const auto& [key, value] : caller) {
        if (starts_with(key, "PIP_") || starts_with(key, "UV_") || key == "VIRTUAL_ENV" ||
            starts_with(key, "PYTHON") || key == "CONDA_PREFIX") {
            continue;
        }
        env[key] = value;
    }
    for (const auto& [key, value] : m.env) {
        env[key] = value;
    }
    env["VIRTUAL_ENV"] = venv.string();
    if (m.cuda) {
        env["CUDA_HOME"] = m.cuda->home.string();
    }
    env["NO_COLOR"] = "1";
    if (!m.env.count("UV_PYTHON_DOWNLOADS")) {
        env["UV_PYTHON_DOWNLOADS"] = "never";
    }
    return env;
}

}  // namespace stackup::manifest

#pragma once
// The environment of every child stackup starts for a manifest's venv: uv, the
// probe, the checks. Hermetic: what the caller set for pip or uv never leaks in.

#include <filesystem>

#include "base/process.hpp"
#include "manifest/manifest.hpp"

namespace stackup::manifest {

// The caller's environment with PIP_* and UV_* dropped (they change what gets
// installed), then the manifest's env, then what we set on purpose:
// VIRTUAL_ENV, CUDA_HOME (when the manifest has cuda), no colour, no downloads
// of Python interpreters.
base::Environment child_environment(const Manifest& m, const std::filesystem::path& venv,
                                    const base::Environment& caller);

// For logs and saved plans: secret-looking variables (PASSWORD, TOKEN, ...) as "***",
// credentials in URL values masked.
base::Environment masked(const base::Environment& env);

}  // namespace stackup::manifest

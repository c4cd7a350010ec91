#pragma once
// The uv command line and the child's environment for one step (pure).

#include <filesystem>
#include <string>
#include <vector>

#include "base/process.hpp"
#include "manifest/manifest.hpp"

namespace stackup::installer {

enum class Mode { install, dry_run };

struct Invocation {
    std::vector<std::string> argv;
    base::Environment env;
    friend bool operator==(const Invocation&, const Invocation&) = default;
};

// `uv pip install --python <venv>/bin/python --no-config ... --reinstall-package
// NAME... --requirements FILE`: the step's index as --index and default_index as
// --default-index; without default_index the step's index is the default, so
// nothing comes from anywhere else. FILE holds what to install (the plan's exact
// pins, each with the sha256 uv must check); every package of the step is reinstalled.
std::vector<std::string> install_argv(const manifest::Manifest& m, const manifest::Step& step,
                                      const std::filesystem::path& requirements_file, const std::string& uv,
                                      const std::filesystem::path& venv, Mode mode);

// install_argv and manifest::child_environment, plus each index's credentials as uv's
// UV_INDEX_<NAME>_USERNAME/_PASSWORD (only in this environment, never in argv).
Invocation step_invocation(const manifest::Manifest& m, const manifest::Step& step,
                           const std::filesystem::path& requirements_file, const std::string& uv,
                           const std::filesystem::path& venv, const base::Environment& caller, Mode mode);

// `uv pip uninstall --python <venv>/bin/python --no-config ... NAME...`: what a
// step's `remove:` resolved to, uninstalled before the step installs.
std::vector<std::string> uninstall_argv(const std::vector<std::string>& names, const std::string& uv,
                                        const std::filesystem::path& venv, Mode mode);
// uninstall_argv with manifest::child_environment: as hermetic as the install.
Invocation removal_invocation(const manifest::Manifest& m, const std::vector<std::string>& names,
                              const std::string& uv, const std::filesystem::path& venv,
                              const base::Environment& caller, Mode mode);

// One line of a requirements file: "torch==2.11.0+cu130 --hash=sha256:<hex>"
// (uv verifies the hash of every line that has one); no hash when `sha256` is "".
std::string requirement_line(const std::string& requirement, const std::string& sha256);
// The file's text: a header saying where it comes from, then one line each.
std::string requirements_text(const std::vector<std::string>& lines);

}  // namespace stackup::installer

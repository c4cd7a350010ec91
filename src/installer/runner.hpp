#pragma once
// Runs uv for a step, streaming its lines, and reads its summary.

#include <string>

#include "base/process.hpp"
#include "installer/command.hpp"
#include "installer/summary.hpp"

namespace stackup::installer {

struct RunResult {
    base::ProcessResult process;
    UvSummary summary;
};

RunResult run(const Invocation& invocation, const base::LineSink& on_line);

// "uv 0.13.9 (...)" -> that line; throws Error(preflight_failed) when uv cannot run.
std::string uv_version(const std::string& uv, const base::Environment& env);

}  // namespace stackup::installer

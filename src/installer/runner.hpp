#pragma once
// Runs uv for a step, streaming its lines, and reads its summary.

#include <string>
#include <string_view>

#include "base/process.hpp"
#include "installer/command.hpp"
#include "installer/summary.hpp"

namespace stackup::installer {

struct RunResult {
    base::ProcessResult process;
    UvSummary summary;
};

RunResult run(const Invocation& invocation, const base::LineSink& on_line);

// The oldest uv stackup drives: named indexes (`--index NAME=URL`, UV_INDEX_<NAME>_USERNAME /
// _PASSWORD for their credentials) came in 0.4.23.
inline constexpr const char* kMinimumUv = "0.4.23";

// "uv 0.13.9 (...)" -> that line; throws Error(preflight_failed) when uv cannot run, or its
// answer is no uv version (check_uv_version).
std::string uv_version(const std::string& uv, const base::Environment& env);

// What is wrong with `uv --version`'s first line for stackup ("" when nothing): no
// "uv X.Y.Z", or older than kMinimumUv. `uv` is the program, for the message.
std::string check_uv_version(std::string_view line, const std::string& uv);

}  // namespace stackup::installer

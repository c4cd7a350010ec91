#pragma once
// Shared by the fuzz targets: the input as text, and the one rule for what a parser may throw.
//
// A parser of untrusted text may refuse it only in the way its header documents: nullopt, an
// error field, or stackup::Error (and std::runtime_error where the header says so). Anything
// else escaping (std::out_of_range, a nlohmann or YAML exception, a crash) is a finding.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "base/error.hpp"

namespace stackup::fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// "<first line>\n<the rest>" as the two inputs of a target that takes two; the rest is empty
// when there is no newline.
inline std::pair<std::string_view, std::string_view> first_line_and_rest(std::string_view text) {
    auto newline = text.find('\n');
    if (newline == std::string_view::npos) {
        return {text, {}};
    }
    return {text.substr(0, newline), text.substr(newline + 1)};
}

// Runs `parse`, swallowing the refusals its contract allows.
template <typename Parse>
void expecting_errors(Parse&& parse) {
    try {
        parse();
    } catch (const stackup::Error&) {
    }
}

template <typename Parse>
void expecting_runtime_errors(Parse&& parse) {
    try {
        parse();
    } catch (const std::runtime_error&) {
    }
}

// A broken invariant: abort, so that libFuzzer (or the replay driver) reports the input.
inline void check(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

}  // namespace stackup::fuzz

#define STACKUP_FUZZ_TARGET extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)

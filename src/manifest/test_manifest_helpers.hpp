#pragma once
// Test helper of the manifest parser's tests: a fixed environment, the smallest valid
// manifest, and the check that a text fails to parse at m.yaml:line:col with a message.

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>

#include "base/error.hpp"
#include "manifest/manifest.hpp"

namespace stackup::manifest::testing {

// A fixed environment, so tests never depend on the caller's HOME or variables.
inline EnvLookup fake_env(std::map<std::string, std::string> vars = {{"HOME", "/home/u"}}) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
}

inline ParseOptions options(std::map<std::string, std::string> vars = {{"HOME", "/home/u"}}) {
    ParseOptions o;
    o.env = fake_env(std::move(vars));
    return o;
}

struct Failure {
    std::string message;
    int line = 0;
    int column = 0;
    std::string file;
    ExitCode code = ExitCode::ok;
};

inline Failure parse_failure(const std::string& text, const ParseOptions& o = options()) {
    try {
        parse(text, "m.yaml", o);
    } catch (const Error& e) {
        Failure f{e.what(), 0, 0, "", e.code()};
        if (e.where()) {
            f.line = e.where()->line;
            f.column = e.where()->column;
            f.file = e.where()->file;
        }
        return f;
    }
    FAIL("the manifest parsed, but an error was expected:\n" << text);
    return {};
}

// Asserts an exit-2 error at m.yaml:line:col whose message contains `substring`.
inline void check_failure(const std::string& text, int line, int column, const std::string& substring,
                          const ParseOptions& o = options()) {
    Failure f = parse_failure(text, o);
    INFO("message: " << f.message);
    CHECK(f.code == ExitCode::usage);
    CHECK(f.file == "m.yaml");
    CHECK(f.line == line);
    CHECK(f.column == column);
    CHECK(f.message.find(substring) != std::string::npos);
}

// The smallest valid manifest; tests append to it or spell out their own.
inline const std::string minimal = R"(version: 1
venv: /srv/env
indexes:
  pypi: https://pypi.example/simple
steps:
  - name: one
    index: pypi
    packages: [six]
)";

}  // namespace stackup::manifest::testing

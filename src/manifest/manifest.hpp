#pragma once
// The typed manifest, schema version 1 (PRODUCT.md). Every field is validated
// by the parser; downstream code never sees a bad specifier or an unknown index.

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "pep/requirement.hpp"
#include "pep/specifier.hpp"

namespace stackup::manifest {

// What one distribution must look like after a step (and every later one).
struct Expectation {
    std::string dist;                              // normalized (PEP 503)
    std::optional<pep::SpecifierSet> version;      // on the installed version
    std::optional<std::string> local;              // exact local label, "cu130"
    std::optional<std::string> cuda;               // the module's version.cuda
    std::optional<std::string> import_name;        // module to import; default: the dist's top-level module
    std::map<std::string, std::string> attrs;      // dotted attribute -> expected str()
    SourceLocation where;                          // of the dist's key in the manifest
    friend bool operator==(const Expectation&, const Expectation&) = default;
};

struct Step {
    std::string name;
    std::string index;                             // a key of Manifest::indexes
    std::vector<pep::Requirement> packages;        // empty only when `remove` or `expect` is not (an expect-only step installs nothing)
    std::vector<std::string> remove;               // normalized names or patterns (nvidia-*-cu12), uninstalled first
    bool prerelease = false;
    bool deps = true;
    std::vector<Expectation> expect;               // in manifest order
    SourceLocation where;
    friend bool operator==(const Step&, const Step&) = default;
};

struct Check {
    std::string name;
    std::string python;                            // code run with the venv's python -c
    SourceLocation where;                          // of the check's entry
    friend bool operator==(const Check&, const Check&) = default;
};

struct Cuda {
    std::string toolkit;                           // "13.0"
    std::filesystem::path home;                    // default /usr/local/cuda-<toolkit>
    std::optional<pep::SpecifierSet> driver;       // ">=580.65.06"
    bool require_driver = false;
    // The GPUs the kernels must run on, as compute capabilities ("9.0", "12.0"), each once;
    // empty: the GPUs nvidia-smi reports, else none judged.
    std::vector<std::string> arch;
    friend bool operator==(const Cuda&, const Cuda&) = default;
};

struct Manifest {
    std::filesystem::path source;                  // the file it was read from
    std::string digest;                            // sha256 of the file's bytes, hex
    int version = 1;
    std::string name;
    std::filesystem::path venv;                    // ~ and ${VAR} expanded, absolute
    std::optional<std::string> python;             // "3.12"
    std::optional<Cuda> cuda;
    std::map<std::string, std::string> indexes;    // name -> simple-API root URL, ${VAR} expanded
    std::optional<std::string> default_index;      // a key of indexes
    std::vector<Step> steps;
    std::vector<Check> checks;
    std::vector<std::string> allow_mixed;          // normalized dist names
    std::vector<std::string> allow_unmet;          // normalized dist names whose unmet requirements a step may leave
    std::map<std::string, std::string> env;
    int snapshot_keep = 3;
    friend bool operator==(const Manifest&, const Manifest&) = default;
};

// A `remove:` entry (a normalized name, or a pattern of one with * and ?) against a normalized name.
bool removal_matches(const std::string& pattern, const std::string& normalized);

// Looks up an environment variable; nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

struct ParseOptions {
    // The CLI's --venv: replaces the manifest's `venv` (made absolute against the cwd).
    std::optional<std::filesystem::path> venv_override;
    // For ~ (HOME) and ${VAR} in `venv` and `cuda.home`, ${VAR} in index URLs; empty: the process environment.
    EnvLookup env;
};

// Parses manifest text; `file` names it in errors and anchors a relative venv.
// Throws Error(ExitCode::usage) with file:line:col for every problem: unknown or
// near-miss keys (with "did you mean"), duplicate keys, wrong types, undefined
// index names, bad specifiers or requirements, an unknown schema version, no
// venv, no steps.
Manifest parse(const std::string& text, const std::string& file, const ParseOptions& options = {});
// Reads and parses a file; an unreadable file is also exit 2.
Manifest load(const std::filesystem::path& path, const ParseOptions& options = {});

// The most a manifest or a saved plan may hold. A real one is a few KB (a saved plan of a
// thousand pins, under 400 KB); the cap keeps an endless or a wrong file (/dev/zero, a
// 10 MB file) from costing more than this much memory and a few milliseconds.
inline constexpr std::size_t max_input_bytes = std::size_t{1} << 20;  // 1 MiB

// The bytes of a manifest or plan at `path`, read once (a pipe and `<(...)` work), at most
// max_input_bytes; a directory, an unreadable file or more bytes are Error(ExitCode::usage)
// naming `what` ("manifest") and the path.
std::string read_input(const std::filesystem::path& path, std::string_view what);

}  // namespace stackup::manifest

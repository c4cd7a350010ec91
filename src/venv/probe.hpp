#pragma once
// Facts about a venv, from ONE short run of its own python: the interpreter,
// every installed distribution, and the imports the expectations ask for.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/process.hpp"
#include "venv/binaries.hpp"

namespace stackup::venv {

struct Interpreter {
    std::string executable;
    std::string version;           // "3.11.7"
    int major = 0;
    int minor = 0;
    std::string implementation;    // "cpython"
    std::string soabi;             // "cpython-311-x86_64-linux-gnu"
    std::string machine;           // "x86_64"
    std::string libc;              // "glibc 2.36", "" when unknown
    bool is_venv = false;          // sys.prefix != sys.base_prefix
    friend bool operator==(const Interpreter&, const Interpreter&) = default;
};

struct Distribution {
    std::string name;              // as in its metadata
    std::string normalized;        // PEP 503
    std::string version;           // as in its metadata
    std::vector<std::string> requires_dist{};  // its Requires-Dist lines, as written (markers included)
    friend bool operator==(const Distribution&, const Distribution&) = default;
};

// What to import for one expectation; an empty module means "the dist's top-level module".
struct ImportRequest {
    std::string dist;              // normalized
    std::string module;
    std::vector<std::string> attrs;  // dotted attribute paths below the module
    friend bool operator==(const ImportRequest&, const ImportRequest&) = default;
};

struct ImportResult {
    std::string dist;
    std::string module;            // the module actually imported (or tried)
    std::optional<std::string> error;        // the import's exception, when it failed
    std::optional<std::string> version;      // str(module.__version__)
    std::optional<std::string> cuda;         // str(module.version.cuda), None -> nullopt
    std::map<std::string, std::string> attrs;        // resolved attrs -> str(value)
    std::map<std::string, std::string> attr_errors;  // unresolved attrs -> why
    // Non-empty when nothing was imported because the dist installs no module (a metapackage,
    // data or a bare namespace only): why; its metadata alone is judged.
    std::string skipped{};
    // Are the imported module's files the ones the dist installed (sha256 in its RECORD)? Asked
    // only when __version__ differs from the metadata version as a string.
    enum class Record { unchecked, matches, differs, not_listed, no_record };
    Record file_record = Record::unchecked;
    std::string file{};            // the file file_record is about: __file__, or the first that differs
    friend bool operator==(const ImportResult&, const ImportResult&) = default;
};

struct Facts {
    Interpreter interpreter;
    std::vector<Distribution> distributions;   // sorted by normalized name
    std::vector<ImportResult> imports;         // in request order
    // The interpreter's PEP 508 marker environment: python_version, python_full_version,
    // os_name, sys_platform, platform_machine, platform_system, platform_release,
    // platform_version, platform_python_implementation, implementation_name, implementation_version.
    std::map<std::string, std::string> markers;
    // The dists' shared objects: what they link, their CUDA kernels, the CUDA libraries missing.
    BinaryFacts binaries{};

    const Distribution* find(const std::string& normalized) const;
    const ImportResult* import_of(const std::string& dist) const;
};

std::filesystem::path python_of(const std::filesystem::path& venv);

// Whether the probe's imports may write bytecode (.pyc) into the venv. Judging a venv the
// user has not agreed to change never does (`python -B`); building a generation, or an
// in-place apply the snapshot covers, does, so that each later import of a module the
// upgrade brought reads its bytecode instead of compiling it from source again.
struct Bytecode {
    bool write = false;
    // The path the .pyc files name as their source's folder instead of `venv` (a generation
    // built at one path and switched in at another); "" names `venv` itself.
    std::filesystem::path named_as;
};

// Runs the probe, then reads the dists' shared objects (scan_binaries, with the process's cache).
// Throws Error(preflight_failed) when the venv has no python or
// the probe cannot run. `env` is the probe's whole environment.
Facts probe(const std::filesystem::path& venv, const std::vector<ImportRequest>& requests,
            const base::Environment& env, const Bytecode& bytecode = {});

// Pure halves of probe(), for tests: the request document and the result's parser.
std::string probe_request_json(const std::vector<ImportRequest>& requests,
                               const std::filesystem::path& venv = {}, const Bytecode& bytecode = {});
Facts parse_probe_result(const std::string& json_text);

}  // namespace stackup::venv

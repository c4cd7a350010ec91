#pragma once
// The saved plan (`plan --out FILE`, `apply FILE`): what apply will do, as a
// reviewable, versioned JSON document. Pure: values in, text out, and back.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "plan/planner.hpp"
#include "venv/probe.hpp"

namespace stackup::plan {

inline constexpr int plan_schema_version = 1;

struct SavedPackage {
    std::string name;          // normalized
    std::string requirement;   // as the manifest wrote it
    std::string installed;     // at planning time; "" when it was not installed
    std::string version;       // the chosen file's version, local label included
    std::string change;        // upgrade, downgrade, reinstall, new, skip
    std::string index;         // the manifest's name of the index the file is on
    std::string filename;
    std::string url;           // credentials stripped
    std::string sha256;        // "" when the index gave none
    std::string pin;           // "torch==2.11.0.dev20251230+cu130", extras and marker kept
    std::string skipped{};     // change "skip": why (its marker is false here); no file then
    friend bool operator==(const SavedPackage&, const SavedPackage&) = default;
};

struct SavedStep {
    std::string name;
    std::string index;
    std::vector<SavedPackage> packages;
    std::vector<std::string> argv;               // the exact uv command, credentials masked
    std::vector<std::string> requirements;       // the lines of the requirements file argv names
    std::map<std::string, std::string> env;      // what stackup sets for uv (credentials masked)
    std::vector<std::string> remove{};           // the installed dists its `remove:` matched, uninstalled first
    std::vector<std::string> remove_argv{};      // the exact uv uninstall; empty when nothing matched
    friend bool operator==(const SavedStep&, const SavedStep&) = default;
};

// The venv as the plan saw it: what a change of makes the plan stale.
struct VenvState {
    std::string python;                                // "3.11.7"
    std::string executable;
    std::string soabi;
    std::map<std::string, std::string> distributions;  // normalized name -> version
    std::string digest;                                // sha256 over all of the above
    friend bool operator==(const VenvState&, const VenvState&) = default;
};

struct SavedPlan {
    int schema = plan_schema_version;
    std::string created;             // UTC, ISO 8601
    std::string stackup_version;
    std::string manifest;            // absolute path
    std::string manifest_sha256;     // of the manifest file's bytes
    std::string venv;                // absolute path
    VenvState venv_state;
    std::string toolkit;             // what nvcc reported; "" when the manifest asks none
    std::string driver;              // the driver seen; "" when none was seen or asked
    std::vector<std::string> env_dropped;  // the caller's variables uv will not see (names only)
    std::vector<SavedStep> steps;
    friend bool operator==(const SavedPlan&, const SavedPlan&) = default;
};

VenvState venv_state_of(const venv::Facts& facts);

// What changed between the venv a plan saw and the venv now, one line each
// ("torch changed from 2.10.0+cu128 to 2.9.1"); empty when nothing did.
std::vector<std::string> venv_changes(const VenvState& then, const VenvState& now);

std::string to_json(const SavedPlan& plan);

// Throws Error(usage) naming `origin` and what is wrong: not JSON, another
// schema version, a missing or mistyped field.
SavedPlan parse_saved_plan(std::string_view text, const std::string& origin);

// True when the text looks like a saved plan rather than a YAML manifest.
bool looks_like_saved_plan(std::string_view text);

// The planner's plan rebuilt from a saved one, so apply installs exactly it.
Plan plan_of(const SavedPlan& saved);

}  // namespace stackup::plan

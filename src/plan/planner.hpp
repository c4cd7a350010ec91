#pragma once
// The pure planner: manifest + venv facts + fetched index pages -> the exact
// file each requested package will install, or why none fits.

#include <optional>
#include <string>
#include <vector>

#include "index/client.hpp"
#include "index/select.hpp"
#include "manifest/manifest.hpp"
#include "venv/probe.hpp"

namespace stackup::plan {

struct PlannedPackage {
    std::string name;                    // normalized
    std::string requirement;             // as the manifest wrote it
    std::string installed;               // "" when not installed now
    std::string index;                   // where the chosen file lives
    std::optional<index::Choice> choice;
    std::string problem;                 // the near miss, when nothing fits

    // The exact pin the installer gets: "torch==2.11.0.dev20251230+cu130" (extras
    // and marker kept); the requirement as written when nothing was chosen.
    std::string pin(const pep::Requirement& requirement) const;
    // upgrade, downgrade, reinstall, new
    std::string change() const;
};

struct PlannedStep {
    std::string name;
    std::string index;
    std::vector<PlannedPackage> packages;   // one per requirement, in order
};

struct Plan {
    std::vector<PlannedStep> steps;
    std::vector<std::string> problems;      // every near miss, one line each
    std::vector<std::string> warnings;
    bool ok() const { return problems.empty(); }
};

// The pages a plan needs: each package on its step's index and, when the
// manifest has one, on default_index (where uv looks next).
std::vector<index::PageRequest> pages_needed(const manifest::Manifest& m);
// For the packages found nowhere so far: every other index, to say where they are.
std::vector<index::PageRequest> pages_elsewhere(const manifest::Manifest& m,
                                                const std::vector<index::ProjectPage>& pages);

Plan make_plan(const manifest::Manifest& m, const venv::Facts& facts,
               const std::vector<index::ProjectPage>& pages);

}  // namespace stackup::plan

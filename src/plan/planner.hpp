#pragma once
// The pure planner: manifest + venv facts + fetched index pages -> the exact
// file each requested package will install, or why none fits.

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "index/client.hpp"
#include "index/select.hpp"
#include "manifest/manifest.hpp"
#include "pep/tags.hpp"
#include "venv/probe.hpp"
#include "verify/requires.hpp"

namespace stackup::plan {

struct PlannedPackage {
    std::string name;                    // normalized
    std::string requirement;             // as the manifest wrote it
    std::string installed;               // "" when not installed now
    std::string index;                   // where the chosen file lives
    std::optional<index::Choice> choice;
    std::string problem;                 // the near miss, when nothing fits
    std::string skipped;                 // why it is not installed at all: its marker is false here

    // The exact pin the installer gets: "torch==2.11.0.dev20251230+cu130" (extras
    // and marker kept); the requirement as written when nothing was chosen.
    std::string pin(const pep::Requirement& requirement) const;
    // upgrade, downgrade, reinstall, new; skip (marker false); none (no file fits)
    std::string change() const;
};

// One `remove:` entry resolved against the venv as it is: a row per installed
// dist it matches, or one row with an empty name when it matches nothing.
struct PlannedRemoval {
    std::string pattern;                 // normalized, as in the manifest
    std::string name;                    // the installed dist; "" when the pattern matches nothing
    std::string installed;               // its version
    friend bool operator==(const PlannedRemoval&, const PlannedRemoval&) = default;
};

struct PlannedStep {
    std::string name;
    std::string index;
    std::vector<PlannedRemoval> removals;   // uninstalled first, in manifest order
    std::vector<PlannedPackage> packages;   // one per requirement, in order
};

// A requirement the plan sees broken after a step (against the venv before the apply): the
// requirements of what is installed now, met by the versions the steps pin. What the steps
// install and what uv adds as dependencies bring requirements the plan does not know.
struct PredictedBreak {
    std::size_t step = 0;                 // the step after which it is first broken
    verify::BrokenRequirement broken;
    verify::Repair repair;                // verify::repair_of: who can still repair it
    bool accepted = false;                // allow_unmet names its dist
    std::optional<std::size_t> gone;      // the step after which the plan no longer sees it; nullopt: left at the end
    std::string text;                     // one line: what, and what becomes of it
};

struct Plan {
    std::vector<PlannedStep> steps;
    std::vector<PredictedBreak> between;    // requirements broken between steps (predicted_breaks)
    std::vector<std::string> problems;      // every near miss, one line each
    std::vector<std::string> warnings;
    std::vector<std::string> notes;         // worth knowing, never a reason to stop
    std::string end_state;                  // the end-state problem (also in `problems`), "" when none
    bool ok() const { return problems.empty(); }
};

// The pages a plan needs: each package on its step's index and, when the
// manifest has one, on default_index (where uv looks next).
std::vector<index::PageRequest> pages_needed(const manifest::Manifest& m);
// For the packages found nowhere so far: every other index, to say where they are.
std::vector<index::PageRequest> pages_elsewhere(const manifest::Manifest& m,
                                                const std::vector<index::ProjectPage>& pages);

// The venv's interpreter as every selection sees it, worked out once from the probe's facts.
struct SelectionTarget {
    explicit SelectionTarget(const venv::Facts& facts);
    pep::TagRanking tags;    // its supported tags, best first
    pep::Version python;     // "3.11.7"
    std::string python_tag;  // "cp311"
};

// Makes, as each page arrives, every selection make_plan would make on it (each package of
// each step whose index, or default_index, the page is from), then lets the page's files go:
// a plan then holds one page's files at a time, not every page's (60,000 files for 20 real
// projects). Given to index::fetch_pages as its on_page, then to make_plan.
class Picker {
public:
    Picker(const manifest::Manifest& m, const venv::Facts& facts);
    void operator()(index::ProjectPage& page);
    // The selection made for package `package` of step `step` on `index`'s page; nullptr when none was.
    const index::Selection* picked(std::size_t step, std::size_t package, const std::string& index) const;

private:
    const manifest::Manifest& m_;
    const venv::Facts& facts_;
    SelectionTarget target_;
    std::map<std::tuple<std::size_t, std::size_t, std::string>, index::Selection> picked_;
};

// `picker`: the selections it made as the pages came (their files are gone); without one,
// each selection is made here on the pages' files.
Plan make_plan(const manifest::Manifest& m, const venv::Facts& facts,
               const std::vector<index::ProjectPage>& pages, const Picker* picker = nullptr);

// A requirement whose PEP 508 marker is false for the venv (markers from the probe, extra "")
// is not installed: it is planned as skipped. An unreadable marker is a problem, never a skip.
// nullopt when the marker holds (or there is none): plan the package.
std::optional<PlannedPackage> marker_skip(const pep::Requirement& req, const venv::Facts& facts);

// Each `remove:` of `step` against the installed dists.
std::vector<PlannedRemoval> resolve_removals(const manifest::Step& step, const std::vector<venv::Distribution>& dists);

// The venv after step `through` (0-based) as far as the plan knows it: installed now, less
// every removal, plus every chosen file (dependencies uv adds are not known here). A dist
// pinned to another version than the installed one has no requirements (the plan does not
// know the new ones); one reinstalled at its version keeps them.
std::vector<venv::Distribution> predicted_state(const venv::Facts& facts, const Plan& plan, std::size_t through);
// predicted_state after the last step.
std::vector<venv::Distribution> predicted_end_state(const venv::Facts& facts, const Plan& plan);

// The requirements of the venv's installed dists that the steps' pins and removals break, step
// by step, and when each is no longer seen (its dist replaced or removed, or the dist it requires
// pinned to a version that fits). A pinned dist's own requirements are unknown here (kept when
// it is pinned to the version installed now).
std::vector<PredictedBreak> predicted_breaks(const manifest::Manifest& m, const venv::Facts& facts, const Plan& plan);

// The problem line when the end state would still hold a build for another CUDA
// than the manifest's target, with the exact `remove:` / `allow_mixed` lines that
// fix it; "" when it would not (or when the manifest names no target).
std::string end_state_problem(const manifest::Manifest& m, const venv::Facts& facts, const Plan& plan);
// With no target CUDA: a warning when the end state would hold builds for several CUDA
// majors (nothing judges them then); "" otherwise.
std::string untargeted_mix(const manifest::Manifest& m, const venv::Facts& facts, const Plan& plan);

}  // namespace stackup::plan

#pragma once
// The data of a run: the options it is given, what each step and check did, the report the
// CLI prints, the outcome decided from it, and the Observer's hooks for live output.
// Every txn phase speaks these types; apply.hpp is only the entry points.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/http.hpp"
#include "base/process.hpp"
#include "index/page_cache.hpp"
#include "installer/summary.hpp"
#include "manifest/manifest.hpp"
#include "plan/plan_file.hpp"
#include "plan/planner.hpp"
#include "snapshot/store.hpp"
#include "venv/processes.hpp"
#include "venv/probe.hpp"
#include "verify/requires.hpp"
#include "verify/verify.hpp"

namespace stackup::txn {

struct Options {
    std::filesystem::path venv;        // absolute
    std::filesystem::path state_dir;   // this venv's own state folder
    std::string uv;                    // program name or path
    base::Environment caller_env;
    base::HttpOptions http;            // for the index pages
    index::CacheOptions page_cache;    // where index pages are kept, and whether
    snapshot::Strategy snapshot_strategy = snapshot::Strategy::automatic;
    // `apply PLAN`: install exactly this saved plan (refused when stale) instead of planning.
    std::optional<plan::SavedPlan> saved_plan;
    // `apply --stage`: build and verify the next generation, stop before the switch.
    bool stage = false;
    // Processes using the venv (venv/processes.hpp) keep the switch from happening (the
    // generation is staged, exit 8) unless `switch_running`; `wait_running_s` waits that many
    // seconds for them to end first.
    bool switch_running = false;
    int wait_running_s = 0;
    // Whether the step probes write bytecode into `venv`: only where it is being changed
    // (the generation being built, or the venv of an in-place apply, which the snapshot
    // covers); set by each mode, never by the caller.
    venv::Bytecode bytecode;
};

// How an apply changes the venv. blue_green: every step runs in a clone beside the
// venv, which one exchange switches in once it is verified; in_place: the steps run
// in the venv itself, and a failure restores the snapshot taken before.
enum class Mode { blue_green, in_place };
std::string_view to_string(Mode mode);

struct PackageRow {
    std::string name;     // normalized
    std::string before;   // "" when not installed
    std::string after;    // "" when removed
    friend bool operator==(const PackageRow&, const PackageRow&) = default;
};

enum class StepStatus { pending, ok, installer_failed, installer_no_op, verification_failed, interrupted };
std::string_view to_string(StepStatus status);

struct StepReport {
    std::string name;
    StepStatus status = StepStatus::pending;
    std::vector<std::string> remove_argv;    // the uninstall of what `remove:` matched, redacted; empty when nothing
    std::vector<std::string> argv;           // the install, redacted; empty for a step that only removes
    std::vector<std::string> requirements;   // the lines of the requirements file argv names
    std::vector<PackageRow> packages;        // every dist uv changed, and the step's own
    installer::UvSummary summary;
    std::string installer_error;             // uv's status when it failed
    std::vector<verify::Judgement> checks;   // every expectation checked after the step, passed or not
    std::vector<verify::Mismatch> mismatches;
    // Requirements newly broken after the step (against the venv before the apply): those a
    // later step can repair pass for now, and are shown.
    std::vector<verify::RequirementVerdict> broken;
    std::size_t imported = 0;  // expectations imported again after the step
    std::size_t carried = 0;   // expectations whose earlier import stands: nothing they need changed
    double seconds = 0;
};

struct CheckReport {
    std::string name;
    bool ok = false;
    std::string output;
};

// interrupted: a signal stopped the run before its switch (blue/green) or its end (in place),
// and the venv is as it was; a signal after that leaves the outcome applied, `signal` set.
// not_finished: stackup itself could not finish (the clone, relocation, the live venv's check,
// the switch: `stopped` says which), and the venv is as it was.
enum class Outcome { applied, verification_failed, installer_failed, not_finished, rollback_failed, interrupted };

struct ApplyReport {
    Outcome outcome = Outcome::applied;
    std::string uv_version;
    plan::Plan plan;                            // the exact pins each step installs
    std::string snapshot_id;
    std::filesystem::path snapshot_path;
    std::vector<StepReport> steps;
    std::vector<CheckReport> checks;
    std::vector<verify::Mismatch> mismatches;   // what failed the run
    std::string failure;                        // one line: why the run failed (the first reason found)
    // What stopped the run that was neither uv nor a verification: an exception, or blue/green's
    // clone, relocation, live venv or switch; "" when nothing did.
    std::string stopped;
    int signal = 0;                             // the SIGINT/SIGTERM/SIGHUP that stopped it, 0: none
    bool rolled_back = false;
    std::string rollback_error;                 // when the restore itself failed
    std::vector<std::string> rollback_warnings; // e.g. where an old tree could not be removed
    std::vector<std::string> pruned;            // snapshot ids removed by retention
    std::vector<std::string> snapshot_damage;   // hard links: files of the snapshot written in place meanwhile
    Mode mode = Mode::blue_green;
    std::string mode_reason;                    // in place: why the venv could not be exchanged
    std::filesystem::path clone;                // blue/green: where the next generation was built
    std::string generation_id;                  // the generation the apply made ("" when none)
    std::uint64_t generation = 0;               // its number
    bool switched = false;                      // blue/green: the venv is the new generation now
    bool staged = false;                        // --stage: built and verified, not switched in
    // The processes that used the venv at the switch: they kept it from happening (`blocked`:
    // staged instead, exit 8), or, with switch_running, they still run the old code.
    std::vector<venv::ProcessUse> running;
    std::size_t running_unreadable = 0;         // processes whose use of the venv could not be read
    bool blocked = false;
    std::vector<std::string> relocated;         // files of the clone rewritten to name the venv's path
    std::vector<std::string> recovered;         // what an earlier, interrupted run left, and what became of it
    // Blue/green: what changed in the live venv while the next generation was built (another
    // writer, or an in-place write through a file the clone shares with it); empty when nothing.
    std::vector<std::string> live_drift;
    // How long each phase took, in order ("preflight", "base", "clone", "steps", "relocate",
    // "live check", "record", "switch", "prune"; in place: "snapshot", "steps", "record").
    std::vector<std::pair<std::string, double>> phases;
    bool dry_run = false;                       // made by dry_run(): nothing was touched

    ExitCode exit_code() const;
};

// A requirement broken after one step and no longer after a later one (accepted ones aside).
struct RepairedRequirement {
    verify::BrokenRequirement broken;  // as first seen
    std::string broken_by;             // the step after which it was first broken
    std::string repaired_by;           // the step after which it no longer was
};

// Every requirement a run's steps broke and a later step repaired, in the order first seen.
std::vector<RepairedRequirement> repaired_between_steps(const ApplyReport& report);

// "pandas 2.1.4 requires numpy<2 ..., but numpy 2.2.6 is installed (repaired by step 'pandas')"
std::string describe(const RepairedRequirement& r);

// The one place a run's outcome is decided, from what its phases recorded: a failed restore
// (rollback_error) beats everything; then the first failed step (installer failure, no-op or
// verification); then a failed manifest check; then what stopped the run; else applied.
[[nodiscard]] Outcome decide(const ApplyReport& report);

// The run's outcome from its steps alone: the first failed step decides.
[[nodiscard]] Outcome outcome_of(const std::vector<StepReport>& steps);

// What became of the venv itself, whatever the outcome: the one answer the CLI's text and
// --json give (`venv_fate`), so that neither works it out again from the report's fields.
enum class VenvFate {
    unchanged,         // nothing in it changed: a dry run, a blue/green run stopped before its
                       // switch, an in-place run stopped before its first change
    switched,          // blue/green: it is the new generation (the run may still have failed after)
    changed_in_place,  // in place: the steps ran in it, and it holds their result
    staged,            // the next generation is built and verified beside it, not switched in
    drifted,           // blue/green, not switched, but it changed while the next generation was built
    restored,          // in place: the run failed, and the snapshot taken before was restored exactly
    restore_failed,    // in place: the run failed, and so did the restore: it is neither before nor after
};
std::string_view to_string(VenvFate fate);
[[nodiscard]] VenvFate venv_fate(const ApplyReport& report);
// Whether the venv differs from before the run: switched, changed in place, drifted, or left
// half-restored.
[[nodiscard]] bool changed(VenvFate fate);

// Hooks for live output; every method has a default that does nothing.
class Observer {
public:
    virtual ~Observer() = default;
    virtual void preflight(const venv::Facts&, const std::string& /*uv_version*/) {}
    virtual void planned(const plan::Plan&) {}
    virtual void snapshot_taken(const std::string& /*id*/, const std::filesystem::path&) {}
    virtual void step_started(std::size_t /*index*/, std::size_t /*count*/, const StepReport&) {}
    virtual void installer_line(std::string_view) {}
    virtual void step_finished(std::size_t /*index*/, const StepReport&) {}
    virtual void check_finished(const CheckReport&) {}
    virtual void rolling_back(const std::string& /*snapshot_id*/, const std::string& /*why*/) {}
    virtual void cloned(const std::filesystem::path& /*clone*/, std::uint64_t /*base_generation*/) {}
    virtual void switching(const std::filesystem::path& /*venv*/) {}
};

namespace detail {

// Records what stopped the run (the first reason is the one the run reports).
void stop(ApplyReport& report, const std::string& why);

// A check point: true when a SIGINT, SIGTERM or SIGHUP came (base/interrupt.hpp), and then the
// report says so (`signal`, failure "interrupted by SIGINT"); the caller stops and undoes.
bool interrupted(ApplyReport& report);

}  // namespace detail

}  // namespace stackup::txn

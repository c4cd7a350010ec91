// stackup apply MANIFEST: the transaction, with live output.
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include "base/argv.hpp"
#include "base/interrupt.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/recovery.hpp"
#include "cli/render.hpp"
#include "txn/apply.hpp"
#include "txn/running.hpp"

namespace stackup::cli {
namespace {

// Live output: each step's counter, uv's lines indented under it and, on a
// terminal, a status line with the step's clock; then what changed.
class TerminalObserver : public txn::Observer {
public:
    enum class Commands { when_verbose, always };
    TerminalObserver(std::ostream& out, const CommonOptions& common, Commands commands)
        : verbosity_(common.verbosity), paint_(common.paint), commands_(commands), status_(out, common.live) {}

    void preflight(const venv::Facts& facts, const std::string& uv_version) override {
        say("  " + uv_version + ", python " + facts.interpreter.version + ", " +
            std::to_string(facts.distributions.size()) + " distributions installed");
    }
    void planned(const plan::Plan& plan) override {
        std::istringstream table(render_plan(plan, paint_));
        for (std::string line; std::getline(table, line);) {
            say("  " + line);
        }
    }
    void snapshot_taken(const std::string& id, const std::filesystem::path& path) override {
        say("  snapshot " + id + " taken (" + path.string() + ")");
    }
    void step_started(std::size_t index, std::size_t count, const txn::StepReport& step) override {
        std::string counter = "[" + std::to_string(index + 1) + "/" + std::to_string(count) + "] " + step.name;
        say(paint_(counter, Color::bold));
        if (verbosity_ == Verbosity::verbose || commands_ == Commands::always) {
            if (!step.remove_argv.empty()) {
                say("    $ " + base::render_argv(step.remove_argv));
            }
            if (!step.argv.empty()) {
                say("    $ " + base::render_argv(step.argv));
            }
            for (const auto& line : step.requirements) {
                say("      " + line);
            }
        }
        if (verbosity_ != Verbosity::quiet) {
            status_.start(counter);
        }
    }
    void installer_line(std::string_view line) override {
        say("    | " + std::string(line));
    }
    void step_finished(std::size_t, const txn::StepReport& step) override {
        status_.stop();
        for (const auto& row : step.packages) {
            say("    " + render_package_row(row));
        }
        for (const auto& v : step.broken) {
            if (!v.fails()) {  // the failing ones are the run's failure, listed at the end
                say("    " + paint_(v.accepted ? "unmet (accepted)" : "broken for now", Color::yellow) + ": " +
                    verify::describe(v));
            }
        }
        for (const auto& j : step.checks) {
            if (j.warning) {
                say("    " + paint_("warning", Color::yellow) + ": " + j.dist + ": " + j.found);
            }
        }
        bool ok = step.status == txn::StepStatus::ok;
        say("    " + paint_(std::string(txn::to_string(step.status)), ok ? Color::green : Color::red) + " (" +
            fmt::format("{:.1f}", step.seconds) + "s" +
            (step.carried == 0 ? std::string()
                               : "; " + std::to_string(step.imported) + " expectation(s) imported again, " +
                                     std::to_string(step.carried) + " unchanged since their last import") +
            ")");
    }
    void check_finished(const txn::CheckReport& check) override {
        say(std::string("  check '") + check.name + "': " + (check.ok ? paint_("ok", Color::green) : paint_("FAILED", Color::red)));
    }
    void rolling_back(const std::string& id, const std::string&) override {
        say(paint_("  rolling back to snapshot " + id + " ...", Color::yellow));
    }
    void cloned(const std::filesystem::path& clone, std::uint64_t base) override {
        say("  generation " + std::to_string(base) + " (the venv as it is) cloned at " + clone.string() +
            "; every step runs there, the live venv is only read");
    }
    void switching(const std::filesystem::path& venv) override {
        say("  switching " + venv.string() + " to the verified generation (one rename) ...");
    }

private:
    void say(const std::string& line) {
        if (verbosity_ != Verbosity::quiet) {
            status_.print(line);
        }
    }
    Verbosity verbosity_;
    Paint paint_;
    Commands commands_;
    StatusLine status_;
};

// At most a screenful: the changed packages (the first few when there are many).
void print_changes(std::ostream& out, const txn::ApplyReport& r, const Paint& paint) {
    constexpr std::size_t kShown = 12;
    std::vector<txn::PackageRow> changed;
    for (const auto& s : r.steps) {
        for (const auto& p : s.packages) {
            if (p.before != p.after) {
                changed.push_back(p);
            }
        }
    }
    out << (r.staged ? paint("built", Color::green) : paint("applied", Color::green)) << ": " << r.steps.size() << " step(s), " << changed.size()
        << " package(s) changed" << (changed.empty() ? "." : ":") << "\n";
    for (std::size_t i = 0; i < changed.size() && i < kShown; ++i) {
        const auto& p = changed[i];
        out << "  " << p.name << "  " << (p.before.empty() ? "-" : p.before) << " -> "
            << (p.after.empty() ? "-" : p.after) << "  " << paint(change_kind(p), color_of_change(change_kind(p)))
            << "\n";
    }
    if (changed.size() > kShown) {
        out << "  ... and " << changed.size() - kShown << " more (`--json` lists them all)\n";
    }
}

// The processes the run found using the venv, as the scan that found them.
venv::ProcessScan running_scan(const txn::ApplyReport& r) {
    return {.using_venv = r.running, .unreadable = r.running_unreadable};
}

// An applied run: what it verified, where the new generation is (staged, switched or in place), how to undo it.
int print_applied(const txn::ApplyReport& r, const txn::Options& o, const Paint& paint) {
    std::ostream& out = std::cout;
    std::size_t checks = 0;
    for (const auto& s : r.steps) {
        checks += s.checks.size();
    }
    print_changes(out, r, paint);
    out << "verified: " << checks << " check(s) after the steps, " << r.checks.size()
        << " manifest check(s); every expectation holds after every step.\n";
    for (const auto& repaired : txn::repaired_between_steps(r)) {
        out << "between steps: " << txn::describe(repaired) << "\n";
    }
    for (const auto& line : r.recovered) {
        out << "note: " << line << "\n";
    }
    if (r.staged && r.blocked) {
        out << paint("staged", Color::green) << ": generation " << r.generation << " (" << r.generation_id
            << ") is built and verified beside " << o.venv.string() << ", which was not changed.\n";
        std::cerr << "stackup: " << paint("not switched", Color::yellow) << ": "
                  << describe_running(running_scan(r), o.venv, command_for("switch", o.venv, o.state_dir)) << "\n";
        return static_cast<int>(r.exit_code());
    }
    if (r.staged) {
        out << paint("staged", Color::green) << ": generation " << r.generation << " (" << r.generation_id
            << ") is built and verified beside " << o.venv.string() << ", which was not changed.\n"
            << "to switch it in: " << command_for("switch", o.venv, o.state_dir) << "\n";
        return 0;
    }
    if (r.mode == txn::Mode::blue_green) {
        out << "switched: " << o.venv.string() << " is generation " << r.generation << " (" << r.generation_id
            << "), built and verified beside it and exchanged in one rename";
        if (!r.relocated.empty()) {
            out << "; " << r.relocated.size() << " file(s) that named the build path now name the venv";
        }
        out << ".\n";
    } else {
        out << "in place (" << r.mode_reason << "): the steps ran in the venv itself.\n";
    }
    out << "previous generation: " << r.snapshot_id << " (" << r.snapshot_path.string() << ")\n";
    if (!r.snapshot_damage.empty()) {
        out << paint("warning", Color::yellow) << ": that snapshot was changed in place during the run ("
            << r.snapshot_damage.front() << "): it cannot restore; take a fresh one\n";
    }
    out << "to undo: " << command_for("rollback", o.venv, o.state_dir) << "\n";
    print_needs_restart(std::cerr, r.running, paint);
    if (r.signal != 0) {
        std::cerr << "stackup: interrupted by " << base::interrupts::name(r.signal) << " after "
                  << (r.mode == txn::Mode::blue_green ? "the switch" : "the last step verified")
                  << ": the upgrade is live in " << o.venv.string() << " and recorded; to undo it: "
                  << command_for("rollback", o.venv, o.state_dir) << "\n";
    }
    return static_cast<int>(r.exit_code());
}

// An interrupted run; true when nothing is left to say (the venv is as it was).
bool print_interrupted(const txn::ApplyReport& r, const txn::Options& o, const Paint& paint) {
    const auto fate = txn::venv_fate(r);
    if (fate == txn::VenvFate::unchanged) {
        std::cerr << "stackup: " << r.failure << "; " << paint("nothing was changed in " + o.venv.string(), Color::green)
                  << (r.mode == txn::Mode::blue_green ? " (the next generation beside it is discarded)" : "") << "\n";
        return true;
    }
    if (fate == txn::VenvFate::restored) {
        std::cerr << "stackup: " << r.failure << "; " << paint("the venv " + o.venv.string() + " was restored", Color::green)
                  << " to snapshot " << r.snapshot_id << ", exactly as it was\n";
        return true;
    }
    std::cerr << "stackup: " << r.failure << "; see below\n";
    return false;
}

// What a drifted live venv keeps, and what that means for the generation it was built from.
void print_drift(const txn::ApplyReport& r, const txn::Options& o, const Paint& paint) {
    std::cerr << "stackup: " << paint("warning", Color::yellow) << ": the live venv " << o.venv.string()
              << " was not switched, but it CHANGED while the next generation was built (" << r.live_drift.size()
              << " change(s), first: " << r.live_drift.front()
              << "): a file the clone shares with it (hard links) was written in place, by something the "
                 "build ran or by another process; it keeps that change.\n";
    if (!r.snapshot_damage.empty()) {
        std::cerr << "  the generation it was built from no longer matches its files (first: " << r.snapshot_damage.front()
                  << "): a rollback to it is refused until a fresh one is taken\n";
    }
}

// A failed run: why, each mismatch, and what became of the venv (txn::venv_fate).
void print_failure(const txn::ApplyReport& r, const txn::Options& o, const Paint& paint) {
    std::cerr << "stackup: " << paint("FAILED", Color::red) << ": " << r.failure << "\n";
    for (const auto& m : r.mismatches) {
        std::cerr << "  " << verify::describe(m) << "\n";
    }
    switch (txn::venv_fate(r)) {
        case txn::VenvFate::restore_failed:
            std::cerr << "stackup: " << paint("CRITICAL", Color::red) << ": the rollback failed: " << r.rollback_error
                      << "\n  the snapshot taken before the run is " << r.snapshot_path.string() << "\n";
            return;
        case txn::VenvFate::drifted: print_drift(r, o, paint); return;
        case txn::VenvFate::restored:
            std::cerr << paint("rolled back", Color::green) << " to snapshot " << r.snapshot_id
                      << ": the venv is exactly as it was before the run (tree re-checked).\n";
            return;
        case txn::VenvFate::switched:
        case txn::VenvFate::changed_in_place:
            std::cerr << "stackup: " << paint("the venv " + o.venv.string() + " holds the upgrade", Color::yellow)
                      << ", though the run did not finish; to undo it: " << command_for("rollback", o.venv, o.state_dir)
                      << "\n";
            return;
        case txn::VenvFate::unchanged:
        case txn::VenvFate::staged:
            std::cerr << paint("nothing was changed in " + o.venv.string(), Color::green)
                      << (r.mode == txn::Mode::blue_green
                              ? ": every step ran in the next generation beside it, which is discarded.\n"
                              : ": the run stopped before its first change.\n");
            return;
    }
}

int print_outcome(const txn::ApplyReport& r, const txn::Options& o, const CommonOptions& common) {
    const Paint& paint = common.paint;
    if (r.outcome == txn::Outcome::applied) {
        return print_applied(r, o, paint);
    }
    if (r.outcome == txn::Outcome::interrupted && print_interrupted(r, o, paint)) {
        return static_cast<int>(r.exit_code());
    }
    print_failure(r, o, paint);
    return static_cast<int>(r.exit_code());
}

int print_dry_run(const txn::ApplyReport& r, const txn::Options& o, const std::string& manifest, const Paint& paint) {
    if (r.outcome == txn::Outcome::applied) {
        std::cout << paint("dry run", Color::green)
                  << ": every wheel exists and uv's dry run of each step succeeded; nothing was touched.\n";
        if (!r.running.empty() && !o.switch_running) {
            std::cout << paint("note", Color::yellow) << ": the switch would not happen now: "
                      << describe_running(running_scan(r), o.venv, command_for("apply", o.venv, o.state_dir, {manifest})) << "\n";
        }
        return 0;
    }
    if (r.outcome == txn::Outcome::interrupted) {
        std::cerr << "stackup: dry run " << r.failure << "; nothing was touched.\n";
        return static_cast<int>(r.exit_code());
    }
    std::cerr << "stackup: dry run " << paint("FAILED", Color::red) << ": " << r.failure
              << "\n  nothing was touched.\n";
    return static_cast<int>(r.exit_code());
}

}  // namespace

std::function<int()> setup_apply(CLI::App& sub, const CommonOptions& common) {
    auto manifest_path = std::make_shared<std::string>();
    auto dry = std::make_shared<bool>(false);
    sub.add_option("manifest", *manifest_path, "the manifest (YAML), or a plan saved by `plan --out`")->required()->type_name("MANIFEST|PLAN");
    auto stage = std::make_shared<bool>(false);
    auto running = std::make_shared<RunningOptions>();
    sub.add_flag("--dry-run", *dry, "preflight, the exact uv commands and uv's own dry run; touches nothing");
    sub.add_flag("--stage", *stage, "build and verify the next generation beside the venv; `stackup switch` puts it in later");
    add_running_options(sub, *running);
    return [manifest_path, dry, stage, running, &common] {
        auto [m, saved] = load_manifest_or_plan(*manifest_path, common);
        auto options = txn_options(common, &m);
        options.saved_plan = std::move(saved);
        options.stage = *stage;
        set_running(options, *running);
        if (common.verbosity != Verbosity::quiet) {
            std::cout << "stackup: apply " << (*dry ? "--dry-run " : "")
                      << (options.saved_plan ? "the plan " + *manifest_path + " (" + m.source.string() + ")"
                                             : *manifest_path)
                      << " to " << options.venv.string() << "\n";
        }
        using Commands = TerminalObserver::Commands;
        TerminalObserver observer(std::cout, common, *dry ? Commands::always : Commands::when_verbose);
        common.doc->body()["manifest"] = m.source.string();
        common.doc->body()["plan_file"] = options.saved_plan ? Json(*manifest_path) : Json(nullptr);
        if (*dry) {
            auto report = txn::dry_run(m, options, observer);
            add_apply(*common.doc, report);
            return print_dry_run(report, options, *manifest_path, common.paint);
        }
        auto report = txn::apply(m, options, observer);
        add_apply(*common.doc, report);
        return print_outcome(report, options, common);
    };
}

}  // namespace stackup::cli

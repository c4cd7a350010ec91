#include "txn/report.hpp"

#include <algorithm>

#include "base/interrupt.hpp"

namespace stackup::txn {

namespace {

bool still_broken(const StepReport& step, const verify::BrokenRequirement& b) {
    return std::any_of(step.broken.begin(), step.broken.end(), [&](const verify::RequirementVerdict& v) {
        return v.broken.dist == b.dist && v.broken.requirement == b.requirement;
    });
}

}  // namespace

Outcome outcome_of(const std::vector<StepReport>& steps) {
    for (const auto& s : steps) {
        if (s.status == StepStatus::interrupted) {
            return Outcome::interrupted;
        }
        if (s.status == StepStatus::installer_failed || s.status == StepStatus::installer_no_op) {
            return Outcome::installer_failed;
        }
        if (s.status == StepStatus::verification_failed) {
            return Outcome::verification_failed;
        }
    }
    return Outcome::applied;
}

std::vector<RepairedRequirement> repaired_between_steps(const ApplyReport& report) {
    std::vector<RepairedRequirement> out;
    // Only the steps that were judged: ok, or failed by verification (then the run stopped there).
    std::vector<const StepReport*> steps;
    for (const auto& s : report.steps) {
        if (s.status == StepStatus::ok || s.status == StepStatus::verification_failed) {
            steps.push_back(&s);
        }
    }
    for (std::size_t k = 0; k < steps.size(); ++k) {
        for (const auto& v : steps[k]->broken) {
            bool seen = k > 0 && still_broken(*steps[k - 1], v.broken);
            if (v.accepted || seen) {
                continue;
            }
            for (std::size_t j = k + 1; j < steps.size(); ++j) {
                if (!still_broken(*steps[j], v.broken)) {
                    out.push_back({v.broken, steps[k]->name, steps[j]->name});
                    break;
                }
            }
        }
    }
    return out;
}

std::string describe(const RepairedRequirement& r) {
    return verify::describe(r.broken) + " (repaired by step '" + r.repaired_by + "')";
}

Outcome decide(const ApplyReport& report) {
    if (!report.rollback_error.empty()) {
        return Outcome::rollback_failed;
    }
    if (report.signal != 0 && !report.switched) {
        return Outcome::interrupted;  // whatever else a stopped child left in the report
    }
    if (const Outcome steps = outcome_of(report.steps); steps != Outcome::applied) {
        return steps;
    }
    if (std::any_of(report.checks.begin(), report.checks.end(), [](const CheckReport& c) { return !c.ok; })) {
        return Outcome::verification_failed;
    }
    return report.stopped.empty() ? Outcome::applied : Outcome::not_finished;
}

VenvFate venv_fate(const ApplyReport& report) {
    if (report.dry_run) {
        return VenvFate::unchanged;
    }
    if (!report.rollback_error.empty()) {
        return VenvFate::restore_failed;
    }
    if (report.rolled_back) {
        return VenvFate::restored;
    }
    if (report.switched) {
        return VenvFate::switched;
    }
    if (report.mode == Mode::blue_green) {
        return !report.live_drift.empty() ? VenvFate::drifted
               : report.staged            ? VenvFate::staged
                                          : VenvFate::unchanged;
    }
    // In place, an applied run changed the venv; a failed one restored it (above), unless it
    // stopped before the snapshot, and so before any change.
    return report.outcome == Outcome::applied ? VenvFate::changed_in_place : VenvFate::unchanged;
}

bool changed(VenvFate fate) {
    return fate == VenvFate::switched || fate == VenvFate::changed_in_place || fate == VenvFate::drifted ||
           fate == VenvFate::restore_failed;
}

std::string_view to_string(VenvFate fate) {
    switch (fate) {
        case VenvFate::unchanged: return "unchanged";
        case VenvFate::switched: return "switched";
        case VenvFate::changed_in_place: return "changed in place";
        case VenvFate::staged: return "staged";
        case VenvFate::drifted: return "drifted";
        case VenvFate::restored: return "restored";
        case VenvFate::restore_failed: return "restore failed";
    }
    return "?";
}

std::string_view to_string(Mode mode) {
    return mode == Mode::blue_green ? "blue-green" : "in-place";
}

std::string_view to_string(StepStatus status) {
    switch (status) {
        case StepStatus::pending: return "not run";
        case StepStatus::ok: return "ok";
        case StepStatus::installer_failed: return "installer failed";
        case StepStatus::installer_no_op: return "installer no-op";
        case StepStatus::verification_failed: return "verification failed";
        case StepStatus::interrupted: return "interrupted";
    }
    return "?";
}

ExitCode ApplyReport::exit_code() const {
    if (signal != 0) {  // before the switch (interrupted) or after it (applied, and said so)
        return static_cast<ExitCode>(base::interrupts::exit_status(signal));
    }
    switch (outcome) {
        case Outcome::interrupted: return static_cast<ExitCode>(base::interrupts::exit_status(2));
        case Outcome::applied: return blocked ? ExitCode::running : ExitCode::ok;
        case Outcome::verification_failed: return ExitCode::verification_failed;
        case Outcome::installer_failed: return ExitCode::installer_failed;
        case Outcome::not_finished: return ExitCode::not_finished;
        case Outcome::rollback_failed: return ExitCode::rollback_failed;
    }
    return ExitCode::rollback_failed;
}

namespace detail {

void stop(ApplyReport& report, const std::string& why) {
    if (report.stopped.empty()) {
        report.stopped = why;
    }
    if (report.failure.empty()) {
        report.failure = why;
    }
}

bool interrupted(ApplyReport& report) {
    const int signal = base::interrupts::received();
    if (signal == 0) {
        return false;
    }
    report.signal = signal;
    const std::string why = std::string("interrupted by ") + base::interrupts::name(signal);
    if (report.failure.rfind("interrupted by ", 0) != 0) {
        report.failure = why;  // whatever the signal's child made of it is not the reason
    }
    return true;
}

}  // namespace detail

}  // namespace stackup::txn

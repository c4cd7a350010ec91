#include "txn/apply.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/error.hpp"
#include "base/fs.hpp"
#include "base/interrupt.hpp"
#include "base/log.hpp"
#include "manifest/environment.hpp"
#include "snapshot/store.hpp"
#include "txn/journal.hpp"
#include "txn/lock.hpp"
#include "txn/preflight.hpp"
#include "txn/retention.hpp"
#include "txn/running.hpp"
#include "txn/saved_plan.hpp"
#include "txn/state_dir.hpp"
#include "txn/phases.hpp"
#include "txn/recover.hpp"
#include "txn/steps.hpp"

namespace stackup::txn {
namespace {

using detail::Laps;

// Everything before the first change, shared by apply and its dry run.
venv::Facts preflight(const manifest::Manifest& m, const Options& options, const base::Environment& env,
                      Observer& observer, ApplyReport& report) {
    report.uv_version = installer::uv_version(options.uv, env);
    venv::Facts facts;
    if (options.saved_plan) {
        facts = inspect_host(m, options.venv, env).facts;
        observer.preflight(facts, report.uv_version);
        // `apply PLAN`: no re-resolving, and nothing of a venv that moved on since.
        check_saved_plan(*options.saved_plan, m, facts);
        report.plan = plan::plan_of(*options.saved_plan);
    } else {
        auto preflight = inspect_and_plan(m, options.venv, env, options.http, options.page_cache);
        facts = std::move(preflight.host.facts);
        observer.preflight(facts, report.uv_version);
        report.plan = std::move(preflight.plan);
    }
    observer.planned(report.plan);
    require_plan_ok(report.plan);
    for (const auto& step : m.steps) {
        StepReport pending;
        pending.name = step.name;
        report.steps.push_back(std::move(pending));
    }
    return facts;
}

// A venv the apply cannot write is refused before anything is taken: both modes change it (the
// exchange moves its root, an in-place step writes in it). As root, only a read-only mount or an
// immutable flag stops a write, and access() sees both.
void require_writable(const std::filesystem::path& venv) {
    if (::access(venv.c_str(), W_OK) != 0) {
        const int error = errno;
        throw Error(ExitCode::preflight_failed, venv.string() + " cannot be changed (" + std::strerror(error) +
                                                    "); nothing was touched");
    }
}

// The mode an apply runs in, and why in place when it must be.
Mode choose_mode(const snapshot::Store& store, const Options& options, ApplyReport& report) {
    if (options.snapshot_strategy != snapshot::Strategy::automatic &&
        options.snapshot_strategy != snapshot::Strategy::hardlink) {
        report.mode_reason = "--snapshot-strategy " + snapshot::to_string(options.snapshot_strategy) +
                             " asks for a snapshot the venv cannot be switched with";
        return Mode::in_place;
    }
    if (auto blocker = store.exchange_blocker(options.venv)) {
        report.mode_reason = *blocker;
        return Mode::in_place;
    }
    return Mode::blue_green;
}

// An earlier run's open journal: a blue/green one is resolved here (the venv is whole, old
// or new); an in-place one stops this run with exit 7, its snapshot being the way back.
void resolve_earlier(snapshot::Store& store, const Options& options, ApplyReport& report) {
    auto open = open_transaction(options.state_dir);
    if (!open) {
        return;
    }
    if (!open->blue_green) {
        throw InterruptedError(*open, options.state_dir);
    }
    report.recovered.push_back(resolve_blue_green(store, options.state_dir, options.venv, *open));
    base::log::warn(report.recovered.back());
}

// uv takes an environment's lock by creating <venv>/.lock, even for --dry-run:
// a dry run leaves the venv as it found it, the lock file and the folder's times included.
class LeaveLockFileAsFound {
public:
    explicit LeaveLockFileAsFound(const std::filesystem::path& venv) : venv_(venv), lock_(venv / ".lock") {
        std::error_code ec;
        existed_ = std::filesystem::exists(std::filesystem::symlink_status(lock_, ec));
        known_ = ::stat(venv_.c_str(), &before_) == 0;
    }
    LeaveLockFileAsFound(const LeaveLockFileAsFound&) = delete;
    LeaveLockFileAsFound& operator=(const LeaveLockFileAsFound&) = delete;
    ~LeaveLockFileAsFound() {
        std::error_code ec;
        if (existed_ || !known_ || !std::filesystem::exists(std::filesystem::symlink_status(lock_, ec))) {
            return;
        }
        if (::unlink(lock_.c_str()) != 0) {
            base::log::warn("cannot remove the lock file uv left in " + venv_.string() + ": " + std::strerror(errno));
            return;
        }
        const struct timespec times[2] = {before_.st_atim, before_.st_mtim};
        ::utimensat(AT_FDCWD, venv_.c_str(), times, 0);
    }

private:
    std::filesystem::path venv_;
    std::filesystem::path lock_;
    bool existed_ = true;
    bool known_ = false;
    struct stat before_ {};
};

}  // namespace

ApplyReport apply(const manifest::Manifest& m, const Options& options, Observer& observer) {
    auto lock = acquire_lock(options.state_dir, "apply " + m.source.string());
    snapshot::Store store(options.state_dir);
    ApplyReport report;
    Laps laps(report);
    // What the last apply's retention set aside is deleted while this one works.
    std::jthread trash([&store] {
        try {
            (void)store.empty_trash();
        } catch (const std::exception& e) {
            base::log::debug(std::string("the store's trash stays for the next run: ") + e.what());
        }
    });
    resolve_earlier(store, options, report);
    auto env = manifest::child_environment(m, options.venv, options.caller_env);
    venv::Facts facts = preflight(m, options, env, observer, report);
    if (const int signal = base::interrupts::received()) {
        throw Error(static_cast<ExitCode>(base::interrupts::exit_status(signal)),
                    std::string("interrupted by ") + base::interrupts::name(signal) +
                        " during the preflight; nothing was touched in " + options.venv.string());
    }
    require_writable(options.venv);
    report.mode = choose_mode(store, options, report);
    if (report.mode == Mode::in_place && !options.stage) {
        // In place, the steps change the files under the processes: named before anything is.
        auto scan = require_unused(options, "not applied in place (" + report.mode_reason + "), nothing was touched",
                                   NextCommand::Verb::apply, {m.source.string()});
        report.running = std::move(scan.using_venv);
        report.running_unreadable = scan.unreadable;
    }
    if (options.stage && report.mode != Mode::blue_green) {
        throw Error(ExitCode::preflight_failed, "cannot stage the next generation: " + report.mode_reason +
                                                    "; nothing was touched");
    }
    if (auto discarded = discard_staged(store, options.state_dir, "this apply replaces it")) {
        report.recovered.push_back(*discarded);
        base::log::warn(*discarded);
    }
    auto journal = Journal::begin(options.state_dir, m.source.string(), options.venv.string(),
                                  std::string(to_string(report.mode)));
    laps.lap("preflight");
    if (report.mode == Mode::blue_green) {
        detail::apply_blue_green(m, options, observer, store, journal, std::move(facts), report, laps);
    } else {
        detail::apply_in_place(m, options, observer, store, journal, std::move(facts), report);
    }
    report.outcome = decide(report);
    if (report.outcome == Outcome::applied) {
        // A signal after the switch (or the in-place commit): the upgrade is live; said, 128+N.
        (void)detail::interrupted(report);
    }
    if (report.outcome == Outcome::applied && !report.staged) {
        report.pruned = prune(store, options.state_dir, options.venv, m.snapshot_keep,
                              report.generation_id.empty() ? report.snapshot_id : report.generation_id, true);
        laps.lap("prune");
    }
    return report;
}

ApplyReport dry_run(const manifest::Manifest& m, const Options& options, Observer& observer) {
    auto env = manifest::child_environment(m, options.venv, options.caller_env);
    ApplyReport report;
    report.dry_run = true;
    venv::Facts facts = preflight(m, options, env, observer, report);
    // No lock is taken, so nothing of a concurrent apply's state is written to.
    base::ScratchDir scratch("stackup-dry-run-");
    LeaveLockFileAsFound untouched(options.venv);
    StepRunner run(m, options, observer, env, scratch.path(), installer::Mode::dry_run);
    for (std::size_t i = 0; i < m.steps.size() && run.step(i, facts, report); ++i) {
    }
    (void)detail::interrupted(report);
    report.outcome = decide(report);
    // What would keep the switch from happening: the processes using the venv now (said, not
    // waited for; the dry run's exit code stays its own).
    auto scan = venv::processes_using(options.venv);
    report.running = std::move(scan.using_venv);
    report.running_unreadable = scan.unreadable;
    return report;
}

}  // namespace stackup::txn

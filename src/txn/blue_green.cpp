// Blue/green: every step runs in a clone beside the live venv, which only one exchange changes.

#include <set>
#include <thread>

#include "base/failpoint.hpp"
#include "base/fs.hpp"
#include "base/log.hpp"
#include "base/text.hpp"
#include "snapshot/copy.hpp"
#include "txn/phases.hpp"
#include "txn/recover.hpp"
#include "txn/retention.hpp"
#include "txn/running.hpp"
#include "venv/relocate.hpp"

namespace stackup::txn::detail {

namespace {

// Blue/green: the generation the venv is (or a fresh snapshot of it), cloned into its
// ready tree, where every step runs and is verified; the live venv is only read.
class BlueGreen {
public:
    BlueGreen(const manifest::Manifest& m, const Options& options, Observer& observer, snapshot::Store& store,
              Journal& journal, ApplyReport& report, Laps& laps)
        : m_(m), options_(options), observer_(observer), store_(store), journal_(journal), report_(report),
          laps_(laps) {}

    void run(venv::Facts facts) {
        base_ = base_generation(facts);
        laps_.lap("base");
        report_.snapshot_id = base_.id;
        report_.snapshot_path = base_.dir;
        if (base_taken_) {
            observer_.snapshot_taken(base_.id, base_.dir);
        }
        if (!clone() || !build(facts)) {
            discard();
            return;
        }
        report_.generation_id = generation_.id;
        report_.generation = generation_.generation;
        if (!options_.stage) {
            may_switch();
        }
        if (interrupted(report_)) {  // the last check point before the venv changes
            discard();
            return;
        }
        if (options_.stage || report_.blocked) {
            record_staged(options_.state_dir, {generation_.id, base_.id, m_.source.string(), generation_.created});
            report_.staged = true;
            note(journal_, Ending::staged,
                 "generation " + generation_.id + " staged" +
                     (report_.blocked ? " (" + std::to_string(report_.running.size()) + " process(es) use the venv)"
                                      : std::string()) +
                     "; `stackup switch` puts it in");
            return;
        }
        switch_in();
    }

private:
    // The switch rule (txn/running.hpp): processes using the venv block the switch unless
    // switch_running; they are kept in the report either way.
    void may_switch() {
        auto scan = processes_at_switch(options_);
        report_.running = std::move(scan.using_venv);
        report_.running_unreadable = scan.unreadable;
        report_.blocked = !report_.running.empty() && !options_.switch_running;
    }

    // The venv's own generation when it has not changed since; else a snapshot of it now.
    snapshot::SnapshotInfo base_generation(const venv::Facts& facts) {
        std::optional<snapshot::SnapshotInfo> live;
        try {
            live = store_.live(options_.venv);
        } catch (const std::exception& e) {
            base::log::debug(std::string("no live generation: ") + e.what());
        }
        if (live) {
            record_taken(journal_, live->id);
            return *live;
        }
        base_taken_ = true;
        return take_snapshot(store_, m_, options_, snapshot::Strategy::hardlink, facts, journal_);
    }

    // Clones the base into its ready tree; false for a damaged base. A clone that cannot be made
    // (the disk full, say) fails like the preflight: no step ran and the venv was only read.
    // Its half is removed, not left to fill the disk; the base generation stays (it is whole:
    // the clone only links its files).
    bool clone() {
        try {
            (void)store_.prepare(base_.id, false);  // synced once, before the switch
            report_.clone = std::filesystem::canonical(store_.tree_of(base_));
            return true;
        } catch (const Error& e) {
            if (e.code() != ExitCode::rollback_failed) {
                fail_clone(e.what());
            }
            stop(report_, std::string("cannot clone the venv: ") + e.what());
        } catch (const std::exception& e) {
            fail_clone(e.what());
        }
        return false;
    }

    [[noreturn]] void fail_clone(const std::string& why) {
        snapshot::discard_after_failure(store_.tree_of(base_));
        journal_.discard();
        throw Error(ExitCode::preflight_failed, "cannot clone " + options_.venv.string() + " into " +
                                                    store_.tree_of(base_).string() + ": " + why +
                                                    "; nothing was changed in " + options_.venv.string());
    }

    // Runs every step and check in the clone, and records it as a generation; false on failure.
    bool build(venv::Facts& facts) {
        const venv::Facts before = facts;
        laps_.lap("clone");
        observer_.cloned(report_.clone, base_.generation);
        base::failpoint("cloned");
        Options build = options_;
        build.venv = report_.clone;
        build.bytecode = {true, options_.venv};  // part of building it, named for where it goes
        if (interrupted(report_)) {
            return false;
        }
        run_all(m_, build, observer_, journal_, facts, report_);
        laps_.lap("steps");
        if (interrupted(report_) || decide(report_) != Outcome::applied) {
            return false;
        }
        start_early_sync();
        try {
            if (!relocate()) {
                return false;
            }
            laps_.lap("relocate");
            if (!live_unchanged()) {
                return false;
            }
            laps_.lap("live check");
            record(before, facts);
            laps_.lap("record");
            return true;
        } catch (const std::exception& e) {
            stop(report_, std::string("cannot finish the next generation: ") + e.what());
            return false;
        }
    }

    // No file of the clone may name the clone's path once it is the venv. Only what the build
    // wrote can: the files whose inode the base does not have (its directories list them, no
    // lstat), and of those only the ones an installer rewrites or no RECORD lists (relocate.hpp).
    bool relocate() {
        std::set<std::uint64_t> unchanged;
        for (const auto& e : store_.index(base_).entries) {
            if (e.type == snapshot::EntryType::file) {
                unchanged.insert(e.inode);
            }
        }
        std::vector<std::string> written;
        for (const auto& e : snapshot::index_tree(report_.clone, snapshot::Contents::identity).entries) {
            if (e.type == snapshot::EntryType::file && unchanged.count(e.inode) == 0) {
                written.push_back(e.path);
            }
        }
        auto moved = venv::relocate(report_.clone, report_.clone.string(), options_.venv.string(),
                                    venv::relocation_candidates(report_.clone, written));
        report_.relocated = moved.rewritten;
        report_.relocated.insert(report_.relocated.end(), moved.removed.begin(), moved.removed.end());
        if (!moved.refused.empty()) {
            stop(report_, "the next generation cannot be moved to " + options_.venv.string() + ": " +
                              base::join(moved.refused, ", ") + " name the build path " + report_.clone.string() +
                              " inside binary data");
            return false;
        }
        return true;
    }

    // What changed in the live venv since the clone was made. The clone shares every file it
    // did not replace with the venv (hard links), so an in-place write in the clone (a check
    // that appends to a file) lands in the venv too, as another process's write would.
    void check_live() {
        try {
            report_.live_drift = store_.drift(base_, options_.venv);
        } catch (const std::exception& e) {
            report_.live_drift = {std::string("cannot index the live venv: ") + e.what()};
        }
        if (!report_.live_drift.empty()) {
            try {
                report_.snapshot_damage = store_.verify(base_.id);
            } catch (const std::exception&) {
            }
        }
    }

    // Switching would lose what changed in the live venv meanwhile.
    bool live_unchanged() {
        check_live();
        if (report_.live_drift.empty()) {
            return true;
        }
        stop(report_, "the live venv " + options_.venv.string() + " changed while the next generation was built (" +
                          std::to_string(report_.live_drift.size()) + " change(s), first: " +
                          report_.live_drift.front() +
                          "): another process wrote to it, or something run in the clone wrote in place a file the "
                          "clone shares with it; switching would lose that change, so the new generation is discarded");
        return false;
    }

    void record(const venv::Facts& before, const venv::Facts& after) {
        snapshot::CreateRequest request;
        request.label = "apply of " + m_.name;
        request.manifest = m_.source.string();
        request.distributions = distribution_pairs(after);
        request.strategy = snapshot::Strategy::hardlink;
        request.venv = options_.venv;
        request.parent = base_.id;
        request.outcome = options_.stage ? "staged" : "applied";
        request.changes = changes_between(before, after);
        request.plan = installs_of(report_);
        generation_ = store_.create(report_.clone, request);
    }

    // What uv wrote (on the torch move, 3 GB) goes to disk while relocation, the live check and
    // the record run; the sync before the switch then writes only what they wrote.
    void start_early_sync() {
        early_sync_ = std::jthread([clone = report_.clone] {
            try {
                base::sync_filesystem(clone);
            } catch (const std::exception& e) {  // the sync before the switch says it
                base::log::debug(std::string("early sync: ") + e.what());
            }
        });
    }

    void switch_in() {
        if (early_sync_.joinable()) {
            early_sync_.join();
        }
        try {
            base::sync_filesystem(report_.clone);  // the new tree is on disk before it becomes the venv
        } catch (const std::exception& e) {
            base::log::warn(std::string("cannot sync the next generation before the switch: ") + e.what());
        }
        laps_.lap("sync");
        journal_.append(switching_record(generation_.id, report_.clone, options_.venv));
        observer_.switching(options_.venv);
        base::failpoint("before-switch");
        try {
            store_.exchange(base_, options_.venv);
        } catch (const std::exception& e) {
            stop(report_, std::string("the switch failed: ") + e.what());
            discard();
            return;
        }
        report_.switched = true;
        base::failpoint("after-switch");
        note(journal_, Ending::committed, "");
        laps_.lap("switch");
    }

    // The live venv was never switched: the clone goes back to being the base's ready tree.
    void discard() {
        base::failpoint("discarding");
        if (report_.live_drift.empty()) {
            check_live();  // a failed step or check may still have written through a shared file
        }
        if (!generation_.id.empty()) {
            try {
                (void)store_.remove(generation_.id);
            } catch (const std::exception& e) {
                base::log::warn("cannot remove the discarded generation " + generation_.id + ": " + e.what());
            }
        }
        try {
            (void)store_.prepare(base_.id);
        } catch (const std::exception& e) {
            base::log::debug("the discarded clone stays as it is until the next prepare: " + std::string(e.what()));
        }
        note(journal_, Ending::discarded,
             report_.failure + (report_.live_drift.empty()
                                    ? "; nothing was changed in " + options_.venv.string()
                                    : "; the live venv changed during the build: " + report_.live_drift.front()));
    }

    const manifest::Manifest& m_;
    const Options& options_;
    Observer& observer_;
    snapshot::Store& store_;
    Journal& journal_;
    ApplyReport& report_;
    Laps& laps_;
    snapshot::SnapshotInfo base_;
    bool base_taken_ = false;  // false: the venv was a recorded generation already
    snapshot::SnapshotInfo generation_;
    std::jthread early_sync_;  // last: joined before anything it outlives is gone
};

}  // namespace

void apply_blue_green(const manifest::Manifest& m, const Options& options, Observer& observer,
                      snapshot::Store& store, Journal& journal, venv::Facts facts, ApplyReport& report, Laps& laps) {
    BlueGreen(m, options, observer, store, journal, report, laps).run(std::move(facts));
}

}  // namespace stackup::txn::detail

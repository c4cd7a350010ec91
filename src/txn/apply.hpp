#pragma once
// The transaction: lock, snapshot, each step (install, verify), then commit or
// roll back. Reports are data (report.hpp); the CLI prints them.

#include "manifest/manifest.hpp"
#include "txn/report.hpp"

namespace stackup::txn {

// Throws Error for what stops the run before anything is touched (lock held:
// locked; an earlier run's journal still open: interrupted; no python, wrong
// interpreter, uv missing: preflight_failed). Once the snapshot exists, every
// failure ends in a restore and is reported as data. Each phase is journaled
// (txn/journal.hpp).
ApplyReport apply(const manifest::Manifest& m, const Options& options, Observer& observer);

// The same preflight and plan, then each step's exact uv command run with
// uv's own --dry-run: no lock, no snapshot, no journal, nothing touched. Each
// step's dry run sees the venv as it is now, not as the earlier steps would leave it.
// `running`: the processes that would keep the switch from happening now.
ApplyReport dry_run(const manifest::Manifest& m, const Options& options, Observer& observer);

}  // namespace stackup::txn

#pragma once
// Making a saved plan from a fresh one, and judging a saved plan against the
// venv and manifest of today (a stale plan is refused, naming what changed).

#include <filesystem>
#include <string>

#include "manifest/manifest.hpp"
#include "plan/plan_file.hpp"
#include "txn/report.hpp"
#include "txn/preflight.hpp"
#include "txn/state_dir.hpp"
#include "venv/probe.hpp"

namespace stackup::txn {


plan::SavedPlan make_saved_plan(const manifest::Manifest& m, const Options& options, const venv::Facts& facts,
                                const Seen& seen, const plan::Plan& plan);

// Throws Error(preflight_failed, "stale plan: ...") when the manifest's bytes
// or the venv's interpreter and distributions differ from what the plan saw.
void check_saved_plan(const plan::SavedPlan& saved, const manifest::Manifest& m, const venv::Facts& facts);

}  // namespace stackup::txn

#pragma once
// Renderers: reports in, strings out.

#include <string>

#include "cli/terminal.hpp"
#include "plan/planner.hpp"
#include "snapshot/store.hpp"
#include "txn/report.hpp"

namespace stackup::cli {

// "torch  2.10.0+cu128 -> 2.11.0.dev20251230+cu130  (upgrade)"
std::string render_package_row(const txn::PackageRow& row);
// upgrade, downgrade, reinstall, new, removed
std::string change_kind(const txn::PackageRow& row);

// The plan table: step, package, now -> planned, change, file; then each problem.
// With `paint` enabled the change column and the problems are coloured.
std::string render_plan(const plan::Plan& plan, const Paint& paint = {});

// The colour of a change kind: upgrade green, downgrade yellow, reinstall dim, new cyan.
Color color_of_change(const std::string& change);

// "812.4 MiB"
std::string render_bytes(std::uint64_t bytes);
// "20261202T160501Z-3fa9  2026-12-02T16:05:01Z  'manual'  1234 entries  12.0 MiB"
std::string render_snapshot_row(const snapshot::SnapshotInfo& info);
// Every metadata field, then one line per distribution.
std::string render_snapshot_details(const snapshot::SnapshotInfo& info);

}  // namespace stackup::cli

#pragma once
// Renderers: reports in, strings out.

#include <string>

#include "txn/apply.hpp"

namespace stackup::cli {

// "torch  2.10.0+cu128 -> 2.11.0.dev20251230+cu130  (upgrade)"
std::string render_package_row(const txn::PackageRow& row);
// upgrade, downgrade, reinstall, new, removed
std::string change_kind(const txn::PackageRow& row);

}  // namespace stackup::cli

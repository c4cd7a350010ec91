#pragma once
// The manifest's `checks`: python code run in the venv after the last step.

#include <filesystem>

#include "base/process.hpp"
#include "manifest/manifest.hpp"
#include "txn/report.hpp"
#include "verify/verify.hpp"

namespace stackup::txn {

// Runs one manifest check with the venv's python.
CheckReport run_check(const manifest::Manifest& m, const std::filesystem::path& venv, const base::Environment& env,
                      const manifest::Check& check);
verify::Mismatch check_mismatch(const CheckReport& c);

}  // namespace stackup::txn

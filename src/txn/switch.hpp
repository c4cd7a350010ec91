#pragma once
// `stackup switch`: puts the generation `apply --stage` built into the venv,
// with the same exchange an apply ends with, once it is sure the venv is still
// the generation the staged one was built from.

#include <cstdint>
#include <string>
#include <vector>

#include "txn/report.hpp"

namespace stackup::txn {

struct SwitchReport {
    std::string generation_id;    // the generation now live
    std::uint64_t generation = 0;
    std::string previous_id;      // the generation it replaced (`stackup rollback` goes back to it)
    std::uint64_t previous = 0;
    std::string manifest;
    std::vector<venv::ProcessUse> running;   // --switch-running: the processes that need a restart
};

// Throws Error: usage when nothing is staged; preflight_failed, touching nothing, when the
// venv is no longer the staged generation's base (a stale stage) or the staged tree changed.
SwitchReport switch_staged(const Options& options);

}  // namespace stackup::txn

#pragma once
// Small facts about this process's host, for records that say who and when.

#include <string>

namespace stackup::base {

// "2026-12-02T16:05:01Z"
std::string utc_now();
// gethostname(2); "" when unknown.
std::string host_name();

}  // namespace stackup::base

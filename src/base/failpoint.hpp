#pragma once
// Named moments where a test can stop the process to kill it there: the
// moments a kill -9 is the hardest to hit by timing (right before and right
// after a switch). Off unless the environment asks:
//   STACKUP_FAILPOINT=NAME       the moment to stop at
//   STACKUP_FAILPOINT_FILE=PATH  written (the pid) once stopped there
// The process then waits until it is killed, or goes on from there when a SIGINT, SIGTERM or
// SIGHUP comes (as one at that moment would). Nothing else reads these variables.

#include <string_view>

namespace stackup::base {

void failpoint(std::string_view name);

}  // namespace stackup::base

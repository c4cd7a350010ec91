#!/usr/bin/env bash
# Builds build-asan/ with AddressSanitizer + UndefinedBehaviorSanitizer (-DSTACKUP_SANITIZE=ON,
# any report fatal) and runs under it the unit tests, the fuzz targets' replay of their seeds and
# regressions, and the integration tests that cross every stage (plan, page cache, apply both ways,
# verify, rollback, a killed run's recovery). .ci/run runs it after contrib/test.sh.
#
#   contrib/sanitize.sh [CTEST ARGS...]     e.g. -R unit to run only the unit tests
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
contrib/bootstrap.sh --packages-only

build=build-asan
# -O1: ASan's advice (fast enough to run, quick to build); -g1: line numbers in reports.
contrib/configure.sh "$build" -DSTACKUP_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" >/dev/null
cmake --build "$build"

selected='^(unit|unit\..*|fuzz\.replay|differential\.pep440|integration\.(apply_upgrade|uv_noop_trap|plan_network|page_cache|saved_plan|rollback_command|generation_switch|journal_killed_apply|verify_mixed))$'
cd "$build"
if [ $# -gt 0 ]; then
  exec ctest --output-on-failure -j2 "$@"
fi
exec ctest --output-on-failure -j2 -R "$selected"

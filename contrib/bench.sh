#!/usr/bin/env bash
# The benchmarks in one command: builds Release into build-release/, runs
# tests/bench/generation_bench.py and plan_bench.py (local indexes, a generated 20,000-file
# venv, no network), prints one table of ratios against baselines timed in the same runs, and
# writes it with the date and the machine's facts to tests/bench/RESULTS.md.
#
#   contrib/bench.sh [--runs N]       (default 5; medians; takes ~5 minutes at 5)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
runs=5
if [ "${1:-}" = --runs ] && [[ "${2:-}" =~ ^[0-9]+$ ]]; then
  runs=$2
elif [ $# -gt 0 ]; then
  echo "usage: contrib/bench.sh [--runs N]" >&2
  exit 2
fi
contrib/bootstrap.sh --packages-only

build=build-release
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target stackup
out="$build/bench"
mkdir -p "$out"
uv=.tools/venv/bin/uv
python3 tests/bench/generation_bench.py --stackup "$build/stackup" --uv "$uv" --runs "$runs" --json "$out/generation.json"
python3 tests/bench/plan_bench.py --stackup "$build/stackup" --uv "$uv" --runs "$runs" --json "$out/plan.json"
echo
python3 tests/bench/report.py "$out" --out tests/bench/RESULTS.md --uv "$uv" --stackup "$build/stackup"

#!/usr/bin/env bash
# Fuzzes one parser, or all of them, with libFuzzer under ASan + UBSan.
#
#   contrib/fuzz.sh TARGET SECONDS       TARGET: a name from tests/fuzz/fuzz_*.cpp, or "all"
#   contrib/fuzz.sh --list
#
# Builds build-fuzz/ with clang (installs clang and libFuzzer from Debian if missing), seeds
# build-fuzz/corpus/TARGET from the fixtures (tests/fuzz/seeds.py), runs the target for SECONDS
# and prints its executions and coverage. A crash, hang or sanitizer report is saved under
# build-fuzz/artifacts/TARGET/ and the script exits 1: copy that input into
# tests/fuzz/regressions/TARGET/, where the CTest fuzz.replay runs it from then on.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
targets=$(ls tests/fuzz/fuzz_*.cpp | sed 's|.*/fuzz_||; s|\.cpp$||')

if [ "${1:-}" = "--list" ]; then
  echo "$targets"
  exit 0
fi
if [ $# -ne 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: contrib/fuzz.sh TARGET|all SECONDS   (contrib/fuzz.sh --list names the targets)" >&2
  exit 2
fi
want=$1 seconds=$2
if [ "$want" = all ]; then
  run=$targets
elif grep -qx "$want" <<<"$targets"; then
  run=$want
else
  echo "fuzz.sh: no target \"$want\"; targets: $(echo $targets)" >&2
  exit 2
fi

# clang 14 and its libFuzzer runtime, from Debian.
packages=(clang libclang-rt-14-dev cmake ninja-build)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz.sh: installing ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi
contrib/bootstrap.sh --packages-only

build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTACKUP_FUZZ=ON \
    -DCMAKE_CXX_COMPILER=clang++ >/dev/null
fi
cmake --build "$build" --target $(for t in $run; do echo "stackup_fuzz_$t"; done)

python3 tests/fuzz/seeds.py "$build/seeds" >/dev/null
status=0
for target in $run; do
  corpus="$build/corpus/$target" artifacts="$build/artifacts/$target/"
  mkdir -p "$corpus" "$artifacts"
  cp -n "$build/seeds/$target"/* "$corpus"/ 2>/dev/null || true
  log="$build/$target.log"
  echo "fuzz.sh: $target for ${seconds}s (corpus $corpus, log $log)"
  # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: 2 GB is a leak or a blow-up.
  if "$build/stackup_fuzz_$target" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$artifacts" >"$log" 2>&1; then
    result=ok
  else
    result="FOUND A PROBLEM (see $log and $artifacts)"
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -oE '(DONE|pulse|NEW|REDUCE|INITED) +cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+' || echo "cov: ?")
  printf '%-16s %8ss  %10s execs  %-22s corpus %5s  %s\n' "$target" "$seconds" "$execs" "$cov" \
    "$(ls "$corpus" | wc -l)" "$result"
done
exit $status

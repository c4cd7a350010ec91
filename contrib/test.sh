#!/usr/bin/env bash
# The one test command: bootstrap (packages, uv, build), then every test through CTest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/contrib/bootstrap.sh"
cd "$root/build"
ctest --output-on-failure -j2 "$@"

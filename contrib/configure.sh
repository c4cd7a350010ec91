#!/usr/bin/env bash
# Configures a build dir once (a second run leaves it as it is), compiling through ccache where
# it is installed, so a fresh clone (CI builds one twice: build/ and build-asan/) reuses the
# objects of the last one. CCACHE_BASEDIR + CCACHE_NOHASHDIR let two clones at different paths
# share entries; a definition that holds an absolute path (STACKUP_SOURCE_DIR) still keeps the
# objects that embed it apart, so nothing built for one clone is handed to another.
#
#   contrib/configure.sh BUILD_DIR [CMAKE ARGS...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$1; shift
[ -f "$root/$build/build.ninja" ] && exit 0

launcher=()
if command -v ccache >/dev/null; then
  launcher=("-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=1;ccache")
fi
cmake -S "$root" -B "$root/$build" -G Ninja "${launcher[@]}" "$@"

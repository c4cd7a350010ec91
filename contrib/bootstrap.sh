#!/usr/bin/env bash
# Installs what is missing (Debian -dev packages, the pinned uv in .tools/venv),
# then configures and builds into build/. Idempotent: a second run only rebuilds.
# --packages-only: stops after the packages and uv (contrib/fuzz.sh and contrib/sanitize.sh build elsewhere).
set -euo pipefail

UV_VERSION=0.13.9   # the uv the tests and the demo run; README names it
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

debian_packages=(
  g++ cmake ninja-build pkg-config
  libyaml-cpp-dev libcurl4-openssl-dev libboost-dev libboost-filesystem-dev
  libspdlog-dev libfmt-dev doctest-dev nlohmann-json3-dev libcli11-dev libgumbo-dev libssl-dev libsimdjson-dev
  zsh groff-base    # tests/check_completion.py drives the zsh completion and renders the man page
  python3-jsonschema python3-yaml   # tests/check_schema.py validates manifests with Debian's python3
  python3-packaging   # tests/differential/ checks PEP 440 against pypa/packaging, the reference
  python3-pyflakes    # tests/check_probe_lint.py (CTest probe_lint) lints src/venv/probe.py
  ccache              # contrib/configure.sh: a fresh clone rebuilds from the last one's objects
)
# Installed without their Recommends: ansible-core's pulls in the whole `ansible` collection set
# (~250 MB) that tests/integration/test_ansible.py does not use.
lean_packages=(ansible-core)

# python3 with venv may come from elsewhere on PATH (pyenv); else Debian's.
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  debian_packages+=(python3 python3-venv)
fi

missing_of() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t missing < <(missing_of "${debian_packages[@]}")
mapfile -t missing_lean < <(missing_of "${lean_packages[@]}")
if [ ${#missing[@]} -gt 0 ] || [ ${#missing_lean[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${missing[*]} ${missing_lean[*]}"
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  [ ${#missing[@]} -eq 0 ] ||
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
  [ ${#missing_lean[@]} -eq 0 ] ||
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing_lean[@]}"
fi

tools="$root/.tools/venv"
if [ ! -x "$tools/bin/uv" ] || [ "$("$tools/bin/uv" --version | awk '{print $2}')" != "$UV_VERSION" ]; then
  echo "bootstrap: installing uv $UV_VERSION into $tools"
  python3 -m venv "$tools"
  "$tools/bin/python" -m pip install -q --disable-pip-version-check "uv==$UV_VERSION"
fi

[ "${1:-}" = --packages-only ] && exit 0

contrib/configure.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build

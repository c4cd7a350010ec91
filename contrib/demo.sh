#!/usr/bin/env bash
# The demo: stackup's main job, on small wheels served from 127.0.0.1 (nothing leaves the host).
# Builds a torch-like stack for CUDA 12.8 and 13.0, serves it as PEP 503 indexes, makes a venv
# holding the cu128 stack under .demo/, then:
#   1. stackup plan manifests/demo.yaml --out .demo/plan.json   the exact files, saved for review
#   2. stackup apply .demo/plan.json       cu128 -> cu130, built and verified beside the venv, switched in
#   3. stackup verify manifests/demo.yaml
#   4. stackup rollback                    back to the cu128 generation, byte for byte; the history
#   5. an apply whose expectation cannot be met (torch cuda 13.1): uv installs the cu130 build in
#      the clone, verification fails there, the venv is never touched; tree digests show it.
# The index server is stopped on every exit path.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

contrib/bootstrap.sh

# The demo's uv runs take nothing from the caller's uv settings.
while read -r var; do unset "$var"; done < <(compgen -e | grep '^UV_' || true)

uv=$repo/.tools/venv/bin/uv
stackup=$repo/build/stackup
demo=$repo/.demo
server_pid=

stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say() { printf '\n== %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }
show() {  # what the venv's packages say they are, by importing them
    "$STACKUP_DEMO_VENV/bin/python" -I -B -c '
import torch, torchvision, sgl_kernel
for m in (torch, torchvision, sgl_kernel):
    print(f"   {m.__name__:12} {m.__version__:28} version.cuda={m.version.cuda}")'
}
digest() { python3 tests/support/treedigest.py "$STACKUP_DEMO_VENV"; }

[ -x "$uv" ] || die "no uv at $uv (contrib/bootstrap.sh should have installed it)"
[ -x "$stackup" ] || die "no stackup at $stackup (contrib/bootstrap.sh should have built it)"

say "building the demo wheels and serving them on 127.0.0.1"
rm -rf "$demo"
mkdir -p "$demo"
python3 tests/support/wheels.py stack "$demo/indexes"
python3 tests/support/index_server.py "$demo/indexes" --port-file "$demo/port" \
    >"$demo/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
    [ -s "$demo/port" ] && break
    kill -0 "$server_pid" 2>/dev/null || die "the index server did not start: $(cat "$demo/server.log")"
    sleep 0.1
done
[ -s "$demo/port" ] || die "the index server did not report its port"
export STACKUP_DEMO_INDEX="http://127.0.0.1:$(cat "$demo/port")"
export STACKUP_DEMO_VENV="$demo/venv"
export STACKUP_UV="$uv"
find "$demo/indexes" -name '*.whl' -printf '   %P\n' | sort
echo "   served at $STACKUP_DEMO_INDEX/{cu128,cu130,sglang-cu130,pypi}/"

say "a venv holding the CUDA 12.8 stack: $STACKUP_DEMO_VENV"
python3 -m venv "$STACKUP_DEMO_VENV"
"$uv" pip install --no-config --cache-dir "$demo/uv-cache" --python "$STACKUP_DEMO_VENV" \
    --index "$STACKUP_DEMO_INDEX/cu128/" --default-index "$STACKUP_DEMO_INDEX/pypi/" \
    torch torchvision sgl-kernel
show

say "what the obvious way does: uv pip install torch --index-url .../cu130 (in a copy)"
cp -a "$STACKUP_DEMO_VENV" "$demo/twin"
"$uv" pip install --no-config --cache-dir "$demo/uv-cache" --python "$demo/twin" \
    --index-url "$STACKUP_DEMO_INDEX/cu130/" --prerelease allow torch torchvision
"$demo/twin/bin/python" -I -B -c 'import torch; print("   torch", torch.__version__, "version.cuda", torch.version.cuda, "(unchanged)")'
rm -rf "$demo/twin"

say "1. stackup plan manifests/demo.yaml --out .demo/plan.json (every wheel checked; nothing touched)"
cu128_digest=$(digest)
"$stackup" plan manifests/demo.yaml --out "$demo/plan.json"
[ "$(digest)" = "$cu128_digest" ] || die "plan touched the venv"

say "2. stackup apply .demo/plan.json (cu128 -> cu130, exactly the planned files)"
"$stackup" apply "$demo/plan.json"
show

say "3. stackup verify manifests/demo.yaml"
"$stackup" verify manifests/demo.yaml

say "4. stackup rollback: back to the CUDA 12.8 generation (one rename), and the history"
"$stackup" rollback --venv "$STACKUP_DEMO_VENV"
"$stackup" history --venv "$STACKUP_DEMO_VENV"
show
[ "$(digest)" = "$cu128_digest" ] || die "the rollback did not restore the venv exactly"
echo "   tree digest equals the one before step 2: $cu128_digest"

say "5. an apply whose expectation cannot be met (torch cuda \"13.1\"): it fails in the clone, the venv is never touched"
sed 's/cuda: "13.0"}/cuda: "13.1"}/' manifests/demo.yaml >"$demo/demo-cuda13.1.yaml"
grep -q 'cuda: "13.1"' "$demo/demo-cuda13.1.yaml" || die "could not derive the cuda 13.1 manifest"
rc=0
"$stackup" apply "$demo/demo-cuda13.1.yaml" || rc=$?
after=$(digest)
show
echo "   exit status $rc (1: verification failed, nothing was changed in the venv)"
echo "   tree digest before $cu128_digest"
echo "   tree digest after  $after"
[ "$rc" -eq 1 ] || die "expected exit 1 from the unmeetable apply, got $rc"
[ "$after" = "$cu128_digest" ] || die "the failed apply changed the venv"

say "done: every failure left the venv exactly as it was; nothing is left running"

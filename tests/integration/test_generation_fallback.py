"""Where the venv cannot be exchanged with a tree of the state dir (here: the state dir on
another filesystem, a tmpfs under /dev/shm), apply says so before anything is touched and
falls back to the in-place mode: a snapshot (a copy), the steps in the venv itself, a restore
on failure. With the real uv:
- the successful apply's summary says "in place" and why (another filesystem), and the venv's
  root directory is the same inode (changed in place, not switched) with the new versions
  imported and the new torch's bytecode written by the verification; the failing apply's JSON says `"mode": "in-place"` with that reason;
- a failing apply restores the venv byte for byte (tree digest) and says "rolled back";
- `apply --stage` is refused with exit 3 (a staged generation needs an exchange), touching
  nothing.
"""
import json
import os
import shutil
import tempfile
from pathlib import Path

import harness
from harness import Skip, check, check_module, check_rc, check_says
import wheels


def scenario(t):
    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat(t.tmp).st_dev:
        raise Skip("no /dev/shm on another filesystem than the test's folder")
    shm_state = Path(tempfile.mkdtemp(prefix="stackup-it-fallback-", dir="/dev/shm"))
    try:
        server = t.serve_stack()
        venv = t.cu128_venv(server)
        manifest = t.manifest(t.upgrade_doc(server, venv))
        before = t.tree(venv)

        def stackup(*args):
            return harness.run([harness.find_stackup(), *args, "--state-dir", shm_state],
                               env=harness.child_env({"STACKUP_UV": t.uv_path}))

        r = stackup("apply", manifest, "--stage")
        check_rc(r, 3)
        check_says(r, "cannot stage", "another filesystem", "nothing was touched")
        t.assert_tree(venv, before, "after a refused --stage")

        bad = t.upgrade_doc(server, venv)
        bad["checks"].append({"name": "fails on purpose", "python": "raise SystemExit('no')"})
        r = stackup("apply", t.manifest(bad, "bad.yaml"), "--json")
        check_rc(r, 1)
        body = json.loads(r.stdout)
        check(body["mode"] == "in-place" and "another filesystem" in body["mode_reason"] and body["rolled_back"],
              f"not an in-place run rolled back: {body}")
        t.assert_tree(venv, before, "after the in-place apply's restore")
        check_module(t.module(venv, "torch"), wheels.TORCH_CU128, "12.8")

        root = os.stat(venv).st_ino   # the restore put a copy in place: a new root
        r = stackup("apply", manifest)
        check_rc(r, 0)
        check_says(r, "in place", "another filesystem")
        check(os.stat(venv).st_ino == root, "the venv was switched, not changed in place")
        # The verification's imports wrote bytecode for the new torch in the venv itself (its
        # snapshot covers it): a .pyc whose header names the new __init__.py's mtime and size.
        init = next(Path(venv).glob("lib/python3*/site-packages/torch/__init__.py"))
        pycs = list((init.parent / "__pycache__").glob("__init__.*.pyc"))
        st = init.stat()
        check(any(int.from_bytes(p.read_bytes()[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF and
                  int.from_bytes(p.read_bytes()[12:16], "little") == st.st_size for p in pycs),
              f"no bytecode of the new torch after the in-place apply: {pycs}")
        check_module(t.module(venv, "torch"), wheels.TORCH_CU130, "13.0")
    finally:
        shutil.rmtree(shm_state, ignore_errors=True)


harness.main(scenario)

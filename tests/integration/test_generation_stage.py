"""What blue/green promises when things go wrong, and staging, with the real uv:
- a failed apply (every step installed, then a manifest check fails) never touches the live venv: every
  entry's inode, type, mode, size and mtime and the tree digest are as before, the output says
  "nothing was changed in <venv>", and the clone is gone back to the old tree;
- `apply --stage` builds and verifies the next generation and leaves the venv as it was;
  `stackup switch` exchanges it in (the new versions import; history shows it live);
- a staged generation whose base is no longer the live venv (uv installed something by hand
  meanwhile) is refused by `switch` with exit 3, touching nothing.
"""
import json
import os
from pathlib import Path

import harness
from harness import check, check_module, check_rc, check_says
import wheels


def identity(root):
    """{path: (inode, type, mode, size, mtime_ns)} of every entry: what "inode for inode" means."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [".", *dirnames, *filenames]:
            path = os.path.join(dirpath, name) if name != "." else dirpath
            st = os.lstat(path)
            out[os.path.relpath(path, root)] = (st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)

    # 1. A failed apply: every step installs and verifies, then a manifest check fails.
    doc = t.upgrade_doc(server, venv)
    doc["checks"].append({"name": "fails on purpose", "python": "import torch; assert torch.version.cuda == '99.0'"})
    failing = t.manifest(doc, "failing.yaml")
    before_ids = identity(venv)
    before = t.tree(venv)
    r = t.stackup("apply", failing, "--json")
    check_rc(r, 1)
    check_says(r, f"nothing was changed in {venv}")
    body = json.loads(r.stdout)
    check(body["mode"] == "blue-green" and not body["switched"] and not body["venv_changed"], f"{body}")
    t.assert_tree(venv, before, "after a failed blue/green apply")
    after_ids = identity(venv)
    moved = sorted(p for p in set(before_ids) | set(after_ids) if before_ids.get(p) != after_ids.get(p))
    check(not moved, f"entries of the live venv changed (inode, mode, size or mtime): {moved[:20]}")
    check_module(t.module(venv, "torch"), wheels.TORCH_CU128, "12.8")
    check(t.stackup("status", "--venv", venv).rc == 0, "status after a failed apply is not clean")

    # 2. Stage: built and verified, the venv untouched; switch puts it in.
    manifest = t.manifest(t.upgrade_doc(server, venv))
    r = t.stackup("apply", manifest, "--stage", "--json")
    check_rc(r, 0)
    body = json.loads(r.stdout)
    check(body["staged"] and not body["switched"], f"not staged: {body}")
    t.assert_tree(venv, before, "after apply --stage")
    s = t.stackup("status", "--venv", venv, "--json")
    check(json.loads(s.stdout)["staged"]["id"] == body["generation"]["id"], f"status: {s.stdout}")
    root_before = os.stat(venv).st_ino
    r = t.stackup("switch", "--venv", venv, "--json")
    check_rc(r, 0)
    check(os.stat(venv).st_ino != root_before, "switch did not exchange the venv")
    check_module(t.module(venv, "torch"), wheels.TORCH_CU130, "13.0")
    h = json.loads(t.stackup("history", "--venv", venv, "--json").stdout)
    check(h["live"] == body["generation"]["id"] and h["staged"] is None, f"history after switch: {h}")
    check_rc(t.stackup("switch", "--venv", venv), 2)   # nothing staged any more

    # 3. A stale stage: staged from the cu130 venv, then uv changes the venv by hand.
    check_rc(t.stackup("rollback", "--venv", venv), 0)
    check_module(t.module(venv, "torch"), wheels.TORCH_CU128, "12.8")
    r = t.stackup("apply", manifest, "--stage")
    check_rc(r, 0)
    t.uv_install(venv, f"sgl-kernel=={wheels.SGL_KERNEL_CU130}", index=server.url("sglang-cu130"),
                 default_index=server.url("pypi"), extra=["--no-deps"])
    moved_on = t.tree(venv)
    r = t.stackup("switch", "--venv", venv)
    check_rc(r, 3)
    check_says(r, "no longer", "nothing was touched", "sgl")
    t.assert_tree(venv, moved_on, "after a refused switch")
    check_module(t.module(venv, "torch"), wheels.TORCH_CU128, "12.8")


harness.main(scenario)

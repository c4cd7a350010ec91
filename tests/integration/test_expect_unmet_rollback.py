"""(c) An expectation no index can meet (torch cuda "13.1") fails the run after the install:
exit 1, the message names torch, cuda, 13.1 and 13.0, and the venv is byte for byte what
it was before (tree digest), still the cu128 stack. In both modes: blue/green discards the
clone and never touches the venv (its root is the same inode); in place, the steps wrote the
venv and the snapshot's restore puts it back (a new root inode, the same tree). The text and
--json say which of the two happened (`venv_fate` "unchanged" or "restored").
"""
import json
import os

import harness
from harness import MODES, OFFLINE_ENV, check_module, check_rc, check_says
from wheels import TORCH_CU128


def scenario(t):
    server = t.serve_stack()
    for n, (mode, extra) in enumerate(MODES):
        venv = t.cu128_venv(server, f"venv{n}")
        doc = t.upgrade_doc(server, venv, torch_cuda="13.1")
        # A cache of its own per mode: the apply must fetch the cu130 wheel from the index in
        # both, so the request count proves the install happened (a shared cache would serve the
        # second mode's wheel without a request).
        doc["env"] = {"UV_CACHE_DIR": str(t.tmp / f"uv-cache{n}"), **OFFLINE_ENV}
        manifest = t.manifest(doc, f"manifest{n}.yaml")
        before, root = t.tree(venv), os.stat(venv).st_ino
        fetched = len(server.requests("/cu130/torch/torch-"))

        r = t.stackup("apply", manifest, *extra)
        check_rc(r, 1)
        check_says(r, "torch", "cuda", "13.1", "13.0")
        # The cu130 wheel really was installed before verification failed.
        harness.check(len(server.requests("/cu130/torch/torch-")) > fetched,
                      f"{mode}: the cu130 torch was never fetched", r)
        t.assert_left_as_was(venv, before, root, mode, "after the failed verification")
        check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
        in_place = mode == "in place"
        check_says(r, "rolled back to snapshot" if in_place else f"nothing was changed in {venv}")

        before = t.tree(venv)
        r = t.stackup("apply", manifest, "--json", *extra)
        check_rc(r, 1)
        doc = json.loads(r.stdout)
        harness.check(doc["venv_fate"] == ("restored" if in_place else "unchanged")
                      and doc["rolled_back"] is in_place and doc["venv_changed"] is False,
                      f"{mode}: --json says {doc['venv_fate']!r}, rolled_back {doc['rolled_back']}", r)
        t.assert_tree(venv, before, f"{mode}: the second failed apply")


harness.main(scenario)

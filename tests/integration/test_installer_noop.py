"""A step that changes nothing is named as such. Its requirement's marker is false on this
interpreter: the plan says it is skipped (and, as the cu128 torch would stay, refuses with 3,
touching nothing). With allow_mixed letting that pass, the step installs nothing, its
expectation fails, and stackup exits 4 naming the no-op and torch; the venv is exactly as it
was, in both modes (blue/green: its root the same inode; in place: restored from its snapshot,
a new root inode).
"""
import os

import harness
from harness import MODES, check_module, check_rc, check_says
from wheels import TORCH_CU128


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    doc = t.upgrade_doc(server, venv)
    torch_step = doc["steps"][0]
    doc["steps"] = [dict(torch_step, packages=["torch; python_version < '3.0'"],
                         expect={"torch": torch_step["expect"]["torch"]})]
    manifest = t.manifest(doc)
    before = t.tree(venv)

    r = t.stackup("apply", manifest)
    check_rc(r, 3)
    check_says(r, "skip", "marker is false for this venv", "expects it")
    t.assert_tree(venv, before, "a refused plan")

    manifest = t.manifest(dict(doc, allow_mixed=["torch", "torchvision"]), "allowed.yaml")
    for mode, extra in MODES:
        root = os.stat(venv).st_ino
        r = t.stackup("apply", manifest, *extra)
        check_rc(r, 4)
        check_says(r, "installer no-op", "torch", TORCH_CU128)
        t.assert_left_as_was(venv, before, root, mode, "after the no-op")
        check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

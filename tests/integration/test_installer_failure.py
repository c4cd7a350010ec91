"""(f) An installer failure after a successful step: the last step's package depends on a
dist that no index has, so uv fails; stackup exits 4 and the venv is exactly as before (tree
digest), though step 1 had already installed the cu130 torch. In both modes: blue/green
discards the clone (the venv's root is the same inode); in place, step 1 wrote the venv
itself and the snapshot's restore puts it back (a new root inode, the same tree).
"""
import os

import harness
from harness import MODES, check, check_module, check_rc, check_says
from wheels import TORCH_CU128


def scenario(t):
    server = t.serve_stack()
    broken = {"name": "brokendep", "index": "pypi", "packages": ["brokendep"]}
    for n, (mode, extra) in enumerate(MODES):
        venv = t.cu128_venv(server, f"venv{n}")
        manifest = t.manifest(t.upgrade_doc(server, venv, later_steps=[broken]), f"manifest{n}.yaml")
        before, root = t.tree(venv), os.stat(venv).st_ino

        r = t.stackup("apply", manifest, *extra)
        check_rc(r, 4)
        check_says(r, "brokendep")
        check(server.requests("/cu130/torch/torch-"), f"{mode}: step 1 never fetched the cu130 torch", r)
        t.assert_left_as_was(venv, before, root, mode, "after the installer failure")
        check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

"""A hard-link snapshot shares its files' inodes with the venv, so a file written in place
during the apply (here by the manifest's own check, appending to pyvenv.cfg) changes the
snapshot too. The apply still commits (the venv is fine), but says at once that its
snapshot is damaged (a warning naming the file; `snapshot_damage` in --json), and a later
`rollback` to it refuses with exit 5 naming the file, leaving the venv as it is: never
wrong bytes restored. A copy snapshot shares nothing, so the same apply leaves it whole
and its rollback restores the venv exactly, pyvenv.cfg included."""
import json

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130

APPEND = "import sys; open(sys.prefix + '/pyvenv.cfg', 'a').write('# written in place\\n')"


def scenario(t):
    server = t.serve_stack()
    for strategy in ("hardlink", "copy"):
        venv = t.cu128_venv(server, name=f"venv-{strategy}")
        doc = t.upgrade_doc(server, venv)
        doc["checks"] = [*doc["checks"], {"name": "writes in place", "python": APPEND}]
        manifest = t.manifest(doc, f"{strategy}.yaml")
        before = t.tree(venv)

        r = t.stackup("apply", manifest, "--json", "--snapshot-strategy", strategy)
        check_rc(r, 0)
        out = json.loads(r.stdout)
        check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
        snap = out["snapshot"]["id"]
        after = t.tree(venv)

        if strategy == "hardlink":
            check(any("pyvenv.cfg" in d for d in out["snapshot_damage"]), f"damage: {out['snapshot_damage']}")
            check_says(r, "changed in place", "pyvenv.cfg")
            refused = t.stackup("rollback", manifest, "--to", snap)
            check_rc(refused, 5)
            check_says(refused, "pyvenv.cfg")
            t.assert_tree(venv, after, "the refused rollback")
        else:
            check(out["snapshot_damage"] == [], f"a copy snapshot reported damage: {out['snapshot_damage']}")
            check_rc(t.stackup("rollback", manifest, "--to", snap), 0)
            t.assert_tree(venv, before, "the rollback to the copy snapshot")
            check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

"""`status` tells the truth about the last transaction: after a committed apply (committed, the
venv moved past its snapshot: it is the new generation the apply switched in, built from that
snapshot), after `stackup rollback` (rolled back, to which snapshot, by which command, when; the
venv equal to that snapshot: the same tree as before the apply, the snapshot the live generation),
and after a failed apply ("failed, nothing changed": the apply ran beside the venv and never
switched, so the venv is still the generation it was, the apply's base, and no snapshot is
"restored to"). Each claim is checked against the venv's real state.
"""
import os

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130


def status(t, venv):
    r = t.stackup("status", "--json", venv=venv)
    check_rc(r, 0)
    return harness.json.loads(r.stdout)


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    before = t.tree(venv)
    root = os.stat(venv).st_ino

    r = t.stackup("apply", t.manifest(t.upgrade_doc(server, venv)), "--json")
    check_rc(r, 0)
    applied = harness.json.loads(r.stdout)
    snapshot, generation = applied["snapshot"]["id"], applied["generation"]["id"]
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check(os.stat(venv).st_ino != root, "a committed blue/green apply left the venv's root directory in place")
    s = status(t, venv)
    check(s["last_apply"]["command"] == "apply" and s["last_apply"]["result"] == "committed"
          and s["last_apply"]["snapshot"] == snapshot, f"after a committed apply: {s['last_apply']}")
    check(s["restored_to"] is None, f"a committed venv is not any snapshot: {s['restored_to']}")
    check(s["live_generation"]["id"] == generation, f"live after a committed apply: {s['live_generation']}")
    gens = {g["id"]: g for g in s["snapshots"]}
    check(gens.keys() == {snapshot, generation} and gens[generation]["parent"] == snapshot,
          f"after a committed apply: {s['snapshots']}")

    check_rc(t.stackup("rollback", venv=venv), 0)
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
    t.assert_tree(venv, before, "after stackup rollback")
    check(os.stat(venv).st_ino == root, "rollback did not switch the venv's old tree back in")
    s = status(t, venv)
    last = s["last_apply"]
    check(last["command"] == "rollback" and last["result"] == "rolled back" and last["snapshot"] == snapshot,
          f"after stackup rollback: {last}")
    check("stackup rollback" in last["detail"] and snapshot in last["detail"], f"detail: {last['detail']}")
    check(s["restored_to"] == snapshot, f"restored_to: {s['restored_to']}")
    check(s["live_generation"]["id"] == snapshot, f"live after rollback: {s['live_generation']}")
    r = t.stackup("status", venv=venv)
    check_says(r, "last:        rolled back at", "by stackup rollback: restored snapshot " + snapshot,
               f"equal to snapshot {snapshot}")

    r = t.stackup("apply", t.manifest(t.upgrade_doc(server, venv, torch_cuda="13.1"), "bad.yaml"), "--json")
    check_rc(r, 1)
    failed = harness.json.loads(r.stdout)
    check(failed["snapshot"]["id"] == snapshot, f"the failed apply's base is not the live generation: {failed}")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
    t.assert_tree(venv, before, "after a failed apply")
    check(os.stat(venv).st_ino == root, "a failed apply replaced the venv's root directory")
    s = status(t, venv)
    last = s["last_apply"]
    check(last["command"] == "apply" and last["result"] == "failed, nothing changed"
          and last["snapshot"] == snapshot, f"after a failed apply: {last}")
    check(f"nothing was changed in {venv}" in last["detail"], f"detail: {last['detail']}")
    check(s["restored_to"] is None, f"restored_to after a failed apply: {s['restored_to']}")
    check(s["live_generation"]["id"] == snapshot, f"live after a failed apply: {s['live_generation']}")
    check({g["id"] for g in s["snapshots"]} == {snapshot, generation},
          f"a failed apply keeps no generation of its own: {s['snapshots']}")
    r = t.stackup("status", venv=venv)
    check_says(r, "last apply:  failed, nothing changed",
               f"generation:  {s['live_generation']['number']} ({snapshot}) is live")


harness.main(scenario)

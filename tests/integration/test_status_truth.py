"""`status` tells the truth about the last transaction: after a committed apply (committed, the
venv moved past its snapshot), after `stackup rollback` (rolled back, to which snapshot, by which
command, when; the venv equal to that snapshot), and after a failed apply (rolled back to the
apply's own snapshot). Each claim is checked against the venv's real state.
"""
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

    r = t.stackup("apply", t.manifest(t.upgrade_doc(server, venv)), "--json")
    check_rc(r, 0)
    snapshot = harness.json.loads(r.stdout)["snapshot"]["id"]
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    s = status(t, venv)
    check(s["last_apply"]["command"] == "apply" and s["last_apply"]["result"] == "committed",
          f"after a committed apply: {s['last_apply']}")
    check(s["restored_to"] is None, f"a committed venv is not any snapshot: {s['restored_to']}")

    check_rc(t.stackup("rollback", venv=venv), 0)
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
    s = status(t, venv)
    last = s["last_apply"]
    check(last["command"] == "rollback" and last["result"] == "rolled back" and last["snapshot"] == snapshot,
          f"after stackup rollback: {last}")
    check("stackup rollback" in last["detail"] and snapshot in last["detail"], f"detail: {last['detail']}")
    check(s["restored_to"] == snapshot, f"restored_to: {s['restored_to']}")
    r = t.stackup("status", venv=venv)
    check_says(r, "last:        rolled back at", "by stackup rollback: restored snapshot " + snapshot,
               f"equal to snapshot {snapshot}")

    r = t.stackup("apply", t.manifest(t.upgrade_doc(server, venv, torch_cuda="13.1"), "bad.yaml"), "--json")
    check_rc(r, 1)
    failed_snapshot = harness.json.loads(r.stdout)["snapshot"]["id"]
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
    s = status(t, venv)
    check(s["last_apply"]["command"] == "apply" and s["last_apply"]["result"] == "rolled back",
          f"after a failed apply: {s['last_apply']}")
    check(s["restored_to"] == failed_snapshot, f"restored_to after a failed apply: {s['restored_to']}")


harness.main(scenario)

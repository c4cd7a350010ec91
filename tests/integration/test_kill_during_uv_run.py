"""A real kill -9 of `stackup apply` alone while its uv runs (step 2's uv is held inside the
index server, fetching the sgl-kernel wheel, after step 1 installed the cu130 torch).
test_journal_killed_apply.py kills uv itself too, as power loss would; here nothing but
stackup is killed, so this checks that uv goes by itself:
- no process is left at work in the venv (fails if uv is started without PR_SET_PDEATHSIG,
  or outside its reach, and would go on writing into the venv once its request is answered);
- the live venv keeps its tree digest, before and after the held request is released (step 1
  ran in the clone, which holds the cu130 torch);
- the next `apply` cleans up by itself (exit 0, not 6: a surviving uv would still hold the
  inherited lock), saying the killed run died before its switch, and installs cu130;
- `rollback` then restores the pre-apply tree digest exactly.
"""
import time

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    before = t.tree(venv)
    held = "/sglang-cu130/sgl-kernel/sgl_kernel-"
    apply, log = t.held_apply(server, manifest, held, "killed-apply.log")
    try:
        print(f"moment hit: step 2's uv waiting for {server.requests(held)}", flush=True)
        harness.kill_9(apply)
        t.assert_nothing_left("after kill -9 of stackup while its uv ran")
    finally:
        harness.end_background(apply, log, "killed apply")
        server.rules.clear()   # a uv still waiting would now get its wheel

    records = harness.journal_records(t.venv_state(venv) / "journal")
    check(records[-1]["record"] == "step_running" and records[-1]["n"] == 2,
          f"the journal does not end in step 2 running: {records}")
    snap = next(r["id"] for r in records if r["record"] == "snapshot_taken")
    clone = t.venv_state(venv) / "snapshots" / snap / "ready"
    check_module(t.module(clone, "torch"), TORCH_CU130, "13.0")   # step 1 ran, in the clone
    t.assert_tree(venv, before, "the live venv after the kill (its uv ran in the clone)")
    time.sleep(1.0)   # a uv still at work would write into the clone or the venv now
    t.assert_tree(venv, before, "the live venv once the held request was released")

    again = t.stackup("apply", manifest)
    check_rc(again, 0)
    check_says(again, "died before its switch", "nothing was changed", str(records[0]["pid"]))
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check(not (t.venv_state(venv) / "journal").exists(), "the apply left a journal")

    check_rc(t.stackup("rollback", manifest), 0)
    t.assert_tree(venv, before, "after the rollback of the apply that cleaned up")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

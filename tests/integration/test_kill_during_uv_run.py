"""A real kill -9 of `stackup apply` alone while its uv runs (step 2's uv is held inside the
index server, fetching the sgl-kernel wheel, after step 1 installed the cu130 torch).
test_journal_killed_apply.py kills uv itself too, as power loss would; here nothing but
stackup is killed, so this checks that uv goes by itself:
- no process is left at work in the venv (fails if uv is started without PR_SET_PDEATHSIG,
  or outside its reach, and would go on writing into the venv once its request is answered);
- the next `apply` exits 7, not 6 (a surviving uv would still hold the inherited lock);
- once the held request is released, nothing writes into the venv any more, and `rollback`
  restores the pre-apply tree digest exactly and closes the journal.
"""
import harness
from harness import check, check_module, check_rc
from wheels import TORCH_CU128


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
    half = t.tree(venv)
    check(half != before, "step 1 changed nothing: the kill came too early")
    check_rc(t.stackup("apply", manifest), 7)
    t.assert_tree(venv, half, "the venv after the kill, once the held request was released")

    check_rc(t.stackup("rollback", manifest), 0)
    t.assert_tree(venv, before, "after the rollback of the run killed while uv ran")
    check(not (t.venv_state(venv) / "journal").exists(), "rollback left the journal")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

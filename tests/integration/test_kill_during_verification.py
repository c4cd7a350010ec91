"""A real kill -9 of `stackup apply` while it verifies a step: the step installed
slowimport 2.0, whose import (in the python stackup runs to verify the step) writes a
marker and then sleeps. Once the marker is there, stackup alone is killed. Then:
- the verifying python does not outlive stackup, and no process is left at work in the venv
  (fails if the child is started without PR_SET_PDEATHSIG, or in a way that escapes it);
- nothing is left in the apply's TMPDIR (fails if the probe's answer goes through a temp
  file that only a living stackup removes);
- the journal ends in `step_running` for step 1 after `snapshot_taken` (fails if a record
  is written late, or kept in a user-space buffer that the kill loses);
- the live venv keeps its tree digest (the step ran and was being verified in the clone, which
  holds slowimport 2.0); `status` exits 7 naming the step and saying nothing was changed (exit
  7, not 6: a surviving child would still hold the inherited lock);
- `rollback` only closes the journal (nothing to restore), and the import of slowimport
  reports 1.0.
"""
import harness
from harness import check, check_rc, check_says
import wheels


def scenario(t):
    marker = t.tmp / "verifying.pid"
    root = t.tmp / "indexes"
    wheels.plain(root / "pypi" / "slowimport", "slowimport", "1.0")
    wheels.blocking_import(root / "pypi" / "slowimport", "slowimport", "2.0", marker)
    server = t.serve(root)
    venv = t.make_venv()
    t.uv_install(venv, "slowimport==1.0", default_index=server.url("pypi"))
    manifest = t.manifest({
        "version": 1, "name": "kill-during-verification", "venv": str(venv),
        "indexes": {"pypi": server.url("pypi")},
        "steps": [{"name": "slow", "index": "pypi", "packages": ["slowimport==2.0"],
                   "expect": {"slowimport": {"version": "==2.0"}}}]})
    before = t.tree(venv)

    tmpdir = t.tmp / "apply-tmpdir"
    tmpdir.mkdir()
    apply, log = t.background_apply(manifest, "killed-apply.log", env={"TMPDIR": str(tmpdir)})
    try:
        harness.wait_for(lambda: marker.exists() or apply.poll() is not None,
                         "the verification's import of slowimport 2.0")
        check(apply.poll() is None, f"the apply ended (rc {apply.returncode}) before it verified")
        verifier, parent = map(int, marker.read_text().split())
        print(f"moment hit: verifying step 1 (python pid {verifier}, its parent {parent}, "
              f"stackup pid {apply.pid})", flush=True)
        check(parent == apply.pid, "the import did not run in a child of the apply")
        harness.kill_9(apply)
    finally:
        harness.end_background(apply, log, "killed apply")

    t.assert_nothing_left("after kill -9 of stackup while it verified")
    check(not harness.pid_alive(verifier), f"the verifying python {verifier} outlived stackup")
    check(not list(tmpdir.iterdir()), f"the killed apply left {list(tmpdir.iterdir())} in its TMPDIR")

    records = harness.journal_records(t.venv_state(venv) / "journal")
    print(f"journal: {records}", flush=True)
    kinds = [r["record"] for r in records]
    check(kinds == ["started", "snapshot_taken", "step_running"], f"odd journal: {kinds}")
    check(records[0]["pid"] == apply.pid and records[-1]["n"] == 1, f"odd journal: {records}")
    snap = records[1]["id"]
    t.assert_tree(venv, before, "the live venv, killed while step 1 was verified in the clone")
    clone = t.venv_state(venv) / "snapshots" / snap / "ready"
    check(any(clone.glob("lib/python3*/site-packages/slowimport-2.0.dist-info")),
          f"slowimport 2.0 is not in the clone {clone}: the kill came too early")

    status = t.stackup("status", manifest)
    check_rc(status, 7)
    check_says(status, "INTERRUPTED", "step 1 (slow) running", snap, "nothing was changed")

    rolled = t.stackup("rollback", manifest)
    check_rc(rolled, 0)
    check_says(rolled, "closed", "nothing to restore", "before its switch")
    t.assert_tree(venv, before, "after the rollback of the run killed while verifying")
    check(not (t.venv_state(venv) / "journal").exists(), "rollback left the journal")
    info = t.module(venv, "slowimport")
    check(info.get("version") == "1.0", f"slowimport after the rollback: {info}")
    check_rc(t.stackup("status", manifest), 0)


harness.main(scenario)

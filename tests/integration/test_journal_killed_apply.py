"""An IN-PLACE apply (`--snapshot-strategy copy`: a snapshot the venv cannot be switched with,
so the steps run in the venv itself, the mode used where the venv cannot be exchanged) killed
with -9 in the middle of step 2 (its uv is held inside the index
server, fetching the sgl-kernel wheel, after step 1 already installed the cu130 torch)
leaves a journal that says so: the next `apply` exits 7 naming the run and how to recover,
`status` exits 7 and shows it (manifest, step, snapshot id, pid), the snapshot it needs
cannot be deleted, and `rollback` restores THAT run's snapshot (the pre-apply tree digest
exactly) and closes the journal; then `status` exits 0 and a new apply runs clean.
"""
import json
import os
import signal

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130

WAIT_S = 120   # a hang guard for the killed apply's children to go; nothing asserts on time


def children_of(pid):
    """Pids whose parent is `pid` (the uv stackup runs), read from /proc."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def kill_hard(proc):
    """kill -9 of stackup, then of whatever it ran (as power loss would end it too)."""
    kids = children_of(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=harness.CHILD_TIMEOUT_S)
    for kid in kids:
        try:
            os.killpg(kid, signal.SIGKILL)
        except OSError:
            pass
    harness.wait_for(lambda: not any(harness.pid_alive(k) for k in kids),
                     f"children {kids} of the killed apply to end", timeout=WAIT_S, every=0.05)


def journal_records(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    before = t.tree(venv)
    first, log = t.held_apply(server, manifest, "/sglang-cu130/sgl-kernel/sgl_kernel-", "killed-apply.log",
                              "--snapshot-strategy", "copy")
    try:
        killed_pid = first.pid
        kill_hard(first)
    finally:
        harness.end_background(first, log, "killed apply")
        server.rules.clear()

    journals = list(t.state_dir.glob("*/journal"))
    check(len(journals) == 1, f"expected one journal under {t.state_dir}, found {journals}")
    records = journal_records(journals[0])
    print(f"journal: {records}", flush=True)
    check(records[0]["record"] == "started" and records[0]["version"] == 1, "odd first record")
    check(records[0]["mode"] == "in-place", f"not an in-place run: {records[0]}")
    check(records[0]["pid"] == killed_pid, "the journal does not name the killed pid")
    check(records[-1] == {**records[-1], "record": "step_running", "n": 2, "name": "sgl-kernel"},
          f"the journal does not end in step 2 running: {records[-1]}")
    snap = next(r["id"] for r in records if r["record"] == "snapshot_taken")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")   # step 1 did change the venv
    half = t.tree(venv)

    again = t.stackup("apply", manifest)
    check_rc(again, 7)
    check_says(again, "interrupted", snap, str(killed_pid), "stackup rollback", "stackup status",
               "sgl-kernel", str(manifest))
    t.assert_tree(venv, half, "the refused apply")

    status = t.stackup("status", manifest)
    check_rc(status, 7)
    check_says(status, "INTERRUPTED", str(manifest), "step 2 (sgl-kernel) running", snap,
               str(killed_pid), records[0]["time"])

    check_rc(t.stackup("snapshots", "delete", snap, manifest), 7)
    check(any(p.name == snap for p in t.state_dir.glob("*/snapshots/*")), "the needed snapshot is gone")

    # A newer snapshot must not be what rollback picks: the interrupted run's own is.
    check_rc(t.stackup("snapshots", "create", "--label", "half-upgraded", manifest), 0)
    t.assert_tree(venv, half, "snapshots create")

    rolled = t.stackup("rollback", manifest)
    check_rc(rolled, 0)
    check_says(rolled, snap, "closed")
    t.assert_tree(venv, before, "after the rollback of the interrupted run")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
    check(not journals[0].exists(), "rollback left the journal")
    last = json.loads((journals[0].parent / "last-transaction.json").read_text())
    check(last["result"] == "rolled back" and last["snapshot_id"] == snap, f"odd last apply: {last}")

    status = t.stackup("status", manifest)
    check_rc(status, 0)
    check_says(status, "none open", "rolled back", snap, "half-upgraded")

    check_rc(t.stackup("apply", manifest), 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")


harness.main(scenario)

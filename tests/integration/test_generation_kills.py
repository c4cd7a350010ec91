"""kill -9 of a blue/green apply at every moment that matters, each on a venv of its own:
during the clone, during uv (step 2's wheel held in the index server), right before the
exchange and right after it (the last two stopped at the tool's named failpoints, so the kill
lands exactly there). After each kill, with the real uv and real venvs:
- no process is left at work in the test's folders;
- the live venv is either exactly the old tree (tree digest) or, after the exchange, wholly the
  new generation (its root is the clone the journal's `switching` record names, and
  `verify` passes: every expectation of every step holds);
- `status` exits 7 and says which of the two the venv is;
- the journal is resolved both ways users will: `rollback` (before the switch it only closes
  the journal; after it, it switches the old tree back, exactly, and `rollback --to` the new
  generation rolls forward again), and the next `apply`, which cleans up what the killed run
  left and goes on (exit 0, the new versions imported).
"""
import json
import os

import harness
from harness import check, check_module, check_rc, check_says
import wheels

HELD = "/sglang-cu130/sgl-kernel/sgl_kernel-"


def kinds(t, venv):
    return [r["record"] for r in harness.journal_records(t.venv_state(venv) / "journal")]


def killed_at_failpoint(t, manifest, name, log_name):
    hit = t.tmp / f"{log_name}.hit"
    apply, log = t.background_apply(manifest, log_name, env={"STACKUP_FAILPOINT": name,
                                                             "STACKUP_FAILPOINT_FILE": str(hit)})
    try:
        harness.wait_for(lambda: hit.exists() or apply.poll() is not None, f"the failpoint {name}")
        check(apply.poll() is None, f"the apply ended (rc {apply.returncode}) before {name}")
        harness.kill_9(apply)
    finally:
        harness.end_background(apply, log, f"apply killed at {name}")
    return apply.pid


def killed_during_clone(t, manifest, venv, log_name):
    """Kills the apply once the clone's folder exists and before its first step runs."""
    state = t.state_dir
    apply, log = t.background_apply(manifest, log_name)

    def cloning():
        if apply.poll() is not None:
            return True
        readies = list(state.glob(f"{venv.name}-*/snapshots/*/ready"))
        try:
            return bool(readies) and "step_running" not in kinds(t, venv)
        except FileNotFoundError:
            return False

    try:
        harness.wait_for(cloning, "the clone", every=0.001)
        check(apply.poll() is None, f"the apply ended (rc {apply.returncode}) before it was caught cloning")
        harness.kill_9(apply)
    finally:
        harness.end_background(apply, log, "apply killed while cloning")
    return apply.pid


def old_tree_kept(t, venv, before, what):
    t.assert_tree(venv, before, what)
    check_module(t.module(venv, "torch"), wheels.TORCH_CU128, "12.8")


def scenario(t):
    server = t.serve_stack()

    # 1. During the clone; the next apply cleans up and goes on.
    venv = t.cu128_venv(server, "venv-clone")
    site = next(venv.glob("lib/python3*/site-packages"))
    for d in range(100):   # enough entries that cloning takes a moment
        folder = site / "bulk_data" / f"d{d:03d}"
        folder.mkdir(parents=True)
        for i in range(100):
            (folder / f"f{i:03d}.py").write_text(f"# {d}/{i}\n")
    manifest = t.manifest(t.upgrade_doc(server, venv), "clone.yaml")
    before = t.tree(venv)
    pid = killed_during_clone(t, manifest, venv, "clone.log")
    t.assert_nothing_left("after kill -9 during the clone")
    old_tree_kept(t, venv, before, "killed during the clone")
    status = t.stackup("status", "--venv", venv)
    check_rc(status, 7)
    check_says(status, "INTERRUPTED", "nothing was changed")
    again = t.stackup("apply", manifest)
    check_rc(again, 0)
    check_says(again, "died before its switch", str(pid))
    check_module(t.module(venv, "torch"), wheels.TORCH_CU130, "13.0")
    check_rc(t.stackup("status", "--venv", venv), 0)

    # 2. During uv (step 2 held): rollback only closes the journal.
    venv = t.cu128_venv(server, "venv-uv")
    manifest = t.manifest(t.upgrade_doc(server, venv), "uv.yaml")
    before = t.tree(venv)
    already = len(server.requests(HELD))   # part 1 fetched the same wheel
    server.rules.set([{"prefix": HELD, "hang": True}])
    apply, log = t.background_apply(manifest, "uv.log")
    try:
        harness.wait_for(lambda: len(server.requests(HELD)) > already or apply.poll() is not None,
                         "step 2's uv to ask for its wheel")
        check(apply.poll() is None, f"the apply ended (rc {apply.returncode}) before step 2's uv")
        harness.kill_9(apply)
    finally:
        harness.end_background(apply, log, "apply killed during uv")
        server.rules.clear()
    t.assert_nothing_left("after kill -9 during uv")
    old_tree_kept(t, venv, before, "killed during uv")
    rolled = t.stackup("rollback", "--venv", venv)
    check_rc(rolled, 0)
    check_says(rolled, "nothing to restore")
    old_tree_kept(t, venv, before, "after the rollback of a run killed during uv")
    check_rc(t.stackup("status", "--venv", venv), 0)

    # 3. Right before the exchange: the venv is the old tree; rollback closes.
    venv = t.cu128_venv(server, "venv-before")
    manifest = t.manifest(t.upgrade_doc(server, venv), "before.yaml")
    before = t.tree(venv)
    killed_at_failpoint(t, manifest, "before-switch", "before-switch.log")
    t.assert_nothing_left("after kill -9 right before the switch")
    check(kinds(t, venv)[-1] == "switching", f"the journal does not end in switching: {kinds(t, venv)}")
    old_tree_kept(t, venv, before, "killed right before the switch")
    status = t.stackup("status", "--venv", venv)
    check_rc(status, 7)
    check_says(status, "switching", "nothing was changed")
    check_rc(t.stackup("rollback", "--venv", venv), 0)
    old_tree_kept(t, venv, before, "after the rollback of a run killed before its switch")
    h = json.loads(t.stackup("history", "--venv", venv, "--json").stdout)
    check(len(h["generations"]) == 1 and h["live"] == h["generations"][0]["id"],
          f"a generation never switched in is still listed: {h}")

    # 4. Right after the exchange: wholly new; rollback switches back, --to rolls forward.
    venv = t.cu128_venv(server, "venv-after")
    manifest = t.manifest(t.upgrade_doc(server, venv), "after.yaml")
    before = t.tree(venv)
    killed_at_failpoint(t, manifest, "after-switch", "after-switch.log")
    t.assert_nothing_left("after kill -9 right after the switch")
    switching = harness.journal_records(t.venv_state(venv) / "journal")[-1]
    check(switching["record"] == "switching", f"the journal does not end in switching: {switching}")
    check(os.stat(venv).st_ino == switching["clone"], "the venv's root is not the clone the journal names")
    check_rc(t.stackup("verify", manifest), 0)
    check_module(t.module(venv, "torch"), wheels.TORCH_CU130, "13.0")
    new_tree = t.tree(venv)
    status = t.stackup("status", "--venv", venv)
    check_rc(status, 7)
    check_says(status, "verified new generation")
    check_rc(t.stackup("rollback", "--venv", venv), 0)
    old_tree_kept(t, venv, before, "after the rollback of a run killed after its switch")
    check_rc(t.stackup("rollback", "--venv", venv, "--to", switching["generation"]), 0)
    t.assert_tree(venv, new_tree, "rolled forward to the generation the killed run switched in")

    # 5. Right after the exchange again; this time the next apply completes the journal.
    venv = t.cu128_venv(server, "venv-after-apply")
    manifest = t.manifest(t.upgrade_doc(server, venv), "after-apply.yaml")
    killed_at_failpoint(t, manifest, "after-switch", "after-switch-2.log")
    t.assert_nothing_left("after the second kill -9 right after the switch")
    again = t.stackup("apply", manifest)
    check_rc(again, 0)
    check_says(again, "right after its switch", "committed")
    check_module(t.module(venv, "torch"), wheels.TORCH_CU130, "13.0")
    check_rc(t.stackup("status", "--venv", venv), 0)


harness.main(scenario)

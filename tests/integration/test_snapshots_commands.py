"""`stackup snapshots create|list|show|delete|prune` on a real venv: create reads the venv
only (tree digest unchanged) and records its label and distributions; list is newest
first; show prints the metadata and the distributions; delete removes exactly one;
prune keeps the newest N (from --keep, else the manifest's snapshot.keep); neither delete
nor prune ever removes the live generation (the hard-link snapshot the venv still is:
delete refuses it with 2, prune counts it as kept, and once the venv has changed since, it
is an ordinary snapshot again), nor the snapshot an interrupted run's journal needs, which
`rollback` then restores exactly."""
import json

import harness
from harness import check, check_rc, check_says


def created_id(result):
    words = result.stdout.split()
    check(result.rc == 0 and words[:1] == ["snapshot"], "create printed no id", result)
    return words[1]


def on_disk(t):
    return sorted(p.name for p in t.state_dir.glob("*/snapshots/*") if (p / "snapshot.json").exists())


def listed(t, venv):
    r = t.stackup("snapshots", "list", venv=venv)
    check_rc(r, 0)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def live_id(t, venv):
    """The id of the generation `status` says the venv is, or None."""
    r = t.stackup("status", "--json", venv=venv)
    live = json.loads(r.stdout)["live_generation"]
    return live["id"] if live else None


def simulate_killed_apply(t, venv, snap):
    """The journal a run killed after `step_running` of its first step leaves."""
    state = next(t.state_dir.glob("*/snapshots")).parent
    lines = [
        {"record": "started", "version": 1, "time": "2026-12-02T10:00:00Z", "manifest": "/m/x.yaml",
         "venv": str(venv), "pid": 999999, "host": "elsewhere"},
        {"record": "snapshot_taken", "time": "2026-12-02T10:00:01Z", "id": snap},
        {"record": "step_running", "time": "2026-12-02T10:00:02Z", "n": 1, "name": "torch"},
    ]
    text = "".join(json.dumps(r) + "\n" for r in lines) + '{"record": "step_ver'   # torn
    (state / "journal").write_text(text)
    return state


def scenario(t):
    server = t.serve_stack()
    venv = t.make_venv()
    t.uv_install(venv, "filelock==3.20.0", default_index=server.url("pypi"))
    before = t.tree(venv)

    first = created_id(t.stackup("snapshots", "create", "--label", "first", venv=venv))
    t.assert_tree(venv, before, "snapshots create")
    meta = json.loads(next(t.state_dir.glob(f"*/snapshots/{first}/snapshot.json")).read_text())
    check(meta["label"] == "first", f"label not recorded: {meta}")
    check({"name": "filelock", "version": "3.20.0"} in meta["distributions"], f"no filelock in {meta}")
    second = created_id(t.stackup("snapshots", "create", "--label", "second", venv=venv))
    third = created_id(t.stackup("snapshots", "create", venv=venv))
    check(on_disk(t) == sorted([first, second, third]), f"odd store: {on_disk(t)}")
    check(listed(t, venv) == [third, second, first], "list is not newest first")

    shown = t.stackup("snapshots", "show", first, venv=venv)
    check_rc(shown, 0)
    check_says(shown, first, "label:         first", "filelock 3.20.0", str(venv.resolve()))
    check_rc(t.stackup("snapshots", "show", "no-such-id", venv=venv), 2)

    check_rc(t.stackup("snapshots", "delete", second, venv=venv), 0)
    check(on_disk(t) == sorted([first, third]), f"delete removed the wrong ones: {on_disk(t)}")
    check_rc(t.stackup("snapshots", "delete", second, venv=venv), 2)
    # The newest snapshot of the venv as it is, hard links sharing its root: the live generation.
    check(live_id(t, venv) == third, f"the live generation is not {third}")
    live = t.stackup("snapshots", "delete", third, venv=venv)
    check_rc(live, 2)
    check_says(live, third, "live")
    check(on_disk(t) == sorted([first, third]), f"a refused delete removed something: {on_disk(t)}")
    t.assert_tree(venv, before, "snapshots delete")

    doc = {"version": 1, "name": "keep-one", "venv": str(venv),
           "indexes": {"pypi": server.url("pypi")},
           "steps": [{"name": "s", "index": "pypi", "packages": ["filelock"]}],
           "snapshot": {"keep": 1}}
    pruned = t.stackup("snapshots", "prune", t.manifest(doc))
    check_rc(pruned, 0)
    check_says(pruned, first, "newest 1")
    check(on_disk(t) == [third], f"prune by snapshot.keep left {on_disk(t)}")

    newer = created_id(t.stackup("snapshots", "create", venv=venv))
    state = simulate_killed_apply(t, venv, third)
    check_rc(t.stackup("snapshots", "delete", third, venv=venv), 7)
    # `newer` is the live generation, `third` the interrupted run's way back: both stay.
    check_rc(t.stackup("snapshots", "prune", "--keep", "0", venv=venv), 0)
    check(on_disk(t) == sorted([newer, third]), f"prune --keep 0 should spare {newer} (live) and {third}: "
                                                f"{on_disk(t)}")
    # What the killed run left in the venv: it is no generation now, so `newer` can go.
    (venv / "stray.txt").write_text("not in the snapshot")
    check(live_id(t, venv) is None, "a changed venv is still a recorded generation")
    check_rc(t.stackup("snapshots", "prune", "--keep", "0", venv=venv), 0)
    check(on_disk(t) == [third], f"prune --keep 0 should drop {newer} and spare {third}: {on_disk(t)}")
    check_rc(t.stackup("status", venv=venv), 7)

    check_rc(t.stackup("rollback", venv=venv), 0)
    t.assert_tree(venv, before, "rollback of the simulated interrupted run")
    check(not (state / "journal").exists(), "rollback left the journal")
    check_rc(t.stackup("status", venv=venv), 0)
    # Restored, the venv is `third` again: prune --keep 0 counts it as kept.
    check(live_id(t, venv) == third, f"after the rollback the venv is not generation {third}")
    check_rc(t.stackup("snapshots", "prune", "--keep", "0", venv=venv), 0)
    check(on_disk(t) == [third], f"once closed, prune --keep 0 spares only the live one: {on_disk(t)}")
    (venv / "stray.txt").write_text("written after the rollback")
    check_rc(t.stackup("snapshots", "prune", "--keep", "0", venv=venv), 0)
    check(on_disk(t) == [], f"with the venv changed since, prune --keep 0 removes all: {on_disk(t)}")


harness.main(scenario)

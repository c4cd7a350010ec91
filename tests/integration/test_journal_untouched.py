"""A run killed while taking its snapshot leaves a journal with `started` but no
`snapshot_taken` (and an incomplete snapshot dir): nothing was touched. `apply` and
`status` still exit 7 and say the venv was not touched; `rollback` restores nothing,
closes the journal and removes the incomplete snapshot; the venv is unchanged."""
import json

import harness
from harness import check, check_rc, check_says


def scenario(t):
    server = t.serve_stack()
    venv = t.make_venv()
    t.uv_install(venv, "filelock==3.20.0", default_index=server.url("pypi"))
    doc = {"version": 1, "name": "untouched", "venv": str(venv),
           "indexes": {"pypi": server.url("pypi")},
           "steps": [{"name": "s", "index": "pypi", "packages": ["filelock"]}]}
    manifest = t.manifest(doc)
    before = t.tree(venv)

    # A first snapshot makes this venv's state dir (and shows where it is).
    check_rc(t.stackup("snapshots", "create", "--label", "probe", manifest), 0)
    state = next(t.state_dir.glob("*/snapshots")).parent
    incomplete = state / "snapshots" / "20261202T100000Z-dead"
    (incomplete / "tree").mkdir(parents=True)
    started = {"record": "started", "version": 1, "time": "2026-12-02T10:00:00Z",
               "manifest": str(manifest), "venv": str(venv), "pid": 424242, "host": "vm"}
    (state / "journal").write_text(json.dumps(started) + "\n")

    refused = t.stackup("apply", manifest)
    check_rc(refused, 7)
    check_says(refused, "not touched", "stackup rollback", "424242")
    status = t.stackup("status", manifest)
    check_rc(status, 7)
    check_says(status, "INTERRUPTED", "before the snapshot", "none taken")

    rolled = t.stackup("rollback", manifest)
    check_rc(rolled, 0)
    check_says(rolled, "nothing to restore", "20261202T100000Z-dead")
    check(not (state / "journal").exists(), "rollback left the journal")
    check(not incomplete.exists(), "rollback left the incomplete snapshot")
    t.assert_tree(venv, before, "closing an untouched run")
    check_rc(t.stackup("status", manifest), 0)


harness.main(scenario)

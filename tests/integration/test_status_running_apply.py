"""`stackup status` while an apply runs (its uv held inside the index server): the lock is
HELD by that apply's pid and the open journal is a transaction in progress, not an
interrupted one (exit 0), run blue/green, its base snapshot named; `snapshots create`
meanwhile exits 6, and the venv is untouched (the steps run in a clone beside it). Once the
apply ends, status shows the last apply (committed, its manifest and base snapshot), the new
generation it switched in as live (the venv's root directory is another inode, torch the new
build), both snapshots with their entries and size (the base, and the generation built from
it), and no journal is left."""
import json
import os

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU130


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))

    fresh = t.stackup("status", manifest)
    check_rc(fresh, 0)
    check_says(fresh, "none open", "last apply:  none recorded", "snapshots:   0")

    before = t.tree(venv)
    root = os.stat(venv).st_ino
    first, log = t.held_apply(server, manifest, "/cu130/torch/torch-", "apply.log")
    try:
        running = t.stackup("status", manifest)
        check_rc(running, 0)
        check_says(running, "HELD", f"pid {first.pid}", "in progress", "step 1 (torch) running", "blue-green")
        doc = json.loads(t.stackup("status", manifest, "--json").stdout)
        base = doc["in_progress"]["snapshot"]
        check(base and doc["interrupted"] is None, f"in progress: {doc['in_progress']}")
        check_says(running, f"snapshot:  {base}")
        check_rc(t.stackup("snapshots", "create", manifest), 6)
        t.assert_tree(venv, before, "while the apply runs")
    finally:
        server.rules.clear()
        rc = first.wait(timeout=harness.CHILD_TIMEOUT_S)
        log.seek(0)
        print(f"--- apply (rc={rc})\n{log.read()}", flush=True)
    check(rc == 0, f"the apply failed once released (rc {rc})")
    check(os.stat(venv).st_ino != root, "the venv's root is the same directory: nothing was switched in")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")

    after = t.stackup("status", manifest)
    check_rc(after, 0)
    doc = json.loads(t.stackup("status", manifest, "--json").stdout)
    snaps = {s["id"]: s for s in doc["snapshots"]}
    on_disk = sorted(p.name for p in t.state_dir.glob("*/snapshots/*") if not p.name.startswith("."))
    check(on_disk == sorted(snaps), f"status lists {sorted(snaps)}, the store holds {on_disk}")
    live = doc["live_generation"]
    check(len(snaps) == 2 and base in snaps and live and live["id"] in snaps and live["id"] != base
          and snaps[live["id"]]["parent"] == base, f"expected the base and the generation built from it: {snaps}")
    check_says(after, "none open", "last apply:  committed", str(manifest), f"snapshot {base}",
               f"generation:  {live['number']} ({live['id']}) is live", "before apply of", "apply of",
               "entries", "KiB", "store on disk", "only in this snapshot")
    check(not list(t.state_dir.glob("*/journal")), "a committed apply left its journal")


harness.main(scenario)

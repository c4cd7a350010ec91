"""`stackup status` while an apply runs (its uv held inside the index server): the lock is
HELD by that apply's pid and the open journal is a transaction in progress, not an
interrupted one (exit 0); `snapshots create` meanwhile exits 6. Once the apply ends,
status shows the last apply (committed, its manifest and snapshot) and the snapshot with
its entries and size, and no journal is left."""

import harness
from harness import check, check_rc, check_says


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))

    fresh = t.stackup("status", manifest)
    check_rc(fresh, 0)
    check_says(fresh, "none open", "last apply:  none recorded", "snapshots:   0")

    first, log = t.held_apply(server, manifest, "/cu130/torch/torch-", "apply.log")
    try:
        running = t.stackup("status", manifest)
        check_rc(running, 0)
        check_says(running, "HELD", f"pid {first.pid}", "in progress", "step 1 (torch) running")
        check_rc(t.stackup("snapshots", "create", manifest), 6)
    finally:
        server.rules.clear()
        rc = first.wait(timeout=harness.CHILD_TIMEOUT_S)
        log.seek(0)
        print(f"--- apply (rc={rc})\n{log.read()}", flush=True)
    check(rc == 0, f"the apply failed once released (rc {rc})")

    after = t.stackup("status", manifest)
    check_rc(after, 0)
    snaps = [p.name for p in t.state_dir.glob("*/snapshots/*") if not p.name.startswith(".")]
    check(len(snaps) == 1, f"expected the apply's one snapshot: {snaps}")
    check_says(after, "none open", "last apply:  committed", str(manifest), snaps[0],
               "before apply of", "entries", "KiB", "store on disk", "only in this snapshot")
    check(not list(t.state_dir.glob("*/journal")), "a committed apply left its journal")


harness.main(scenario)

"""A real kill -9 of `stackup apply` while it takes its snapshot. The venv gains thousands
of small files after an older snapshot, so the apply's snapshot has them all to link into
the shared object store `snapshots/.objects/` and lasts a while; the test polls the state dir
and kills stackup once its snapshot dir exists and the store's directory changed (it is
linking; no `index.tsv` or `snapshot.json` yet) while the journal says `started` only. If the
snapshot finished first, it retries with a bigger venv, and fails when no size is caught in
the act. Then:
- no process is left at work in the venv, and its tree digest is unchanged (fails if the
  snapshot moves, chmods or touches anything in the venv);
- the journal holds just `started`, naming the killed pid (fails if that record is written
  after the snapshot, or kept in a user-space buffer a kill loses);
- `status` exits 7 saying the venv was not touched (blue/green: nothing was changed before the
  switch; the next apply would also clean up by itself, test_generation_kills.py shows that);
- `rollback` only closes the journal and removes the incomplete snapshot: the venv keeps its
  digest although an older, complete snapshot of a different tree is there to restore (fails
  if rollback restores the latest complete snapshot, or takes the incomplete one for whole);
  the objects the killed run linked go with it, the older snapshot's stay (fails if the store
  keeps what no snapshot needs, or drops what one does);
- `status` then exits 0 and a new apply succeeds.
"""
import os

import harness
from harness import check, check_rc, check_says
import wheels

SIZES = (10_000, 40_000, 160_000)   # small files in the venv, one size per attempt
PER_DIR = 100


def fill(venv, files):
    """site-packages/bulk_data/dNNNNN/fNNN.py: `files` small files, PER_DIR to a folder."""
    site = next(venv.glob("lib/python*/site-packages"))
    for d in range(files // PER_DIR):
        folder = site / "bulk_data" / f"d{d:05d}"
        folder.mkdir(parents=True)
        for i in range(PER_DIR):
            (folder / f"f{i:03d}.py").write_text(f"# {d}/{i}\n")


def progress(state):
    """(snapshot dirs without snapshot.json, the journal's record kinds) in a venv's state dir."""
    incomplete = [d for d in (state / "snapshots").glob("*")
                  if not d.name.startswith(".") and not (d / "snapshot.json").exists()]
    try:
        kinds = [r["record"] for r in harness.journal_records(state / "journal")]
    except FileNotFoundError:
        kinds = []
    return incomplete, kinds


def objects(state):
    """The inode numbers the state dir's object store holds, by the names of its links."""
    store = state / "snapshots" / ".objects"
    return {int(name) for name in os.listdir(store)} if store.exists() else set()


def referenced(snapshot):
    """The inodes a hard-link snapshot's index.tsv names."""
    lines = (snapshot / "index.tsv").read_text(errors="surrogateescape").splitlines()[1:]
    return {int(f[4]) for f in (line.split("\t") for line in lines) if f[0] == "f"}


def moment(snapshot, before, older):
    """Which part of the snapshot the kill cut short, read from what it left."""
    if (snapshot / "index.tsv").exists():
        return "after linking every file, before snapshot.json"
    files = sum(1 for e in before if e.split("\t")[1] == "file")
    linked = len(objects(snapshot.parent.parent) - older)
    if linked == 0:
        return "while indexing the venv (nothing linked yet)"
    return (f"while linking files ({linked} of the {files - len(older)} files new since the older "
            f"snapshot linked)")


def attempt(t, server, n, files):
    """One venv of `files` files and an apply killed during its snapshot; None on a miss."""
    venv = t.make_venv(f"venv-{n}")
    t.uv_install(venv, "filelock==3.20.0", default_index=server.url("pypi"))
    manifest = t.manifest({
        "version": 1, "name": "kill-during-snapshot", "venv": str(venv),
        "indexes": {"pypi": server.url("pypi")},
        "steps": [{"name": "filelock", "index": "pypi", "packages": ["filelock==3.21.0"],
                   "expect": {"filelock": {"version": "==3.21.0"}}}]}, name=f"manifest-{n}.yaml")
    check_rc(t.stackup("snapshots", "create", "--label", "older", manifest), 0)
    fill(venv, files)   # new to the store: the apply's snapshot links every one of them
    (venv / "made-after-the-older-snapshot.txt").write_text("a rollback to it would lose me\n")
    before = t.tree(venv)
    state = t.venv_state(venv)
    older = objects(state)
    store_mtime = (state / "snapshots" / ".objects").stat().st_mtime_ns

    def linking_or_past():
        incomplete, kinds = progress(state)
        linking = len(incomplete) == 1 and (
            state / "snapshots" / ".objects").stat().st_mtime_ns != store_mtime
        return apply.poll() is not None or "snapshot_taken" in kinds or (
            linking and kinds == ["started"] and not (incomplete[0] / "index.tsv").exists())

    apply, log = t.background_apply(manifest, f"apply-{n}.log")
    try:
        harness.wait_for(linking_or_past, "the apply's snapshot", every=0.002)
        ended = apply.poll()
        if ended is None:
            harness.kill_9(apply)
    finally:
        harness.end_background(apply, log, f"apply {n}")
    check(ended in (None, 0), f"the apply failed by itself (rc {ended})")
    t.assert_nothing_left(f"after kill -9 of stackup during the snapshot (attempt {n})")
    incomplete, kinds = progress(state)   # what the killed run left
    if ended == 0 or kinds != ["started"] or len(incomplete) != 1:
        print(f"attempt {n} ({files} files): missed the snapshot (ended {ended}, journal "
              f"{kinds}, incomplete {incomplete})", flush=True)
        return None
    print(f"moment hit: attempt {n} ({files} files) killed {moment(incomplete[0], before, older)}",
          flush=True)
    return venv, manifest, before, apply.pid, incomplete[0]


def scenario(t):
    root = t.tmp / "indexes"
    for version in ("3.20.0", "3.21.0"):
        wheels.plain(root / "pypi" / "filelock", "filelock", version)
    server = t.serve(root)
    for n, files in enumerate(SIZES, 1):
        caught = attempt(t, server, n, files)
        if caught:
            break
    check(caught, f"no apply was caught during its snapshot, up to {SIZES[-1]} files")
    venv, manifest, before, pid, incomplete = caught
    t.assert_tree(venv, before, "the kill during the snapshot")
    records = harness.journal_records(t.venv_state(venv) / "journal")
    check(records[0]["pid"] == pid, f"the journal does not name the killed pid {pid}: {records}")

    status = t.stackup("status", manifest)
    check_rc(status, 7)
    check_says(status, "INTERRUPTED", "before the snapshot", "none taken", "nothing was changed",
               "stackup rollback", str(pid))

    rolled = t.stackup("rollback", manifest)
    check_rc(rolled, 0)
    check_says(rolled, "nothing to restore", incomplete.name)
    t.assert_tree(venv, before, "the rollback of a run killed during its snapshot")
    check(not (t.venv_state(venv) / "journal").exists(), "rollback left the journal")
    check(not incomplete.exists(), "rollback left the incomplete snapshot")
    check_says(t.stackup("snapshots", "list", manifest), "older")
    snapshots = t.venv_state(venv) / "snapshots"
    (older_dir,) = [d for d in snapshots.iterdir() if d.name != ".objects"]
    kept = objects(t.venv_state(venv))
    check(kept == referenced(older_dir),
          f"after the rollback the store holds {len(kept)} objects, the older snapshot names "
          f"{len(referenced(older_dir))}: {len(kept - referenced(older_dir))} left over, "
          f"{len(referenced(older_dir) - kept)} missing")

    check_rc(t.stackup("status", manifest), 0)
    check_rc(t.stackup("apply", manifest), 0)
    info = t.module(venv, "filelock")
    check(info.get("version") == "3.21.0", f"filelock after the new apply: {info}")


harness.main(scenario)

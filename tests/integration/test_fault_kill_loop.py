"""20 kill -9 of `stackup apply` (3 steps) at random moments, seeded (the seed is printed; set
STACKUP_FAULT_SEED to replay one run), each followed by what the contract tells a user to do:
`stackup status`, then `stackup rollback`. Every third iteration runs in place
(`--snapshot-strategy copy`), the others blue/green (the default). Each iteration starts from a
pristine copy of one venv (`cp -a`: same path, same mtimes) and an empty state dir. After each
kill, with the real uv and real venvs:
- no process the run started is left: none of the apply's descendants seen just before the kill
  is alive, and no process names the test's folders (/proc: exe, cwd, cmdline, environ, fds);
- blue/green: the venv is exactly the old tree (tree digest, mtimes included) or the fully
  verified new one (the same paths, types, modes, sizes and contents as an uncut apply's result,
  bytecode's bytes aside, and `stackup verify` passes); never anything else. In place, a run cut mid-step may leave the
  venv half changed by design (its snapshot is the way back);
- `status` exits 7 when the run left a journal, else 0; `rollback` exits 0 (or, when the run died
  before it recorded anything, 2 saying there is nothing to roll back to) and leaves exactly the
  old tree, and `status` is then clean (exit 0).
The moments are drawn from 0 to 1.3 x an uncut apply's time, so some land after the switch or
after the run's end (then the rollback undoes a whole apply).
"""
import os
import random
import shutil
import subprocess
import time
from pathlib import Path

import harness
from harness import check, check_rc
import treedigest
import wheels

ITERATIONS = 20


def third_step():
    return {"name": "extra", "index": "pypi", "packages": ["stackup-extra"],
            "expect": {"stackup-extra": {"version": "==1.0"}}}


def shape(entries):
    """Tree entries without their mtimes, and bytecode without its bytes (a .pyc records its
    source's mtime): what a second, equal upgrade must reproduce."""
    out = []
    for line in entries:
        fields = line.split("\t")
        if fields[0].endswith(".pyc"):
            fields = fields[:-1]
        out.append("\t".join(fields[:3] + fields[4:]))
    return out


def descendants(pid):
    """The pids of every live descendant of `pid` (from /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def fresh(t, pristine, venv):
    for path in (venv, t.state_dir):
        shutil.rmtree(path, ignore_errors=True)
    r = harness.run(["cp", "-a", pristine, venv], echo=False)
    check(r.rc == 0, "cp -a of the pristine venv failed", r)


CLOSING = ("committed", "rolled_back", "discarded", "staged")


def journal_tail(t, venv):
    state = t.venv_state(venv)
    journal = state / "journal" if state else None
    if journal is None or not journal.exists():
        return None
    records = harness.journal_records(journal)
    return records[-1]["record"] if records else "empty"


def uncut(t, manifest, venv, *extra):
    """An apply left to finish: its duration and the venv's shape after it."""
    start = time.monotonic()
    r = t.stackup("apply", manifest, *extra)
    took = time.monotonic() - start
    check_rc(r, 0)
    harness.check_module(t.module(venv, "torch"), wheels.TORCH_CU130, "13.0")
    return took, shape(t.tree(venv))


def one_kill(t, manifest, venv, old, new_shape, delay, extra):
    """Starts the apply, kills it after `delay` s; returns what was found, for the summary."""
    apply, log = t.background_apply(manifest, "loop.log", *extra)
    try:
        deadline = time.monotonic() + delay
        seen = set()
        while time.monotonic() < deadline and apply.poll() is None:
            seen.update(descendants(apply.pid))
            time.sleep(0.005)
        seen.update(descendants(apply.pid))
        finished = apply.poll()
        if finished is None:
            harness.kill_9(apply)
    finally:
        harness.end_background(apply, log, f"apply killed after {delay:.3f} s")
    check(finished in (None, 0), f"the apply ended by itself with exit {finished}")
    harness.wait_for(lambda: not [p for p in seen if harness.pid_alive(p)],
                     f"the killed apply's children {sorted(seen)} to go", timeout=harness.WAIT_GONE_S)
    t.assert_nothing_left(f"after kill -9 at {delay:.3f} s")

    tail = journal_tail(t, venv)
    now = t.tree(venv)
    if now == old:
        found = "old"
    elif shape(now) == new_shape:
        found = "new"
        check_rc(t.stackup("verify", manifest), 0)
    else:
        found = "half"
        check(extra, f"a blue/green apply killed at {delay:.3f} s (journal: {tail}) left the venv neither "
                     f"the old tree nor the new one:\n{treedigest.diff(old, now)}")

    status = t.stackup("status", "--venv", venv)
    # A journal that ends in its closing record was closed: the kill fell between that record and
    # the journal's removal, and no run is open (exit 0), as when the file is gone.
    check_rc(status, 7 if tail is not None and tail not in CLOSING else 0)
    rolled = t.stackup("rollback", "--venv", venv)
    if rolled.rc != 0:   # a run killed before its journal: nothing to roll back to (exit 2)
        check(rolled.rc == 2 and tail is None and found == "old" and "nothing to roll back to" in rolled.output,
              f"rollback exit {rolled.rc} after a kill at {delay:.3f} s (journal: {tail}, venv: {found})", rolled)
    t.assert_tree(venv, old, f"after status and rollback of a run killed at {delay:.3f} s (journal: {tail})")
    check_rc(t.stackup("status", "--venv", venv), 0)
    return f"{'exited 0' if finished == 0 else 'killed'}, journal {tail}, venv {found}, rollback exit {rolled.rc}"


def scenario(t):
    seed = int(os.environ.get("STACKUP_FAULT_SEED") or time.time_ns() % 1_000_000)
    print(f"seed {seed} (STACKUP_FAULT_SEED={seed} replays it)", flush=True)
    rng = random.Random(seed)

    root = wheels.build_stack(str(t.tmp / "indexes"))
    wheels.plain(os.path.join(root, "pypi", "stackup-extra"), "stackup-extra", "1.0")
    server = t.serve(root)
    pristine = t.cu128_venv(server, "pristine")
    site = next(pristine.glob("lib/python3*/site-packages"))
    for d in range(20):   # enough entries that cloning and snapshotting take a moment
        folder = site / "bulk_data" / f"d{d:02d}"
        folder.mkdir(parents=True)
        for i in range(50):
            (folder / f"f{i:02d}.py").write_text(f"# {d}/{i}\n")
    venv = t.tmp / "venv"
    manifest = t.manifest(t.upgrade_doc(server, venv, later_steps=[third_step()]))
    in_place = ("--snapshot-strategy", "copy")

    fresh(t, pristine, venv)
    old = t.tree(venv)
    blue_green_s, new_shape = uncut(t, manifest, venv)
    fresh(t, pristine, venv)
    check(t.tree(venv) == old, "cp -a did not reproduce the pristine venv exactly")
    in_place_s, in_place_shape = uncut(t, manifest, venv, *in_place)
    check(in_place_shape == new_shape, "an in-place apply built another tree than a blue/green one:\n"
                                       + treedigest.diff(new_shape, in_place_shape))
    print(f"uncut applies: blue/green {blue_green_s:.2f} s, in place {in_place_s:.2f} s", flush=True)

    summary = []
    for n in range(ITERATIONS):
        extra = in_place if n % 3 == 2 else ()
        delay = rng.uniform(0.0, 1.3 * (in_place_s if extra else blue_green_s))
        fresh(t, pristine, venv)
        print(f"=== iteration {n + 1}/{ITERATIONS}: {'in place' if extra else 'blue/green'}, "
              f"kill -9 after {delay:.3f} s", flush=True)
        what = one_kill(t, manifest, venv, old, new_shape, delay, extra)
        summary.append(f"{n + 1:2d} {'in place  ' if extra else 'blue/green'} {delay:6.3f} s: {what}")
    print(f"seed {seed}:\n" + "\n".join(summary), flush=True)


harness.main(scenario)

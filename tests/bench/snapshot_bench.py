#!/usr/bin/env python3
"""Snapshot store benchmark, run by hand (not by CTest).

Generates a venv-like tree (20,000 files, about 800 MB, 2,200 dirs, symlinks) in
a temp dir on the filesystem of --dir (default /work); times --runs times each
`cp -a` of the tree and `cp -a` followed by `sync`; then, --runs times for each
strategy (hardlink, reflink where the filesystem clones, copy), through the
skipped doctest case 'snapshot bench driver', what apply does: one snapshot
create into an empty store, a prepare of its ready tree (apply runs it while uv
does), two restores (before each the driver replaces 2% of the files as uv
would and adds a package), and a second create after a third such upgrade, the
store then holding every file but the upgrade's. Prints the median of every
figure and its ratio to both baselines' medians, every run's figure, and where
the median restores spent their time. Targets (issue 4): hardlink and reflink
create and restore <= 0.05 x cp -a; copy no slower than cp -a.

On this machine's ext4 (no journal) every new inode costs a scan past the
inodes freed in the last 1-6 minutes, so a figure taken after a big delete is
slower, whoever takes it. Nothing the bench makes is deleted before the end,
the baselines come first (so their figures are the unhurried ones), copy comes
last (each of its restores frees a whole tree, as a real one does), and
--settle waits (after a sync) before each measurement for freed inodes to age.

    tests/bench/snapshot_bench.py --tests build-snap/stackup_tests [--runs 3] [--settle 0]
"""

import argparse
import errno
import fcntl
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

FILES = 20_000
BIG_FILES = 80            # the .so files of a CUDA venv
BIG_BYTES = 8 * 1024 * 1024
SMALL_MAX = 16 * 1024     # .py, .pyc, METADATA ...
SYMLINKS = 40
TREE_BYTES = 850 * 1000 ** 2  # what one copy of the tree takes, rounded up
FICLONE = 0x40049409      # _IOW(0x94, 9, int), linux/fs.h


def generate(root):
    rng = random.Random(20261202)
    sp = os.path.join(root, "lib", "python3.12", "site-packages")
    os.makedirs(os.path.join(root, "bin"))
    blob = os.urandom(BIG_BYTES + SMALL_MAX)  # sliced: fast, and every file differs by offset
    total = 0
    for i in range(FILES):
        # About one directory per nine files, as in a torch/CUDA venv.
        d = os.path.join(sp, f"pkg{i % 200:03d}", f"sub{(i // 200) % 10}")
        os.makedirs(d, exist_ok=True)
        size = BIG_BYTES - rng.randrange(1 << 20) if i < BIG_FILES else rng.randrange(SMALL_MAX)
        off = rng.randrange(SMALL_MAX)
        with open(os.path.join(d, f"f{i:05d}.so" if i < BIG_FILES else f"f{i:05d}.py"), "wb") as out:
            out.write(blob[off:off + size])
        total += size
    for i in range(SYMLINKS):
        os.symlink(f"../lib/python3.12/site-packages/pkg{i:03d}", os.path.join(root, "bin", f"link{i}"))
    with open(os.path.join(root, "pyvenv.cfg"), "w") as out:
        out.write("home = /usr/bin\n")
    return total


def run(argv, env=None):
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed ({proc.returncode}):\n{proc.stdout}")
    return proc.stdout


def timed(*argvs):
    """Seconds that running `argvs` one after the other takes."""
    start = time.monotonic()
    for argv in argvs:
        run(argv)
    return time.monotonic() - start


def filesystem_of(path):
    if shutil.which("findmnt"):
        return run(["findmnt", "-n", "-o", "FSTYPE", "--target", path]).strip()
    return run(["stat", "-f", "-c", "%T", path]).strip()


def reflink_skip_reason(work):
    """None when `work` clones files, else why not."""
    src, dst = os.path.join(work, "probe-src"), os.path.join(work, "probe-dst")
    with open(src, "wb") as out:
        out.write(b"x" * 4096)
    try:
        with open(src, "rb") as s, open(dst, "wb") as d:
            fcntl.ioctl(d.fileno(), FICLONE, s.fileno())
        return None
    except OSError as e:
        return f"{filesystem_of(work)} has no reflinks (FICLONE: {os.strerror(e.errno or errno.EIO)})"
    finally:
        for p in (src, dst):
            if os.path.exists(p):
                os.remove(p)


def drive(tests, tree, state, strategy):
    """(create_s, prepare_s, create_again_s, [restore_s, ...], [{phase: s}, ...]) of one driver run."""
    env = dict(os.environ, STACKUP_BENCH_TREE=tree, STACKUP_BENCH_STATE=state,
               STACKUP_BENCH_STRATEGY=strategy, STACKUP_BENCH_RESTORES="2")
    out = run([tests, "-tc=snapshot bench driver", "--no-skip", "--no-intro"], env)
    m = re.search(r"bench strategy=(\S+) .* create_s=([\d.]+) prepare_s=([\d.]+) create_again_s=([\d.]+) "
                  r"restore_s=(\S+) phases=(\S.*)", out)
    if not m or m.group(1) != strategy:
        sys.exit(f"driver printed no figures for {strategy}:\n{out}")
    restores = [float(s) for s in m.group(5).split(",")]
    phases = [dict((name, float(s)) for name, s in (p.split(":") for p in one.split(",")))
              for one in m.group(6).strip().split(";")]
    return float(m.group(2)), float(m.group(3)), float(m.group(4)), restores, phases


def settle(seconds):
    run(["sync"])
    if seconds > 0:
        time.sleep(seconds)


def fmt_runs(values):
    return " ".join(f"{v:.3f}" for v in values)


def report(base, rows, phases, skipped):
    cp, cps = statistics.median(base["cp -a"]), statistics.median(base["cp -a + sync"])
    print(f"{'baseline':<24}{'median s':>10}   runs")
    for name, values in base.items():
        print(f"{name:<24}{statistics.median(values):>10.3f}   {fmt_runs(values)}")
    print()
    print(f"{'strategy / step':<26}{'median s':>10}{'/ cp -a':>10}{'/ cp -a+sync':>14}   runs")
    for (strategy, step), values in rows.items():
        med = statistics.median(values)
        print(f"{strategy + ' ' + step:<26}{med:>10.3f}{med / cp:>10.3f}{med / cps:>14.3f}   {fmt_runs(values)}")
    for line in skipped:
        print(line)
    print("targets: hardlink and reflink create and restore <= 0.05 x cp -a; copy <= 1.0 x cp -a")
    print("create: into an empty store; create again: after a committed upgrade, the store holding all but its")
    print("files (what every apply after the first pays); prepare: the ready tree, built while uv runs;")
    print("restore: after prepare (a failed apply's rollback); restore again: no prepare between")
    print()
    print("where the restores went (median s per phase):")
    for (strategy, step), runs in phases.items():
        names = list(runs[0])
        print(f"  {strategy + ' ' + step + ':':<24}" +
              ", ".join(f"{n} {statistics.median(r[n] for r in runs):.3f}" for n in names))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tests", default="build/stackup_tests", help="the stackup_tests binary")
    ap.add_argument("--dir", default="/work", help="where the temp dir goes (its filesystem is measured)")
    ap.add_argument("--runs", type=int, default=3, help="rounds; medians are reported (default 3)")
    ap.add_argument("--settle", type=float, default=0,
                    help="seconds to wait (after a sync) before each measurement, for freed inodes to age (default 0)")
    args = ap.parse_args()
    tests = os.path.abspath(args.tests)
    need = (4 * args.runs + 2) * TREE_BYTES
    free = shutil.disk_usage(args.dir).free
    if free < need:
        sys.exit(f"refusing: {free / 1e9:.1f} GB free in {args.dir}, need {need / 1e9:.1f} GB")
    work = tempfile.mkdtemp(prefix="stackup-bench-", dir=args.dir)
    try:
        tree = os.path.join(work, "venv")
        total = generate(tree)
        dirs = sum(len(d) for _, d, _ in os.walk(tree)) + 1
        skip = reflink_skip_reason(work)
        strategies = ["hardlink"] + ([] if skip else ["reflink"]) + ["copy"]
        print(f"tree: {FILES} files + {SYMLINKS} symlinks in {dirs} dirs, {total / 1e6:.0f} MB, "
              f"on {filesystem_of(work)} ({work}); {args.runs} runs of each, settle {args.settle:g} s")
        base = {"cp -a": [], "cp -a + sync": []}
        rows, phases = {}, {}
        for r in range(args.runs):
            settle(args.settle)
            base["cp -a"].append(timed(["cp", "-a", tree, os.path.join(work, f"cp-{r}")]))
            settle(args.settle)
            base["cp -a + sync"].append(timed(["cp", "-a", tree, os.path.join(work, f"cps-{r}")], ["sync"]))
        # Copy last: its restores free a tree of inodes each, which slows whatever follows.
        for strategy in strategies:
            for r in range(args.runs):
                settle(args.settle)
                create_s, prepare_s, again_s, restores, restore_phases = drive(
                    tests, tree, os.path.join(work, f"state-{strategy}-{r}"), strategy)
                rows.setdefault((strategy, "create"), []).append(create_s)
                rows.setdefault((strategy, "create again"), []).append(again_s)
                rows.setdefault((strategy, "prepare"), []).append(prepare_s)
                for step, seconds, p in zip(("restore", "restore again"), restores, restore_phases):
                    rows.setdefault((strategy, step), []).append(seconds)
                    phases.setdefault((strategy, step), []).append(p)
        report(base, rows, phases, [f"reflink create, restore: skipped: {skip}"] if skip else [])
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The move the product exists for, on real wheels, run by hand (never by CTest or CI):

    STACKUP_REAL_INDEX=<simple-API root> python3 tests/bench/torch_move_bench.py [--stackup build/stackup] \\
        [--uv .tools/venv/bin/uv] [--runs 3] [--work /work/bench-torch]

Builds once, under --work (kept for later runs), a venv (`python3 -m venv`, then `uv pip install`)
holding torch 2.9.1 (CUDA 12.8, its 15 `nvidia-*-cu12` wheels and triton: ~6.6 GB) and a uv cache
that also holds torch 2.11.0 (CUDA 13.0) and its wheels (an untimed install into a scratch venv:
~7 GB downloaded the first time). Then --runs times, alternating which side goes first, each on
its own fresh `cp -a` of the venv made outside the timing and followed by a `sync`:
- stackup: `stackup apply` of one step (`torch==2.11.0`, `remove: ["nvidia-*-cu12"]`, expect
  `torch: {cuda: "13.0"}`), then `stackup rollback` of it;
- bare: what a careful hand types: `uv pip uninstall` of the `-cu12` dists, the same `uv pip
  install` apply runs (its requirements line, hash included), then `python -c 'import torch'`;
  and one lstat walk of the venv (`du -s`), the floor of rollback's integrity check.
Prints the medians with their ratios (targets, issue 30: apply <= 1.15 x (bare uv + import),
relocate under 0.2 s, rollback <= 1.1 x one lstat walk), each of apply's phases, every run, and
the peak RSS of stackup's own process (target under 40 MB). The copies are deleted at the end.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from benchlib import run, timed, timed_rss

ENV_INDEX = "STACKUP_REAL_INDEX"
REPO = Path(__file__).resolve().parents[2]
MANIFEST = """version: 1
name: torch-move-bench
cuda:
  toolkit: "13.0"
indexes:
  real: {index}
steps:
  - name: torch
    index: real
    packages: ["torch==2.11.0"]
    remove: ["nvidia-*-cu12"]
    expect:
      torch: {{version: "==2.11.0", cuda: "13.0"}}
env:
  UV_CACHE_DIR: {cache}
"""


def median(values):
    return statistics.median(values) if values else float("nan")


def prepare(args, index, env):
    work = Path(args.work)
    base, cache = work / "base", work / "uv-cache"
    if not (base / ".ready").exists():
        shutil.rmtree(base, ignore_errors=True)
        run([sys.executable, "-m", "venv", base])
        run([args.uv, "pip", "install", "--python", base / "bin" / "python", "--index-url", index,
             "--only-binary", ":all:", "torch==2.9.1"], env)
        scratch = work / "warm"
        shutil.rmtree(scratch, ignore_errors=True)
        run([args.uv, "venv", "--python", sys.executable, scratch])
        run([args.uv, "pip", "install", "--python", scratch / "bin" / "python", "--index-url", index,
             "--only-binary", ":all:", "torch==2.11.0"], env)
        shutil.rmtree(scratch)
        (base / ".ready").write_text("")
    manifest = work / "move.yaml"
    manifest.write_text(MANIFEST.format(index=index, cache=cache))
    return base, manifest


def fresh_copy(base, dest):
    shutil.rmtree(dest, ignore_errors=True)
    run(["cp", "-a", base, dest])
    run(["sync"])


def stackup_side(args, manifest, venv, env):
    state = Path(f"{venv}-state")
    seconds, rss, out = timed_rss([args.stackup, "apply", manifest, "--venv", venv, "--state-dir", state, "--json"], env)
    doc = json.loads(out)
    back, back_rss, _ = timed_rss([args.stackup, "rollback", "--venv", venv, "--state-dir", state], env)
    return {"apply": seconds, "phases": doc["phases"], "argv": doc["steps"][0]["argv"],
            "requirements": doc["steps"][0]["requirements"], "rollback": back, "rss_kb": max(rss, back_rss)}


def bare_side(args, index, venv, requirements, env):
    python = venv / "bin" / "python"
    names = run([python, "-I", "-c", "import importlib.metadata as m; print(' '.join(d.metadata['Name'] for d in "
                 "m.distributions() if d.metadata['Name'].endswith('-cu12')))"]).split()
    req = Path(f"{venv}.req")
    req.write_text("\n".join(requirements) + "\n")
    walk, _ = timed(["du", "-s", venv])
    t_uninstall, _ = timed([args.uv, "pip", "uninstall", "--python", python, *names], env)
    t_install, _ = timed([args.uv, "pip", "install", "--python", python, "--no-config", "--default-index", index,
                          "--reinstall-package", "torch", "--requirements", req], env)
    t_import, _ = timed([python, "-c", "import torch"], env)
    uv = t_uninstall + t_install
    return {"uv": uv, "uv_import": uv + t_import, "walk": walk}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stackup", default=str(REPO / "build" / "stackup"))
    ap.add_argument("--uv", default=str(REPO / ".tools" / "venv" / "bin" / "uv"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default="/work/bench-torch")
    args = ap.parse_args()
    index = os.environ.get(ENV_INDEX)
    if not index:
        print(f"{ENV_INDEX} is not set: nothing run")
        return 125
    Path(args.work).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, UV_CACHE_DIR=str(Path(args.work) / "uv-cache"), STACKUP_UV=args.uv)
    base, manifest = prepare(args, index, env)
    ours, bare, made = [], [], []
    requirements = None
    for i in range(args.runs):
        order = ["stackup", "bare"] if i % 2 == 0 else ["bare", "stackup"]
        if requirements is None:
            order = ["stackup", "bare"]   # the bare side replays apply's own uv command
        for side in order:
            venv = Path(args.work) / f"run{i}-{side}"
            made.append(venv)
            fresh_copy(base, venv)
            if side == "stackup":
                ours.append(stackup_side(args, manifest, venv, env))
                requirements = ours[-1]["requirements"]
            else:
                bare.append(bare_side(args, index, venv, requirements, env))
    apply, uv, uv_import = median([r["apply"] for r in ours]), median([b["uv"] for b in bare]), median(
        [b["uv_import"] for b in bare])
    rollback, walk = median([r["rollback"] for r in ours]), median([b["walk"] for b in bare])
    print(f"torch 2.9.1 (cu128) -> 2.11.0 (cu130), {args.runs} run(s), medians:")
    print(f"  apply                 {apply:7.2f} s   / bare uv {uv:.2f} s = {apply / uv:.2f} x")
    print(f"                                   / bare uv + import torch {uv_import:.2f} s = {apply / uv_import:.2f} x "
          f"(target 1.15)")
    for phase in ours[0]["phases"]:
        print(f"    {phase:18s} {median([r['phases'].get(phase, 0) for r in ours]):7.3f} s")
    print(f"  rollback              {rollback:7.3f} s   / one lstat walk (du -s) {walk:.3f} s = {rollback / walk:.2f} x "
          f"(target 1.1)")
    print(f"  peak RSS of stackup   {max(r['rss_kb'] for r in ours) / 1024:.1f} MB (target 40)")
    print("  every run: apply " + " ".join(f"{r['apply']:.2f}" for r in ours) + "; bare uv + import " +
          " ".join(f"{b['uv_import']:.2f}" for b in bare))
    for venv in made:
        shutil.rmtree(venv, ignore_errors=True)
        shutil.rmtree(f"{venv}-state", ignore_errors=True)
        Path(f"{venv}.req").unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

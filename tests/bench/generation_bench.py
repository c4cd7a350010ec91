#!/usr/bin/env python3
"""Generations benchmark, run by hand (not by CTest): what blue/green costs and what the
exchange buys, each figure a ratio to a baseline timed in the same run, alternating, medians.

Builds a real venv (python -m venv + the real uv, the test fixtures' CUDA 12.8 stack from a
local index) and grows it to --files generated files (about --mb MB, ~9 files per dir, as a
torch/CUDA venv), then:
- rollback of a committed apply (an exchange after the target's integrity walk) and roll
  forward (`rollback --to` the newer one), each against `cp -a` of the venv (target: <= 0.02);
- switch of a staged generation, against `cp -a` (target: <= 0.02);
- a 3-step apply against the same three uv commands run bare on an identical venv (target
  <= 1.15; with the fixtures' tiny wheels uv's own work is a few hundred ms, so what the ratio
  shows is stackup's fixed cost: the clone, the probes, the switch);
- disk: `du` of the venv alone and of the venv with its state dir after three generations
  (hard links: each inode counted once), i.e. what the generations cost beyond the venv.

    python3 tests/bench/generation_bench.py --stackup build/stackup --uv .tools/venv/bin/uv [--runs 5]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "support"))
import index_server  # noqa: E402
import wheels  # noqa: E402
from benchlib import run, timed  # noqa: E402


def grow(venv, files, total_mb):
    """site-packages/bulk/pkgNNN/subN/fNNNNN.py: `files` files of about total_mb MB in all."""
    rng = random.Random(20261203)
    site = next(Path(venv).glob("lib/python3*/site-packages"))
    avg = total_mb * 1_000_000 // files
    blob = os.urandom(4 * avg + 65536)
    for i in range(files):
        d = site / "bulk" / f"pkg{i % 200:03d}" / f"sub{(i // 200) % 10}"
        d.mkdir(parents=True, exist_ok=True)
        size = rng.randrange(2 * avg)
        off = rng.randrange(65536)
        (d / f"f{i:05d}.py").write_bytes(blob[off:off + size])


def du_kib(*paths):
    out = run(["du", "-s", "-k", "-c", *paths])
    return int(out.strip().splitlines()[-1].split()[0])


def median_ratio(values, base):
    return statistics.median(values) / statistics.median(base)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stackup", required=True)
    ap.add_argument("--uv", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--mb", type=int, default=800)
    ap.add_argument("--dir", default=None, help="where the venvs go (default: $TMPDIR)")
    args = ap.parse_args()
    stackup, uv = os.path.abspath(args.stackup), os.path.abspath(args.uv)
    work = Path(tempfile.mkdtemp(prefix="stackup-gen-bench-", dir=args.dir))
    env = dict(os.environ, STACKUP_UV=uv)
    server = None
    try:
        root = wheels.build_stack(str(work / "indexes"))
        wheels.build_wheel(str(work / "indexes" / "pypi" / "clitool"), "clitool", "2.0", {
            "clitool/__init__.py": "__version__ = '2.0'\ndef main():\n    print('ok')\n",
            "clitool-2.0.dist-info/entry_points.txt": "[console_scripts]\nclitool = clitool:main\n"},
            top_level=["clitool"])
        server = index_server.IndexServer(root).start()
        cache = work / "uv-cache"

        def make_venv(name):
            venv = work / name
            run([sys.executable, "-m", "venv", "--without-pip", venv])
            run([uv, "pip", "install", "--no-config", "--cache-dir", cache, "--python", venv / "bin" / "python",
                 "--index", server.url("cu128"), "--default-index", server.url("pypi"),
                 f"torch=={wheels.TORCH_CU128}", f"torchvision=={wheels.VISION_CU128}",
                 f"sgl-kernel=={wheels.SGL_KERNEL_PYPI}"])
            return venv

        live = make_venv("live")
        grow(live, args.files, args.mb)
        bare = work / "bare"
        run(["cp", "-a", live, bare])
        state = work / "state"
        doc = {
            "version": 1, "name": "bench", "venv": str(live),
            "indexes": {"pytorch": server.url("cu130"), "sglang": server.url("sglang-cu130"),
                        "pypi": server.url("pypi")},
            "default_index": "pypi", "allow_unmet": ["sgl-kernel"],
            "env": {"UV_CACHE_DIR": str(cache)},
            "steps": [
                {"name": "torch", "index": "pytorch", "packages": ["torch", "torchvision"], "prerelease": True,
                 "expect": {"torch": {"local": "cu130", "cuda": "13.0"}}},
                {"name": "sgl-kernel", "index": "sglang", "packages": ["sgl-kernel"], "deps": False,
                 "expect": {"sgl-kernel": {"local": "cu130"}}},
                {"name": "cli", "index": "pypi", "packages": ["clitool==2.0"], "expect": {"clitool": {}}},
            ],
            "snapshot": {"keep": 4},
        }
        manifest = work / "manifest.json"   # JSON is YAML
        manifest.write_text(json.dumps(doc))
        su = [stackup, "--state-dir", state]

        # The first apply (untimed) makes generations 1 and 2 and leaves each step's requirements file.
        out = run([*su, "apply", manifest, "--json"], env)
        applied = json.loads(out[out.index("{"):])
        clone = applied["clone"]
        bare_cmds = []
        reqdir = work / "bare-requirements"
        reqdir.mkdir()
        for i, step in enumerate(applied["steps"]):
            argv = [a.replace(clone, str(bare)) for a in step["argv"]]
            req = argv.index("--requirements") + 1
            copy = reqdir / f"step-{i + 1}.txt"
            copy.write_text("\n".join(step["requirements"]) + "\n")
            argv[req] = str(copy)
            bare_cmds.append(argv)
        reset_bare = [uv, "pip", "install", "--no-config", "--cache-dir", cache, "--python", bare / "bin" / "python",
                      "--index", server.url("cu128"), "--default-index", server.url("pypi"),
                      f"torch=={wheels.TORCH_CU128}", f"torchvision=={wheels.VISION_CU128}",
                      f"sgl-kernel=={wheels.SGL_KERNEL_PYPI}"]
        reset_bare_cli = [uv, "pip", "uninstall", "--no-config", "--python", bare / "bin" / "python", "clitool"]
        new_gen = applied["generation"]["number"]

        cp_s, rollback_s, forward_s, switch_s, apply_s, bare_s = [], [], [], [], [], []
        copy_dst = work / "cp-a"
        for n in range(args.runs):
            run(["sync"])
            s, _ = timed(["cp", "-a", live, copy_dst])
            cp_s.append(s)
            shutil.rmtree(copy_dst)
            run(["sync"])
            s, _ = timed([*su, "rollback", "--venv", live], env)
            rollback_s.append(s)
            run(["sync"])
            s, _ = timed([*su, "rollback", "--venv", live, "--to", str(new_gen)], env)
            forward_s.append(s)
            # From the old generation: stage (untimed), then the timed switch.
            run([*su, "rollback", "--venv", live], env)
            run([*su, "apply", manifest, "--stage"], env)
            run(["sync"])
            s, _ = timed([*su, "switch", "--venv", live], env)
            switch_s.append(s)
            # A whole apply from the old generation, and the same uv commands bare.
            run([*su, "rollback", "--venv", live], env)
            run(["sync"])
            s, out = timed([*su, "apply", manifest, "--json"], env)
            apply_s.append(s)
            new_gen = json.loads(out[out.index("{"):])["generation"]["number"]
            run(reset_bare)
            run(reset_bare_cli, ok=False)
            run(["sync"])
            start = time.monotonic()
            for argv in bare_cmds:
                run(argv)
            bare_s.append(time.monotonic() - start)
            print(f"run {n + 1}: cp -a {cp_s[-1]:.2f}s rollback {rollback_s[-1]:.3f}s forward {forward_s[-1]:.3f}s "
                  f"switch {switch_s[-1]:.3f}s apply {apply_s[-1]:.2f}s bare uv {bare_s[-1]:.2f}s", flush=True)

        venv_kib = du_kib(live)
        all_kib = du_kib(live, state)
        gens = json.loads(run([*su, "history", "--venv", live, "--json"], env,
                              stderr=subprocess.DEVNULL))["generations"]
        entries = sum(1 for _ in live.rglob("*"))
        print()
        print(f"venv: {entries} entries, {venv_kib / 1024:.0f} MiB; {args.runs} runs, medians")
        print(f"  cp -a of the venv          {statistics.median(cp_s):8.3f} s   (baseline)")
        for name, values, target in (("rollback", rollback_s, 0.02), ("roll forward", forward_s, 0.02),
                                     ("switch (staged)", switch_s, 0.02)):
            print(f"  {name:26s} {statistics.median(values):8.3f} s   {median_ratio(values, cp_s):.4f} x cp -a"
                  f"   (target <= {target})")
        print(f"  bare uv, 3 steps           {statistics.median(bare_s):8.3f} s   (baseline)")
        print(f"  stackup apply, 3 steps     {statistics.median(apply_s):8.3f} s   "
              f"{median_ratio(apply_s, bare_s):.2f} x bare uv   (target <= 1.15); overhead "
              f"{statistics.median(apply_s) - statistics.median(bare_s):.2f} s")
        print(f"  disk: venv {venv_kib / 1024:.1f} MiB; venv + {len(gens)} generations "
              f"{all_kib / 1024:.1f} MiB (each inode once): the generations cost {(all_kib - venv_kib) / 1024:.1f} MiB")
    finally:
        if server:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

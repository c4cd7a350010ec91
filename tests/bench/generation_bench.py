#!/usr/bin/env python3
"""Generations benchmark, run by hand (not by CTest): what blue/green costs and what the
exchange buys, each figure a ratio to a baseline timed in the same run, alternating, medians.

Builds a real venv (python -m venv + the real uv, the test fixtures' CUDA 12.8 stack from a
local index) and grows it to --files generated files (about --mb MB, ~9 files per dir, as a
torch/CUDA venv), then:
- the generation clone (the apply's `clone` phase) against `cp -a` and `cp -al` of the venv
  (`cp -al` links every file: the floor of any per-file method);
- rollback of a committed apply (an exchange after the target's integrity walk) and roll
  forward (`rollback --to` the newer one), each against `cp -a` of the venv (target: <= 0.02);
  rollback also against `uv pip sync` of the previous freeze with a warm cache, on an identical
  venv that the bare uv commands below upgraded;
- switch of a staged generation, against `cp -a` (target: <= 0.02);
- a 3-step apply against the same three uv commands run bare on an identical venv (target
  <= 1.15; with the fixtures' tiny wheels uv's own work is a few hundred ms, so what the ratio
  shows is stackup's fixed cost: the clone, the probes, the switch);
- `verify` of 10 expectations (10 packages of 40 modules each, in their own small venv) against
  one bare `python -c 'import ...'` of the same modules, bytecode written by an untimed import
  first (target <= 1.1);
- peak RSS of stackup's own process for plan, apply and rollback (target < 40 MB);
- disk: `du` of the venv alone and of the venv with its state dir after three generations
  (hard links: each inode counted once), i.e. what the generations cost beyond the venv.
`--json FILE` writes every median and ratio for contrib/bench.sh's table.

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
from benchlib import run, timed, timed_rss  # noqa: E402


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


def module_package(out_dir, name, modules=40, functions=40):
    """A package whose __init__ imports `modules` submodules of `functions` functions each: an
    import that costs what a mid-sized real package's does (unmarshalling, executing)."""
    files = {f"{name}/__init__.py": "__version__ = '1.0'\n" + "".join(
        f"from . import m{i}\n" for i in range(modules))}
    for i in range(modules):
        files[f"{name}/m{i}.py"] = "".join(
            f"def f{j}(x, y=1):\n    # f{j} of m{i}\n    return [x * k + y for k in range({j} + 2)]\n\n\n"
            f"CONST{j} = {{'k': {j}, 'v': ({j}, {i}), 'name': 'c{j}'}}\n"
            for j in range(functions))
    return wheels.build_wheel(out_dir, name, "1.0", files, top_level=[name])


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
    ap.add_argument("--keep", action="store_true", help="leave the venvs and state dirs (to profile a command)")
    ap.add_argument("--json", default=None, help="also write the medians and ratios to this file")
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
        verify_modules = [f"benchmod{i}" for i in range(10)]
        for name in verify_modules:
            module_package(str(work / "indexes" / "pypi" / name), name)
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
        old_freeze = work / "old-freeze.txt"
        old_freeze.write_text(run([uv, "pip", "freeze", "--no-config", "--python", bare / "bin" / "python"],
                                  stderr=subprocess.DEVNULL))
        sync_bare = [uv, "pip", "sync", "--no-config", "--cache-dir", cache, "--python", bare / "bin" / "python",
                     "--index", server.url("cu128"), "--default-index", server.url("pypi"), old_freeze]
        vfy = work / "verify-venv"
        run([sys.executable, "-m", "venv", "--without-pip", vfy])
        run([uv, "pip", "install", "--no-config", "--cache-dir", cache, "--python", vfy / "bin" / "python",
             "--index-url", server.url("pypi"), *verify_modules])
        verify_manifest = work / "verify.json"
        verify_manifest.write_text(json.dumps({
            "version": 1, "name": "verify-bench", "venv": str(vfy), "indexes": {"pypi": server.url("pypi")},
            "default_index": "pypi",
            "steps": [{"name": "modules", "index": "pypi", "packages": verify_modules,
                       "expect": {name: {"version": "==1.0"} for name in verify_modules}}]}))
        bare_import = [vfy / "bin" / "python", "-c", "import " + ", ".join(verify_modules)]
        run(bare_import)   # writes the bytecode both sides then use
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
        new_gen = applied["generation"]["number"]

        def alternate(n, first, second):
            """Runs the two sides, the first one first in even runs."""
            if n % 2:
                second()
                first()
            else:
                first()
                second()

        fig = {k: [] for k in ("cp_a", "cp_al", "rollback", "walk", "uv_sync", "forward", "switch", "apply", "bare",
                               "clone", "verify", "import", "plan_rss", "apply_rss", "rollback_rss")}
        copy_dst, link_dst = work / "cp-a", work / "cp-al"

        def side_cp_a():
            run(["sync"])
            s, _ = timed(["cp", "-a", live, copy_dst])
            fig["cp_a"].append(s)

        def side_cp_al():
            run(["sync"])
            s, _ = timed(["cp", "-al", live, link_dst])
            fig["cp_al"].append(s)

        def side_apply():
            nonlocal new_gen
            run(["sync"])
            s, rss, out = timed_rss([*su, "apply", manifest, "--json"], env)
            doc = json.loads(out[out.index("{"):])
            new_gen = doc["generation"]["number"]
            fig["apply"].append(s)
            fig["apply_rss"].append(rss)
            fig["clone"].append(doc["phases"]["clone"])

        def side_bare():
            run(["sync"])
            start = time.monotonic()
            for argv in bare_cmds:
                run(argv)
            fig["bare"].append(time.monotonic() - start)

        def side_verify():
            s, _ = timed([*su, "verify", verify_manifest], env)
            fig["verify"].append(s)

        def side_import():
            s, _ = timed(bare_import)
            fig["import"].append(s)

        def side_rollback():
            run(["sync"])
            s, rss, _ = timed_rss([*su, "rollback", "--venv", live], env)
            fig["rollback"].append(s)
            fig["rollback_rss"].append(rss)

        def side_walk():  # one lstat walk of the venv: the floor of rollback's integrity check
            run(["sync"])
            s, _ = timed(["du", "-s", live])
            fig["walk"].append(s)

        for n in range(args.runs):
            alternate(n, side_cp_a, side_cp_al)
            shutil.rmtree(copy_dst)
            shutil.rmtree(link_dst)
            alternate(n, side_rollback, side_walk)
            run(["sync"])
            s, _ = timed([*su, "rollback", "--venv", live, "--to", str(new_gen)], env)
            fig["forward"].append(s)
            # From the old generation: stage (untimed), then the timed switch.
            run([*su, "rollback", "--venv", live], env)
            run([*su, "apply", manifest, "--stage"], env)
            run(["sync"])
            s, _ = timed([*su, "switch", "--venv", live], env)
            fig["switch"].append(s)
            # A plan and a whole apply from the old generation, and the same uv commands bare;
            # then the bare venv back to the old freeze by uv pip sync (rollback's baseline).
            run([*su, "rollback", "--venv", live], env)
            _, rss, _ = timed_rss([*su, "plan", manifest], env)
            fig["plan_rss"].append(rss)
            alternate(n, side_apply, side_bare)
            run(["sync"])
            s, _ = timed(sync_bare)
            fig["uv_sync"].append(s)
            alternate(n, side_verify, side_import)
            print(f"run {n + 1}: " + " ".join(f"{k} {v[-1]:.3f}" for k, v in fig.items()), flush=True)

        med = {k: statistics.median(v) for k, v in fig.items()}
        venv_kib = du_kib(live)
        all_kib = du_kib(live, state)
        gens = json.loads(run([*su, "history", "--venv", live, "--json"], env,
                              stderr=subprocess.DEVNULL))["generations"]
        entries = sum(1 for _ in live.rglob("*"))
        ratios = {
            "clone_vs_cp_a": med["clone"] / med["cp_a"], "clone_vs_cp_al": med["clone"] / med["cp_al"],
            "rollback_vs_cp_a": med["rollback"] / med["cp_a"],
            "rollback_vs_walk": med["rollback"] / med["walk"], "rollback_vs_uv_sync": med["rollback"] / med["uv_sync"],
            "forward_vs_cp_a": med["forward"] / med["cp_a"], "switch_vs_cp_a": med["switch"] / med["cp_a"],
            "apply_vs_bare_uv": med["apply"] / med["bare"], "verify_vs_import": med["verify"] / med["import"],
        }
        print()
        print(f"venv: {entries} entries, {venv_kib / 1024:.0f} MiB; {args.runs} runs, medians")
        print(f"  cp -a of the venv          {med['cp_a']:8.3f} s   (baseline)")
        print(f"  cp -al of the venv         {med['cp_al']:8.3f} s   (baseline: the floor of a per-file method)")
        print(f"  generation clone (apply)   {med['clone']:8.3f} s   {ratios['clone_vs_cp_a']:.3f} x cp -a, "
              f"{ratios['clone_vs_cp_al']:.2f} x cp -al")
        print(f"  uv pip sync, old freeze    {med['uv_sync']:8.3f} s   (baseline, warm cache)")
        for name, key, value in (("rollback", "rollback", med["rollback"]), ("roll forward", "forward", med["forward"]),
                                 ("switch (staged)", "switch", med["switch"])):
            print(f"  {name:26s} {value:8.3f} s   {ratios[key + '_vs_cp_a']:.4f} x cp -a   (target <= 0.02)")
        print(f"  rollback vs uv pip sync               {ratios['rollback_vs_uv_sync']:.3f} x")
        print(f"  one lstat walk (du -s)     {med['walk']:8.3f} s   rollback {ratios['rollback_vs_walk']:.2f} x the walk "
              f"(target <= 1.1)")
        print(f"  bare uv, 3 steps           {med['bare']:8.3f} s   (baseline)")
        print(f"  stackup apply, 3 steps     {med['apply']:8.3f} s   {ratios['apply_vs_bare_uv']:.2f} x bare uv   "
              f"(target <= 1.15); overhead {med['apply'] - med['bare']:.2f} s")
        print(f"  bare import of 10 modules  {med['import']:8.3f} s   (baseline, bytecode present)")
        print(f"  stackup verify, 10 expect. {med['verify']:8.3f} s   {ratios['verify_vs_import']:.2f} x   (target <= 1.1)")
        print(f"  peak RSS: plan {med['plan_rss'] / 1024:.1f} MB, apply {med['apply_rss'] / 1024:.1f} MB, "
              f"rollback {med['rollback_rss'] / 1024:.1f} MB   (target < 40 MB)")
        print(f"  disk: venv {venv_kib / 1024:.1f} MiB; venv + {len(gens)} generations "
              f"{all_kib / 1024:.1f} MiB (each inode once): the generations cost {(all_kib - venv_kib) / 1024:.1f} MiB")
        if args.json:
            Path(args.json).write_text(json.dumps({
                "runs": args.runs, "entries": entries, "venv_mib": venv_kib / 1024, "medians": med,
                "ratios": ratios, "all": fig, "generations_mib": (all_kib - venv_kib) / 1024}, indent=1))
    finally:
        if server:
            server.stop()
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

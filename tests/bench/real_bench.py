#!/usr/bin/env python3
"""Real-index benchmark, run by hand (never by CTest or CI): stackup against bare uv and bare
python on a realistic venv of real packages from a real package index; medians, each figure a
ratio to a baseline timed in the same run, the two sides alternating which goes first.

The index is read only from the environment: STACKUP_REAL_INDEX, the PEP 503 / PEP 691 simple-API
root of a public index or a mirror of one. Nothing here names one; without the variable it stops.

Builds once, under --work (default /work/bench-real; reused by later runs while its package list
is the same), a venv (`python3 -m venv`, then one `uv pip install --index-url $STACKUP_REAL_INDEX`)
of real packages pinned to older versions: 63 distributions, ~1.3 GB with triton and
cupy-cuda12x (--small: 4 small pure-Python ones, for quick runs). It writes a 3-step manifest
that upgrades some of them (full: numpy; pandas + pyarrow; transformers + tokenizers +
huggingface-hub), then, --runs times (default 5), each side on its own fresh `cp -a` of the venv
made outside the timing, followed by a `sync`:
- apply: `stackup apply MANIFEST --venv COPY --json` against the same three `uv pip install`
  commands (the argv of the apply's own JSON, the clone's python replaced by the other copy's,
  its requirements files copied; the environment stackup gives uv) run bare (target <= 1.15).
  Both sides share one warm uv cache and stackup one warm page cache: an untimed first apply
  fills them. The medians of the apply JSON's `phases` (seconds per phase) say where stackup's
  own time goes. A second baseline adds to the bare uv commands what a careful hand would run
  after each: `python -I -c 'import ...'` of the step's own modules (all of them after the last),
  which writes bytecode as stackup's probes do: the verification's floor in a venv uv installed
  without bytecode, so that "apply / uv + imports" shows stackup's own cost;
- verify: `stackup verify MANIFEST` on the upgraded copy against one bare
  `python -c 'import m1, m2, ...'` of the expectations' modules, bytecode already written by an
  untimed bare import (target <= 1.1); three pairs a run, each run's figure their median;
- plan: `stackup plan MANIFEST` against `uv pip install --dry-run` of ALL steps' requirement
  lines (the manifest's packages, one resolve; uv also resolves their dependencies, plan only
  looks up the requested packages' files), cold (a new empty `--cache-dir` for stackup, a new
  UV_CACHE_DIR for uv) and warm (the same caches again, at once), target <= 1.0 each; and the
  second (warm) plan / the first (cold) one; then the same for the wide plan: 20 real projects
  unpinned on one step (their newest releases; grpcio's, aiohttp's and regex's pages are 4-5 MB
  each) against `uv pip install --dry-run --upgrade` of the same names (--upgrade: they are
  installed, and uv would otherwise not ask the index);
- peak RSS of stackup's own process (not its children: it runs python and uv) for both plans, apply
  and rollback (`stackup rollback --venv COPY` after the apply): a thread reads VmHWM in
  /proc/PID/status every ~5 ms while the process runs and keeps the last value read, so growth
  in the last few ms of its life is missed (target < 40 MB). The timing is the main thread's
  wait on the process, so the poller adds no delay to it.
Prints a table: figure, median, baseline median, ratio, target, every run's value. Everything
the runs make is kept until the end (on ext4 a big delete slows whatever creates inodes next),
about two venvs per run (full: ~2.6 GB a run), then deleted; the base venv, the uv cache and
stackup's page cache are kept for the next time.

    STACKUP_REAL_INDEX=<simple-API root> python3 tests/bench/real_bench.py [--stackup build/stackup] \\
        [--uv .tools/venv/bin/uv] [--runs 5] [--work /work/bench-real] [--small]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

from benchlib import run, timed, timed_rss

REPO = Path(__file__).resolve().parents[2]
ENV_INDEX = "STACKUP_REAL_INDEX"

# Older releases, every one with a cp311 manylinux x86_64 wheel (or pure Python); their
# dependencies are left to the resolver.
FULL_BASE = [
    "numpy==2.0.2", "scipy==1.14.1", "pandas==2.2.2", "pyarrow==16.1.0", "grpcio==1.62.2",
    "protobuf==4.25.3", "transformers==4.40.2", "tokenizers==0.19.1", "safetensors==0.4.3",
    "huggingface-hub==0.24.7", "pydantic==2.7.4", "fastapi==0.110.3", "uvicorn==0.29.0",
    "requests==2.31.0", "aiohttp==3.9.5", "sympy==1.12.1", "networkx==3.2.1", "jinja2==3.1.3",
    "pillow==10.3.0", "regex==2024.5.15", "tqdm==4.66.4", "pyyaml==6.0.1", "psutil==5.9.8",
    "scikit-learn==1.4.2", "matplotlib==3.8.4", "triton==2.3.1", "cupy-cuda12x==13.3.0",
]
# (step name, [requirements], {dist: import module or None})
FULL_STEPS = [
    ("numpy", ["numpy==2.1.3"], {"numpy": None}),
    ("pandas-pyarrow", ["pandas==2.2.3", "pyarrow==18.1.0"], {"pandas": None, "pyarrow": None}),
    ("transformers", ["transformers==4.46.3", "tokenizers==0.20.3", "huggingface-hub==0.26.5"],
     {"transformers": None, "tokenizers": None, "huggingface-hub": "huggingface_hub"}),
]
# The wide plan: 20 real projects, unpinned (latest), on one step: a plan's page-heavy case
# (numpy's, grpcio's and protobuf's pages list thousands of files each).
FULL_WIDE = ["numpy", "scipy", "pandas", "pyarrow", "grpcio", "protobuf", "transformers", "tokenizers",
             "safetensors", "huggingface-hub", "pydantic", "fastapi", "uvicorn", "requests", "aiohttp",
             "sympy", "networkx", "jinja2", "pillow", "regex"]
SMALL_BASE = ["idna==3.6", "six==1.15.0", "packaging==23.1", "typing-extensions==4.9.0"]
SMALL_STEPS = [
    ("idna", ["idna==3.7"], {"idna": None}),
    ("packaging-six", ["packaging==24.1", "six==1.16.0"], {"packaging": None, "six": None}),
    ("typing-extensions", ["typing-extensions==4.12.2"], {"typing-extensions": "typing_extensions"}),
]
SMALL_WIDE = ["idna", "six", "packaging", "typing-extensions"]


# verify and its bare import are short (under a second): each run times this many pairs, alternating.
VERIFY_PAIRS = 3


def json_doc(out):
    return json.loads(out[out.index("{"):])


def hermetic_env(extra):
    """The environment stackup gives uv: the caller's PIP_*, UV_*, PYTHON* and VIRTUAL_ENV dropped."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "UV_", "PYTHON")) and k != "VIRTUAL_ENV"}
    env.update(extra)
    env["UV_PYTHON_DOWNLOADS"] = "never"
    return env


def build_base(work, name, packages, uv, index, uv_cache):
    venv = work / f"base-{name}"
    marker = work / f"base-{name}.json"
    if venv.is_dir() and marker.is_file() and json.loads(marker.read_text()) == packages:
        print(f"reusing {venv}", flush=True)
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    marker.unlink(missing_ok=True)
    print(f"building {venv} ({len(packages)} packages and their dependencies) ...", flush=True)
    run(["python3", "-m", "venv", venv])
    env = hermetic_env({"UV_CACHE_DIR": str(uv_cache)})
    s, _ = timed([uv, "pip", "install", "--no-config", "--python", venv / "bin" / "python",
                  "--index-url", index, *packages], env)
    marker.write_text(json.dumps(packages))
    print(f"  built in {s:.0f} s", flush=True)
    return venv


def write_manifest(path, name, venv, steps, uv_cache):
    """YAML; the index is written as ${STACKUP_REAL_INDEX}, which stackup expands itself. A step
    without expectations only installs (the wide plan's)."""
    q = json.dumps   # a JSON string is a YAML string
    lines = ["version: 1", f"name: real-bench-{name}", f"venv: {q(str(venv))}", 'python: "3.11"',
             "indexes:", f"  real: {q('${' + ENV_INDEX + '}')}", "default_index: real",
             "env:", f"  UV_CACHE_DIR: {q(str(uv_cache))}", "steps:"]
    for step, reqs, expect in steps:
        lines += [f"  - name: {step}", "    index: real", f"    packages: [{', '.join(q(r) for r in reqs)}]"]
        if expect:
            lines.append("    expect:")
        for dist, module in expect.items():
            version = next(r.split("==")[1] for r in reqs if r.split("==")[0] == dist)
            extra = f", import: {module}" if module else ""
            lines.append(f"      {dist}: {{version: {q('==' + version)}{extra}}}")
    lines += ["snapshot:", "  keep: 2", ""]
    path.write_text("\n".join(lines))


def med(values):
    return statistics.median(values) if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stackup", default=str(REPO / "build" / "stackup"), help="the stackup binary")
    ap.add_argument("--uv", default=str(REPO / ".tools" / "venv" / "bin" / "uv"), help="the uv binary")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work", default="/work/bench-real",
                    help="the base venv, caches and each run's copies (the venv and caches are reused)")
    ap.add_argument("--small", action="store_true", help="4 small packages instead of ~60 (quick runs)")
    args = ap.parse_args()
    index = os.environ.get(ENV_INDEX)
    if not index:
        sys.exit(f"{ENV_INDEX} is not set: export it as the simple-API root (PEP 503/691) of the index to use")
    stackup, uv = os.path.abspath(args.stackup), os.path.abspath(args.uv)
    for tool in (stackup, uv):
        if not os.access(tool, os.X_OK):
            sys.exit(f"not executable: {tool}")
    name = "small" if args.small else "full"
    base_pkgs, steps, wide = (SMALL_BASE, SMALL_STEPS, SMALL_WIDE) if args.small else (FULL_BASE, FULL_STEPS, FULL_WIDE)
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    uv_cache = work / "uv-cache"              # shared by the base build, every apply and the bare uv runs
    page_cache = work / f"stackup-cache-{name}"   # stackup's warm page cache for apply
    runs_dir = work / f"runs-{name}"
    shutil.rmtree(runs_dir, ignore_errors=True)
    runs_dir.mkdir()

    base = build_base(work, name, base_pkgs, uv, index, uv_cache)
    manifest = work / f"manifest-{name}.yaml"
    write_manifest(manifest, name, base, steps, uv_cache)
    wide_manifest = work / f"manifest-{name}-wide.yaml"
    write_manifest(wide_manifest, f"{name}-wide", base, [("wide", wide, {})], uv_cache)
    env = dict(os.environ)
    env.pop("STACKUP_CACHE_DIR", None)
    env.pop("STACKUP_STATE_DIR", None)
    su = [stackup, "--uv", uv]
    modules = [m or d.replace("-", "_") for _, _, exp in steps for d, m in exp.items()]
    step_modules = [[m or d.replace("-", "_") for d, m in exp.items()] for _, _, exp in steps]
    all_reqs = [r for _, reqs, _ in steps for r in reqs]

    try:
        print(run([*su, "plan", manifest, "--cache-dir", page_cache, "--state-dir", runs_dir / "state-plan"], env),
              flush=True)

        # Untimed first apply: fills the uv cache with the upgrade's wheels and stackup's page
        # cache, and gives the uv argv of each step.
        warm = runs_dir / "warmup"
        run(["cp", "-a", base, warm])
        out = run([*su, "--json", "--cache-dir", page_cache, "--state-dir", runs_dir / "state-warmup",
                   "apply", manifest, "--venv", warm], env)
        applied = json_doc(out)
        if not applied.get("ok"):
            sys.exit(f"the first apply failed:\n{out[-4000:]}")
        clone = applied["clone"]
        reqdir = runs_dir / "bare-requirements"
        reqdir.mkdir()
        bare_steps = []   # argv with "{PY}" where the clone's python was
        for i, step in enumerate(applied["steps"]):
            if step.get("remove_argv"):
                sys.exit("the manifest's steps remove dists: the bare side does not replay that")
            argv = list(step["argv"])
            py = argv.index("--python") + 1
            if not argv[py].startswith(clone):
                sys.exit(f"step {i + 1}'s --python is not in the clone {clone}: {argv}")
            argv[py] = "{PY}"
            req = argv.index("--requirements") + 1
            copy = reqdir / f"step-{i + 1}.txt"
            copy.write_text("\n".join(step["requirements"]) + "\n")
            argv[req] = str(copy)
            if any(clone in a for a in argv):
                sys.exit(f"step {i + 1}'s argv names the clone elsewhere: {argv}")
            bare_steps.append(argv)
        print("bare uv commands (PY: the copy's python):")
        for argv in bare_steps:
            print("  " + " ".join(argv))
        print(flush=True)

        fig = {k: [] for k in ("apply", "bare_uv", "bare_checked", "verify", "bare_import", "plan_cold", "uv_cold", "plan_warm",
                               "uv_warm", "rollback", "rss_plan_cold", "rss_plan_warm", "rss_apply",
                               "rss_rollback", "wide_cold", "wide_uv_cold", "wide_warm", "wide_uv_warm",
                               "rss_wide_cold", "rss_wide_warm")}
        phases = {}
        kept = []   # pages in stackup's cache after each cold plan
        for n in range(args.runs):
            rd = runs_dir / f"run-{n + 1}"
            rd.mkdir()
            a, b = rd / "venv-stackup", rd / "venv-bare"
            run(["cp", "-a", base, a])
            run(["cp", "-a", base, b])
            state = rd / "state"
            flip = n % 2 == 1   # odd runs: the baseline first

            def side_apply():
                run(["sync"])
                s, rss, out = timed_rss([*su, "--json", "--cache-dir", page_cache, "--state-dir", state,
                                         "apply", manifest, "--venv", a], env)
                doc = json_doc(out)
                fig["apply"].append(s)
                fig["rss_apply"].append(rss)
                for k, v in (doc.get("phases") or {}).items():
                    if isinstance(v, (int, float)):
                        phases.setdefault(k, []).append(v)

            def side_bare_uv():
                # The same uv commands, each followed (outside the uv figure, inside the
                # "checked" one) by what a careful hand does: import the step's own modules
                # (writing bytecode, as stackup's probes now do); after the last, all of them.
                benv = hermetic_env({"UV_CACHE_DIR": str(uv_cache), "VIRTUAL_ENV": str(b)})
                cmds = [[str(b / "bin" / "python") if x == "{PY}" else x for x in argv] for argv in bare_steps]
                run(["sync"])
                uv_s = checked_s = 0.0
                for i, argv in enumerate(cmds):
                    s, _ = timed(argv, benv)
                    uv_s += s
                    mods = modules if i + 1 == len(cmds) else step_modules[i]
                    c, _ = timed([b / "bin" / "python", "-I", "-c", "import " + ", ".join(mods)])
                    checked_s += s + c
                fig["bare_uv"].append(uv_s)
                fig["bare_checked"].append(checked_s)

            for f in ((side_bare_uv, side_apply) if flip else (side_apply, side_bare_uv)):
                f()

            # verify, on the upgraded venv; an untimed bare import writes the bytecode first.
            imp = [a / "bin" / "python", "-c", "import " + ", ".join(modules)]
            run(imp)

            def side_verify():
                s, _ = timed([*su, "--state-dir", state, "verify", manifest, "--venv", a], env)
                fig["verify"].append(s)

            def side_import():
                s, _ = timed(imp)
                fig["bare_import"].append(s)

            for _ in range(VERIFY_PAIRS):   # each run's figure: the median of its pairs
                for f in ((side_import, side_verify) if flip else (side_verify, side_import)):
                    f()
            for key in ("verify", "bare_import"):
                fig[key][-VERIFY_PAIRS:] = [med(fig[key][-VERIFY_PAIRS:])]

            s, rss, _ = timed_rss([*su, "--state-dir", state, "rollback", "--venv", a], env)
            fig["rollback"].append(s)
            fig["rss_rollback"].append(rss)

            # plan: cold (new empty caches), then warm (the same caches again); the steps' plan,
            # then the wide one (20 projects), each against uv's dry run of the same requirements.
            for prefix, man, reqs in (("", manifest, all_reqs), ("wide_", wide_manifest, wide)):
                pcache, ucache = rd / f"{prefix}plan-cache", rd / f"{prefix}uv-dry-cache"
                # --upgrade for the wide plan: its unpinned names are installed in the venv already,
                # which uv would take as satisfied without asking the index.
                uv_dry = [uv, "pip", "install", "--dry-run", "--no-config", "--python", base / "bin" / "python",
                          "--default-index", index, *(["--upgrade"] if prefix else []), *reqs]
                uenv = hermetic_env({"UV_CACHE_DIR": str(ucache)})
                for temp in ("cold", "warm"):
                    plan_key, uv_key = (f"wide_{temp}", f"wide_uv_{temp}") if prefix else (f"plan_{temp}", f"uv_{temp}")

                    def side_plan():
                        s, rss, _ = timed_rss([*su, "--cache-dir", pcache, "--state-dir", rd / "state-plan",
                                               "plan", man], env)
                        fig[plan_key].append(s)
                        fig[f"rss_{plan_key}"].append(rss)

                    def side_uv():
                        s, _ = timed(uv_dry, uenv)
                        fig[uv_key].append(s)

                    for f in ((side_uv, side_plan) if flip else (side_plan, side_uv)):
                        f()
                    if temp == "cold" and not prefix:
                        kept.append(sum(1 for p in (pcache / "pages-v1").glob("*") if p.is_file()))

            print(f"run {n + 1}: apply {fig['apply'][-1]:.2f}s bare uv {fig['bare_uv'][-1]:.2f}s | "
                  f"verify {fig['verify'][-1]:.3f}s import {fig['bare_import'][-1]:.3f}s | "
                  f"plan cold {fig['plan_cold'][-1]:.3f}s uv {fig['uv_cold'][-1]:.3f}s, "
                  f"warm {fig['plan_warm'][-1]:.3f}s uv {fig['uv_warm'][-1]:.3f}s | "
                  f"wide plan cold {fig['wide_cold'][-1]:.3f}s uv {fig['wide_uv_cold'][-1]:.3f}s, "
                  f"warm {fig['wide_warm'][-1]:.3f}s uv {fig['wide_uv_warm'][-1]:.3f}s | "
                  f"rollback {fig['rollback'][-1]:.3f}s", flush=True)

        entries = sum(1 for _ in base.rglob("*"))
        kib = int(run(["du", "-s", "-k", base]).split()[0])
        dists = len(list(base.glob("lib/python3*/site-packages/*.dist-info")))
        print()
        print(f"venv ({name}): {dists} distributions, {entries} entries, {kib / 1024:.0f} MiB; "
              f"{args.runs} runs, medians; plan baseline: uv --dry-run of all {len(all_reqs)} steps' requirements")
        rows = [
            ("apply, 3 steps (s)", "apply", "bare_uv", "<= 1.15"),
            ("apply / uv + imports (s)", "apply", "bare_checked", ""),
            ("verify (s)", "verify", "bare_import", "<= 1.1"),
            ("plan cold (s)", "plan_cold", "uv_cold", "<= 1.0"),
            ("plan warm (s)", "plan_warm", "uv_warm", "<= 1.0"),
            ("plan warm / plan cold", "plan_warm", "plan_cold", ""),
            (f"plan {len(wide)} projects cold (s)", "wide_cold", "wide_uv_cold", "<= 1.0"),
            (f"plan {len(wide)} projects warm (s)", "wide_warm", "wide_uv_warm", "<= 1.0"),
            ("rollback (s)", "rollback", None, ""),
            ("peak RSS plan cold (MB)", "rss_plan_cold", None, "< 40"),
            ("peak RSS plan warm (MB)", "rss_plan_warm", None, "< 40"),
            (f"peak RSS plan {len(wide)} cold (MB)", "rss_wide_cold", None, "< 40"),
            (f"peak RSS plan {len(wide)} warm (MB)", "rss_wide_warm", None, "< 40"),
            ("peak RSS apply (MB)", "rss_apply", None, "< 40"),
            ("peak RSS rollback (MB)", "rss_rollback", None, "< 40"),
        ]
        print(f"  {'figure':26s} {'median':>8s} {'baseline':>9s} {'ratio':>6s} {'target':>7s}  runs (baseline runs)")
        for label, key, basekey, target in rows:
            scale = 1 / 1024 if key.startswith("rss") else 1.0
            vals = [v * scale for v in fig[key]]
            fmt = "{:.1f}" if key.startswith("rss") else "{:.3f}"
            runs_txt = " ".join(fmt.format(v) for v in vals)
            if basekey:
                bvals = fig[basekey]
                ratio = med(vals) / med(bvals)
                btxt, rtxt = f"{med(bvals):9.3f}", f"{ratio:6.2f}"
                runs_txt += " (" + " ".join(f"{v:.3f}" for v in bvals) + ")"
            else:
                btxt, rtxt = f"{'':9s}", f"{'':6s}"
            print(f"  {label:26s} {fmt.format(med(vals)):>8s} {btxt} {rtxt} {target:>7s}  {runs_txt}")
        print(f"  stackup's page cache after a cold plan: {' '.join(map(str, kept))} page(s) kept")
        if kept and not any(kept):
            print("  (the index sent neither a validator nor a lifetime with its pages: stackup keeps none, so its"
                  " warm plan fetches every page again)")
        if phases:
            print("  apply phases (median s): " + ", ".join(f"{k} {med(v):.3f}" for k, v in phases.items()))
            print(f"  apply overhead (median apply - median bare uv): {med(fig['apply']) - med(fig['bare_uv']):.2f} s;"
                  f" less the imports a hand would run: {med(fig['apply']) - med(fig['bare_checked']):.2f} s")
    finally:
        shutil.rmtree(runs_dir, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""stackup against real wheels from a real package index. Run by hand, never by CI.

    STACKUP_REAL_INDEX=<simple-API root> python3 tests/realworld/run.py \
        --stackup build/stackup --uv .tools/venv/bin/uv

Scenarios (README.md says what each asserts and why):
  dry-run          `apply --dry-run` on a pip-made CUDA 12 venv changes nothing
  cu12-leftover    the CUDA 13 manifest without `remove:` is refused by `plan` (exit 3, naming the cu12 dists)
  cu12-to-cu13     plan lists the removals, apply, no -cu12 dist left, verify, rollback brings them back
  healthy-verify   `verify` passes on a venv of popular compiled packages (version-only expectations)
  deps-false       a `deps: false` step that leaves cuda-pathfinder out fails (exit 1) and leaves the venv as it was
  numpy-pandas     the multi-step rule: numpy 1.26.4 -> 2.2.6, then pandas 2.1.4 (numpy<2) -> 2.2.3 applies
                   (exit 0, the break step 1 made named as repaired by step 2); numpy alone fails (exit 1),
                   the venv as before
  console-script   blue/green with a real console script (tqdm): after the switch it names the venv's python,
                   runs, matches its RECORD line, no file names the clone; rollback switches back

Python standard library only. Every fact is asserted by running the venv's own python
(importlib.metadata) or by digesting the tree, not by reading stackup's words.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

# ---------------------------------------------------------------------------------------------
# What the scenarios install. Versions are pinned so that a rerun meets the same wheels.
# ---------------------------------------------------------------------------------------------

# A CUDA 12 server as pip leaves it. nvidia-cuda-nvrtc-cu12 is left out on purpose (a 90 MB wheel).
CU12_STACK = [
    "nvidia-cuda-runtime-cu12==12.9.79",
    "nvidia-nvjitlink-cu12==12.9.86",
    "nvidia-nvtx-cu12==12.9.79",
    "cuda-bindings==12.9.4",            # pulls cuda-pathfinder
]
CU12_DISTS = ["nvidia-cuda-runtime-cu12", "nvidia-nvjitlink-cu12", "nvidia-nvtx-cu12"]

# The CUDA 13 names: unsuffixed, all installing into nvidia/cu13/. Pinned to the 13.0 toolkit.
CU13_PACKAGES = ["nvidia-cuda-runtime==13.0.*", "nvidia-nvjitlink==13.0.*", "nvidia-nvtx==13.0.*",
                 "cuda-bindings==13.0.*"]
CU13_EXPECT = {
    "nvidia-cuda-runtime": ">=13.0,<13.1",
    "nvidia-nvjitlink": ">=13.0,<13.1",
    "nvidia-nvtx": ">=13.0,<13.1",
    "cuda-bindings": ">=13.0,<13.1",
}

# Popular packages with compiled parts, 2024 pins (CPython 3.9-3.12 wheels). They include every
# case where a naive import/version rule raises a false alarm (see /tmp/realworld-facts.md, 1c):
#   opencv-python-headless 4.10.0.84 -> cv2.__version__ 4.10.0
#   regex 2024.9.11 -> regex.__version__ 2.5.147
#   pyarrow 17.0.0: top_level.txt starts with __dummy__, then benchmarks, cmake_modules, examples
#   nvidia-ml-py: top_level.txt `example` (a junk example.py) before `pynvml`; pynvml has no __version__
#   protobuf: no top_level.txt; the module is google.protobuf (google is a namespace package)
#   PyYAML: top_level.txt `_yaml` before `yaml`; numpy/scipy/pandas/tokenizers/safetensors: no top_level.txt
HEALTHY_PINNED = [
    "numpy==1.26.4", "scipy==1.13.1", "pandas==2.2.3", "pyarrow==17.0.0", "grpcio==1.66.2",
    "protobuf==4.25.5", "opencv-python-headless==4.10.0.84", "pillow==10.4.0", "pyyaml==6.0.2",
    "regex==2024.9.11", "psutil==6.0.0", "nvidia-ml-py==12.560.30", "lxml==5.3.0", "msgpack==1.1.0",
    "tokenizers==0.20.0", "safetensors==0.4.5", "markupsafe==2.1.5", "cffi==1.17.1",
]
# Judged under a CUDA 13.0 target (when nvcc is there): a CUDA 13 build whose version major is not 13
# (nvidia-cufile 1.15.1.6 is cuda-toolkit 13.0.2's cufile) and nvidia-ml-py 12.560.30 (NVML bindings,
# versioned by driver, no CUDA build) must both pass the mixed-CUDA scan.
HEALTHY_CUDA13 = ["nvidia-cufile==1.15.1.6"]
# The module that really is each package (for the notes printed beside stackup's judgement).
REAL_MODULE = {
    "numpy": "numpy", "scipy": "scipy", "pandas": "pandas", "pyarrow": "pyarrow", "grpcio": "grpc",
    "protobuf": "google.protobuf", "opencv-python-headless": "cv2", "pillow": "PIL", "pyyaml": "yaml",
    "regex": "regex", "psutil": "psutil", "nvidia-ml-py": "pynvml", "lxml": "lxml", "msgpack": "msgpack",
    "tokenizers": "tokenizers", "safetensors": "safetensors", "markupsafe": "markupsafe", "cffi": "cffi",
    "nvidia-cufile": "(none: headers and .so under nvidia/cu13/)",
}

# deps: false. cuda-bindings 12.9.0 requires nothing on Linux; 12.9.1 and later require cuda-pathfinder~=1.1.
DEPS_BEFORE = "cuda-bindings==12.9.0"
DEPS_STEP = "cuda-bindings==12.9.4"
DEPS_MISSING = "cuda-pathfinder"

# The multi-step rule: pandas 2.1.4 requires numpy<2 (on CPython 3.11), pandas 2.2.3 accepts numpy 2.
MULTI_BEFORE = ["numpy==1.26.4", "scipy==1.13.1", "pandas==2.1.4"]
MULTI_NUMPY = "numpy==2.2.6"
MULTI_PANDAS = "pandas==2.2.3"

SCENARIOS = ["dry-run", "cu12-leftover", "cu12-to-cu13", "healthy-verify", "deps-false", "numpy-pandas",
             "console-script"]
SCRIPT_BEFORE = "tqdm==4.66.4"   # a real package with a console script (`tqdm`), upgraded
SCRIPT_AFTER = "tqdm==4.67.1"
CMD_TIMEOUT = 1800


# ---------------------------------------------------------------------------------------------
# Small tools
# ---------------------------------------------------------------------------------------------

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def say(text=""):
    print(text, flush=True)


class Failed(Exception):
    """A check of stackup's behaviour failed."""


class SetupError(Exception):
    """The scenario could not be set up (index, pip, uv): not stackup's fault."""


def run(argv, env=None, timeout=CMD_TIMEOUT, cwd=None):
    started = time.monotonic()
    try:
        p = subprocess.run([str(a) for a in argv], env=env, cwd=cwd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise Failed(f"timed out after {timeout}s: {' '.join(map(str, argv))}") from e
    p.seconds = time.monotonic() - started
    return p


def tail(text, lines=25):
    rows = (text or "").rstrip("\n").splitlines()
    cut = rows[-lines:]
    prefix = [f"      ... ({len(rows) - lines} earlier lines)"] if len(rows) > lines else []
    return "\n".join(prefix + ["      | " + r for r in cut])


class Ctx:
    def __init__(self, args, index):
        self.stackup = Path(args.stackup).resolve()
        self.uv = Path(args.uv).resolve()
        self.python = args.python
        self.index = index.rstrip("/") + "/"
        self.work = Path(args.work).resolve()
        self.cache = Path(args.cache).resolve()
        self.verbose = args.verbose
        self.healthy = HEALTHY_PINNED if not args.healthy_latest else [r.split("==")[0] for r in HEALTHY_PINNED]
        self.nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists()
                                              else None)

    # -- environments the scenarios start from -------------------------------------------------

    def tool_env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
        env["PIP_CACHE_DIR"] = str(self.cache / "pip")
        env["UV_CACHE_DIR"] = str(self.cache / "uv")
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        return env

    def pip_venv(self, path, requirements):
        """A venv as a real server has it: `python3 -m venv`, then pip inside it."""
        say(f"    setup: {self.python} -m venv {path}; pip install {' '.join(requirements)}")
        p = run([self.python, "-m", "venv", path], env=self.tool_env())
        if p.returncode:
            raise SetupError(f"python -m venv failed:\n{tail(p.stderr)}")
        p = run([path / "bin/python", "-m", "pip", "install", "-q", "--index-url", self.index,
                 "--only-binary", ":all:", *requirements], env=self.tool_env())
        if p.returncode:
            raise SetupError(f"pip install failed:\n{tail(p.stdout + p.stderr)}")

    def uv_venv(self, path, requirements, no_deps=False):
        say(f"    setup: uv venv {path}; uv pip install {'--no-deps ' if no_deps else ''}{' '.join(requirements)}")
        p = run([self.uv, "venv", "-q", "-p", self.python, path], env=self.tool_env())
        if p.returncode:
            raise SetupError(f"uv venv failed:\n{tail(p.stderr)}")
        p = run([self.uv, "pip", "install", "-q", "-p", path / "bin/python", "--index-url", self.index,
                 "--only-binary", ":all:", *(["--no-deps"] if no_deps else []), *requirements],
                env=self.tool_env())
        if p.returncode:
            raise SetupError(f"uv pip install failed:\n{tail(p.stdout + p.stderr)}")

    # -- stackup -----------------------------------------------------------------------------

    def stackup_run(self, *args, json_out=False):
        argv = [self.stackup, "--uv", self.uv, *args] + (["--json"] if json_out else [])
        env = {k: v for k, v in os.environ.items() if k not in ("STACKUP_STATE_DIR",)}
        p = run(argv, env=env)
        p.doc = None
        if json_out:
            try:
                p.doc = json.loads(p.stdout)
            except ValueError:
                p.doc = None
        how = f"exit {p.returncode}"
        if p.returncode < 0:
            try:
                how += f" (killed by {signal.Signals(-p.returncode).name}: stackup crashed)"
            except ValueError:
                how += " (killed by a signal)"
        say(f"    $ stackup {' '.join(map(str, args))}{' --json' if json_out else ''}  -> {how}  ({p.seconds:.1f}s)")
        if self.verbose:
            say(tail(p.stdout + p.stderr, 200))
        return p

    def cuda_block(self):
        """`cuda:` for the manifest from the nvcc on PATH (home = nvcc's parent's parent)."""
        if not self.nvcc:
            return None
        p = run([self.nvcc, "--version"])
        m = re.search(r"release (\d+\.\d+)", p.stdout)
        if not m:
            return None
        return {"toolkit": m.group(1), "home": str(Path(self.nvcc).resolve().parent.parent)}

    def manifest(self, path, venv, steps, cuda=None):
        """Write a schema-1 manifest. JSON scalars are valid YAML, so every value goes through json.dumps."""
        q = json.dumps
        lines = ["version: 1", f"name: {q(path.stem)}", f"venv: {q(str(venv))}"]
        if cuda:
            lines += ["cuda:", f"  toolkit: {q(cuda['toolkit'])}", f"  home: {q(cuda['home'])}"]
        lines += ["indexes:", f"  real: {q(self.index)}", "default_index: real", "steps:"]
        for s in steps:
            lines.append(f"  - name: {q(s['name'])}")
            lines.append("    index: real")
            lines.append(f"    packages: [{', '.join(q(p) for p in s['packages'])}]")
            if "deps" in s:
                lines.append(f"    deps: {'true' if s['deps'] else 'false'}")
            if s.get("remove"):
                lines.append(f"    remove: [{', '.join(q(r) for r in s['remove'])}]")
            if s.get("expect"):
                lines.append("    expect:")
                for dist, spec in s["expect"].items():
                    lines.append(f"      {q(dist)}: {{version: {q(spec)}}}")
        lines += ["env:", f"  UV_CACHE_DIR: {q(str(self.cache / 'uv'))}"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        if self.verbose:
            say(tail(path.read_text(), 100))
        return path


def installed(venv):
    """{normalized name: version} as the venv's own python sees it (the first dist on sys.path wins)."""
    code = ("import importlib.metadata as md, json, re\n"
            "out = {}\n"
            "for d in md.distributions():\n"
            "    n = re.sub(r'[-_.]+', '-', d.metadata['Name'] or '').lower()\n"
            "    out.setdefault(n, d.version)\n"
            "print(json.dumps(out))\n")
    p = run([venv / "bin/python", "-c", code])
    if p.returncode:
        raise Failed(f"the venv's python cannot list its distributions:\n{tail(p.stderr)}")
    return json.loads(p.stdout)


def tree(root):
    """path -> (kind, size, mtime_ns, mode, link target): paths, sizes and mtimes of everything under root."""
    out = {}
    root = Path(root)
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            kind = "l" if p.is_symlink() else "d" if p.is_dir() else "f"
            out[str(p.relative_to(root))] = (kind, st.st_size if kind == "f" else 0, st.st_mtime_ns, st.st_mode,
                                              os.readlink(p) if kind == "l" else "")
        st = Path(dirpath).lstat()
        out[str(Path(dirpath).relative_to(root)) + "/."] = ("d", 0, st.st_mtime_ns, st.st_mode, "")
    return out


def tree_changes(before, after, limit=15):
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    lines = [f"added {p}" for p in added] + [f"removed {p}" for p in removed] + [f"changed {p}" for p in changed]
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else []), len(lines)


def digest(t):
    return hashlib.sha256(json.dumps(sorted(t.items())).encode()).hexdigest()[:16]


class Checks:
    """Sub-checks of one scenario: each prints ok / NOT OK; the scenario fails if any failed."""

    def __init__(self):
        self.failed = []

    def __call__(self, ok, what, detail=None):
        say(f"    {'ok    ' if ok else 'NOT OK'} {what}")
        if detail and (not ok):
            say(detail)
        if not ok:
            self.failed.append(what)
        return ok

    def done(self):
        if self.failed:
            raise Failed("; ".join(self.failed))


def names_all(text, names):
    return [n for n in names if n not in text]


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------

class Fixture:
    """The pip-made CUDA 12 venv, built once per run and shared by dry-run, cu12-leftover, cu12-to-cu13
    (in that order: only the last one changes it)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.base = ctx.work / "cu12"
        self.venv = self.base / "venv"
        self.ready = False

    def get(self):
        if not self.ready:
            shutil.rmtree(self.base, ignore_errors=True)
            self.base.mkdir(parents=True)
            self.ctx.pip_venv(self.venv, CU12_STACK)
            have = installed(self.venv)
            missing = [d for d in CU12_DISTS if d not in have]
            if missing:
                raise SetupError(f"the cu12 venv lacks {missing}")
            self.ready = have
        elif installed(self.venv) != self.ready:
            say("    the cu12 venv was changed by an earlier scenario: rebuilding it")
            self.ready = False
            return self.get()
        return self.venv

    def manifest(self, with_remove, name):
        steps = [{"name": "cuda13", "packages": CU13_PACKAGES, "expect": CU13_EXPECT}]
        if with_remove:
            steps[0]["remove"] = ["nvidia-*-cu12"]
        return self.ctx.manifest(self.ctx.work / "manifests" / f"{name}.yaml", self.venv, steps,
                                 cuda=self.ctx.cuda_block())


def scenario_dry_run(ctx, fx):
    venv = fx.get()
    manifest = fx.manifest(True, "cu13-dry-run")
    c = Checks()
    # The venv's parent holds the venv and stackup's default state dir (.stackup/ beside the venv).
    before_tree, before_dists = tree(fx.base), installed(venv)
    r = ctx.stackup_run("apply", "--dry-run", manifest)
    after_tree, after_dists = tree(fx.base), installed(venv)
    c(r.returncode == 0, f"apply --dry-run exits 0 (got {r.returncode})", tail(r.stdout + r.stderr))
    # stackup's lock is <state dir>/<venv>-<hash>/lock; uv's own is <venv>/.lock (uv venv makes it).
    locks = [p for p in after_tree if p.rsplit("/", 1)[-1] in ("lock", ".lock") or p.endswith(".lock")]
    locks = [p for p in locks if p not in before_tree or before_tree[p] != after_tree[p]]
    c(not locks, "no new or changed lock file (lock, .lock, *.lock) in or beside the venv" + (f": {locks}" if locks else ""))
    in_venv = lambda t: {k: v for k, v in t.items() if k == "venv/." or k.startswith("venv/")}
    changes, n = tree_changes(in_venv(before_tree), in_venv(after_tree))
    c(n == 0, f"the venv is unchanged (paths, sizes, mtimes, modes; digest {digest(in_venv(before_tree))}"
              f" -> {digest(in_venv(after_tree))}): {n} change(s)", "\n".join("      " + l for l in changes))
    c(before_dists == after_dists, "installed distributions unchanged")
    # Beside the venv: stackup's state dir (.stackup/) and anything else. An empty directory is tolerated
    # (noted); any file, link or changed entry is a change the dry run made.
    outside = lambda t: {k: v for k, v in t.items() if not (k == "venv/." or k.startswith("venv/"))}
    ob, oa = outside(before_tree), outside(after_tree)
    new_dirs = sorted(k for k in set(oa) - set(ob) if oa[k][0] == "d")
    rest = {k: v for k, v in oa.items() if k not in new_dirs}
    changes, n = tree_changes({k: v for k, v in ob.items() if k != "./."}, {k: v for k, v in rest.items() if k != "./."})
    if new_dirs:
        say(f"    note: the dry run created directories beside the venv: {new_dirs}")
    c(n == 0, f"nothing else beside the venv changed (state dir included): {n} change(s)",
      "\n".join("      " + l for l in changes))
    c.done()


def scenario_cu12_leftover(ctx, fx):
    venv = fx.get()
    manifest = fx.manifest(False, "cu13-without-remove")
    c = Checks()
    before = tree(fx.base)
    r = ctx.stackup_run("plan", manifest)
    out = r.stdout + r.stderr
    c(r.returncode == 3, f"plan without remove: exits 3 (got {r.returncode})", tail(out))
    missing = names_all(out, CU12_DISTS)
    c(not missing, "the refusal names every leftover cu12 dist" + (f" (not named: {missing})" if missing else ""),
      tail(out))
    changes, n = tree_changes(before, tree(fx.base))
    c(n == 0, f"plan touched nothing beside or in the venv: {n} change(s)", "\n".join("      " + l for l in changes))
    c.done()


def scenario_cu12_to_cu13(ctx, fx):
    venv = fx.get()
    manifest = fx.manifest(True, "cu13")
    cuda = ctx.cuda_block()
    say(f"    cuda: {cuda if cuda else 'no nvcc found: the manifest has no cuda: block'}")
    c = Checks()
    dists_before = installed(venv)
    cu12_before = {n: v for n, v in dists_before.items() if n.endswith("-cu12")}

    r = ctx.stackup_run("plan", manifest)
    out = r.stdout + r.stderr
    if not c(r.returncode == 0, f"plan exits 0 (got {r.returncode})", tail(out)):
        c.done()
    missing = names_all(out, list(cu12_before))
    c(not missing, "plan lists the removals" + (f" (not named: {missing})" if missing else ""), tail(out))

    tree_before = tree(venv)
    r = ctx.stackup_run("apply", manifest)
    if not c(r.returncode == 0, f"apply exits 0 (got {r.returncode})", tail(r.stdout + r.stderr)):
        c.done()
    after = installed(venv)
    left = sorted(n for n in after if n.endswith("-cu12"))
    c(not left, "no -cu12 dist left (importlib.metadata)" + (f": {left}" if left else ""))
    wrong = {d: after.get(d) for d in CU13_EXPECT if not (after.get(d) or "").startswith("13.0.")}
    c(not wrong, "the CUDA 13.0 dists are installed" + (f" (wrong: {wrong})" if wrong else ""))
    say(f"    after apply: {', '.join(f'{n} {v}' for n, v in sorted(after.items()) if n.startswith(('nvidia', 'cuda')))}")

    r = ctx.stackup_run("verify", manifest)
    c(r.returncode == 0, f"verify exits 0 (got {r.returncode})", tail(r.stdout + r.stderr))

    r = ctx.stackup_run("rollback", manifest)
    c(r.returncode == 0, f"rollback exits 0 (got {r.returncode})", tail(r.stdout + r.stderr))
    back = installed(venv)
    c(back == dists_before, "after rollback the distributions are exactly the ones before apply"
      + ("" if back == dists_before else
         f" (before {sorted(dists_before.items())}, after {sorted(back.items())})"))
    c(all(back.get(n) == v for n, v in cu12_before.items()),
      f"the cu12 dists are back: {', '.join(f'{n} {back.get(n)}' for n in cu12_before)}")
    changes, n = tree_changes(tree_before, tree(venv))
    c(n == 0, f"the venv tree equals the one before apply (paths, sizes, mtimes): {n} change(s)",
      "\n".join("      " + l for l in changes))
    c.done()


def scenario_healthy_verify(ctx, fx):
    base = ctx.work / "healthy"
    shutil.rmtree(base, ignore_errors=True)
    venv = base / "venv"
    cuda = ctx.cuda_block()
    packages = ctx.healthy + (HEALTHY_CUDA13 if cuda else [])
    say(f"    cuda target: {cuda if cuda else 'none (no nvcc): the mixed-CUDA scan is not judged'}")
    ctx.uv_venv(venv, packages + ["six"])
    have = installed(venv)
    dists = [norm(r.split("==")[0]) for r in packages]
    absent = [d for d in dists if d not in have]
    if absent:
        raise SetupError(f"not installed: {absent}")
    expect = {d: "==" + have[d] for d in dists}
    manifest = ctx.manifest(ctx.work / "manifests" / "healthy.yaml", venv,
                            [{"name": "six", "packages": ["six"], "expect": expect}], cuda=cuda)
    c = Checks()
    before = tree(base)
    r = ctx.stackup_run("verify", manifest, json_out=True)
    c(r.doc is not None, "verify --json prints one JSON document", tail(r.stdout + r.stderr))
    checks = (r.doc or {}).get("checks", [])
    by_dist = {}
    for j in checks:
        by_dist.setdefault(norm(j.get("dist") or ""), []).append(j)
    say("    stackup's judgement per package:" if r.doc else "    no JSON document: no judgement to show")
    for d in (dists if r.doc else []):
        js = by_dist.get(d, [])
        ok = bool(js) and all(j.get("ok") for j in js)
        parts = []
        imported = None
        for j in js:
            if j.get("field") == "installed":
                continue
            if j.get("field") == "import":
                m = re.match(r"import (\S+) succeeds", j.get("expected", ""))
                imported = m.group(1) if m else None
                parts.append(f"{j.get('expected') if not m else 'import ' + imported}: {j.get('found')}")
            else:
                parts.append(f"{j.get('field')} {j.get('expected')} (found {j.get('found')})"
                             + ("" if j.get("ok") else " <- FAILED"))
        note = ""
        if imported and imported != REAL_MODULE.get(d):
            note = f"   [note: imported {imported}; the package's real module is {REAL_MODULE.get(d)}]"
        say(f"      {'PASS' if ok else 'FAIL'} {d} {have[d]}: {'; '.join(parts) or 'no judgement'}{note}")
    other = [j for j in checks if not j.get("dist")]
    for j in other:
        say(f"      {'PASS' if j.get('ok') else 'FAIL'} (env) {j.get('field')}: expected {j.get('expected')},"
            f" found {j.get('found')}")
    for e in (r.doc or {}).get("errors", []):
        say(f"      error: {e.get('message')}")
    c(r.returncode == 0, f"verify exits 0 on healthy packages (got {r.returncode})",
      None if r.doc else tail(r.stdout + r.stderr))
    c((r.doc or {}).get("ok") is (r.returncode == 0), "JSON ok agrees with the exit code")
    c(tree_changes(before, tree(base))[1] == 0, "verify touched nothing",
      "\n".join("      " + l for l in tree_changes(before, tree(base))[0]))
    c.done()


def scenario_deps_false(ctx, fx):
    base = ctx.work / "deps-false"
    shutil.rmtree(base, ignore_errors=True)
    venv = base / "venv"
    ctx.uv_venv(venv, [DEPS_BEFORE], no_deps=True)
    have = installed(venv)
    if DEPS_MISSING in have:
        raise SetupError(f"{DEPS_MISSING} is installed already")
    manifest = ctx.manifest(ctx.work / "manifests" / "deps-false.yaml", venv,
                            [{"name": "bindings", "packages": [DEPS_STEP], "deps": False,
                              "expect": {"cuda-bindings": "==" + DEPS_STEP.split("==")[1]}}])
    c = Checks()
    before = tree(venv)
    r = ctx.stackup_run("apply", manifest, json_out=True)
    out = r.stdout + r.stderr
    c(r.returncode == 1, f"apply exits 1 (got {r.returncode})", tail(out))
    messages = " ".join(e.get("message", "") for e in (r.doc or {}).get("errors", []))
    c(DEPS_MISSING in messages or DEPS_MISSING in r.stderr,
      f"the failure names the missing requirement {DEPS_MISSING}", tail(messages or out))
    for e in (r.doc or {}).get("errors", []):
        say(f"      error: {e.get('message')}")
    after = installed(venv)
    c(after == have, f"the venv's distributions are as before (cuda-bindings {after.get('cuda-bindings')},"
                     f" {DEPS_MISSING} {'absent' if DEPS_MISSING not in after else after[DEPS_MISSING]})")
    changes, n = tree_changes(before, tree(venv))
    c(n == 0, f"the venv tree equals the one before (paths, sizes, mtimes): {n} change(s)",
      "\n".join("      " + l for l in changes))
    c.done()


def scenario_numpy_pandas(ctx, fx):
    base = ctx.work / "numpy-pandas"
    shutil.rmtree(base, ignore_errors=True)
    venv = base / "venv"
    ctx.pip_venv(venv, MULTI_BEFORE)
    have = installed(venv)
    if have.get("pandas") != "2.1.4" or have.get("numpy") != "1.26.4":
        raise SetupError(f"pip did not install {MULTI_BEFORE}: {have}")
    numpy_step = {"name": "numpy", "packages": [MULTI_NUMPY], "deps": False,
                  "expect": {"numpy": "==" + MULTI_NUMPY.split("==")[1]}}
    pandas_step = {"name": "pandas", "packages": [MULTI_PANDAS], "deps": False,
                   "expect": {"pandas": "==" + MULTI_PANDAS.split("==")[1]}}
    c = Checks()

    before = tree(venv)
    alone = ctx.manifest(ctx.work / "manifests" / "numpy-alone.yaml", venv, [numpy_step])
    r = ctx.stackup_run("apply", alone, json_out=True)
    c(r.returncode == 1, f"numpy alone: apply exits 1 (got {r.returncode})", tail(r.stdout + r.stderr))
    for e in (r.doc or {}).get("errors", []):
        say(f"      error: {e.get('message')}")
    messages = " ".join(e.get("message", "") for e in (r.doc or {}).get("errors", []))
    c("pandas 2.1.4 requires numpy<2" in messages, "the failure names pandas 2.1.4's numpy<2", tail(messages))
    changes, n = tree_changes(before, tree(venv))
    c(n == 0, f"numpy alone: the venv tree equals the one before: {n} change(s)",
      "\n".join("      " + l for l in changes))

    both = ctx.manifest(ctx.work / "manifests" / "numpy-pandas.yaml", venv, [numpy_step, pandas_step])
    p = ctx.stackup_run("plan", both)
    for line in (p.stdout + p.stderr).splitlines():
        if "between steps" in line or "broken for now" in line or "left broken" in line:
            say(f"      plan: {line.strip()}")
    c("step 'pandas' installs pandas" in p.stdout, "plan says step 'pandas' repairs the break", tail(p.stdout))
    r = ctx.stackup_run("apply", both, json_out=True)
    c(r.returncode == 0, f"numpy then pandas: apply exits 0 (got {r.returncode})", tail(r.stdout + r.stderr))
    for rep in (r.doc or {}).get("repaired_between_steps", []):
        say(f"      between steps: {rep.get('message')}")
    repaired = [(x.get("dist"), x.get("repaired_by")) for x in (r.doc or {}).get("repaired_between_steps", [])]
    c(("pandas", "pandas") in repaired, f"the JSON names the break step 2 repaired: {repaired}")
    after = installed(venv)
    c(after.get("numpy") == "2.2.6" and after.get("pandas") == "2.2.3" and after.get("scipy") == "1.13.1",
      f"numpy {after.get('numpy')}, pandas {after.get('pandas')}, scipy {after.get('scipy')} installed")
    p = run([venv / "bin/python", "-c", "import numpy, pandas, scipy.linalg; "
             "print(numpy.__version__, pandas.__version__, pandas.DataFrame({'a': [1, 2]}).a.sum())"])
    c(p.returncode == 0 and p.stdout.split()[:2] == ["2.2.6", "2.2.3"],
      f"numpy and pandas import and compute: {p.stdout.strip() or tail(p.stderr)}")
    c.done()


def grep_tree(root, needle):
    """Every file under `root` whose bytes contain `needle` (symlinks not followed)."""
    hits = []
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            try:
                if needle in path.read_bytes():
                    hits.append(str(path))
            except OSError:
                pass
    return hits


def scenario_console_script(ctx, fx):
    """Blue/green with a real console script: uv writes the clone's python into the script's
    shebang; after the switch the script must name the venv's python and run, its RECORD line
    must match it, and no file anywhere in the venv may name the clone."""
    base = ctx.work / "console-script"
    shutil.rmtree(base, ignore_errors=True)
    venv = base / "venv"
    ctx.pip_venv(venv, [SCRIPT_BEFORE])
    manifest = ctx.manifest(ctx.work / "manifests" / "console-script.yaml", venv,
                            [{"name": "tqdm", "packages": [SCRIPT_AFTER],
                              "expect": {"tqdm": "==" + SCRIPT_AFTER.split("==")[1]}}])
    c = Checks()
    root_before = os.stat(venv).st_ino
    r = ctx.stackup_run("apply", manifest, json_out=True)
    doc = r.doc or {}
    if not c(r.returncode == 0, f"apply exits 0 (got {r.returncode})", tail(r.stdout + r.stderr)):
        c.done()
    c(doc.get("mode") == "blue-green" and doc.get("switched"), f"a blue/green switch (mode {doc.get('mode')}, "
                                                                 f"switched {doc.get('switched')})")
    c(os.stat(venv).st_ino != root_before, "the venv's root directory is another inode (switched, not changed in place)")
    clone = doc.get("clone") or ""
    hits = grep_tree(venv, clone.encode()) if clone else ["(no clone in the JSON)"]
    c(not hits, f"no file in the venv names the clone's path ({len(hits)} do)", "\n".join("      " + h for h in hits[:10]))
    say(f"    relocated: {', '.join(doc.get('relocated') or []) or 'nothing'}")
    script = venv / "bin" / "tqdm"
    head = "\n".join(script.read_text().splitlines()[:3]) if script.exists() else ""
    c(f"{venv}/bin/python" in head, f"bin/tqdm names the venv's python: {head.splitlines()[0] if head else '(missing)'}")
    p = run([script, "--version"])
    c(p.returncode == 0 and SCRIPT_AFTER.split("==")[1] in p.stdout + p.stderr,
      f"bin/tqdm --version runs and says {SCRIPT_AFTER.split('==')[1]} (got {(p.stdout + p.stderr).strip()!r})")
    code = ("import importlib.metadata as md, hashlib, base64, pathlib, sys\n"
            "d = md.distribution('tqdm')\n"
            "for f in d.files:\n"
            "    if f.name == 'tqdm' and f.hash:\n"
            "        data = pathlib.Path(d.locate_file(f)).read_bytes()\n"
            "        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()\n"
            "        print('match' if h == f.hash.value and len(data) == f.size else 'stale')\n")
    p = run([venv / "bin/python", "-c", code])
    c(p.stdout.strip() == "match", f"the script's RECORD line matches it ({p.stdout.strip() or p.stderr.strip()})")
    r = ctx.stackup_run("rollback", manifest)
    c(r.returncode == 0 and os.stat(venv).st_ino == root_before,
      f"rollback exits 0 and switches the old tree back (got {r.returncode})", tail(r.stdout + r.stderr))
    p = run([script, "--version"])
    c(p.returncode == 0 and SCRIPT_BEFORE.split("==")[1] in p.stdout + p.stderr,
      f"bin/tqdm --version after the rollback says {SCRIPT_BEFORE.split('==')[1]} (got {(p.stdout + p.stderr).strip()!r})")
    c.done()


RUNNERS = {
    "dry-run": scenario_dry_run,
    "cu12-leftover": scenario_cu12_leftover,
    "cu12-to-cu13": scenario_cu12_to_cu13,
    "healthy-verify": scenario_healthy_verify,
    "deps-false": scenario_deps_false,
    "numpy-pandas": scenario_numpy_pandas,
    "console-script": scenario_console_script,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stackup", required=True, help="the stackup binary")
    ap.add_argument("--uv", required=True, help="the uv binary (stackup's installer, also builds the venvs)")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the venvs (default: this one)")
    ap.add_argument("--work", default="/tmp/rw/run", help="scratch dir: venvs (rebuilt each run) and manifests (default /tmp/rw/run)")
    ap.add_argument("--cache", default="/tmp/rw/cache", help="pip and uv caches, kept between runs")
    ap.add_argument("--only", action="append", choices=SCENARIOS, help="run only this scenario (repeatable)")
    ap.add_argument("--healthy-latest", action="store_true", help="healthy-verify: latest versions, not the pins")
    ap.add_argument("-v", "--verbose", action="store_true", help="print stackup's full output and the manifests")
    args = ap.parse_args()

    index = os.environ.get("STACKUP_REAL_INDEX")
    if not index:
        print("run.py: STACKUP_REAL_INDEX is not set: set it to the simple-API root of a real package index "
              "(the one pip uses, or your mirror of it). Nothing was run.", file=sys.stderr)
        return 125
    for what in ("stackup", "uv"):
        if not os.access(getattr(args, what), os.X_OK):
            print(f"run.py: --{what} {getattr(args, what)} is not an executable file", file=sys.stderr)
            return 125

    ctx = Ctx(args, index)
    ctx.work.mkdir(parents=True, exist_ok=True)
    fx = Fixture(ctx)
    p = run([ctx.stackup, "--version"])
    say(f"stackup: {ctx.stackup} ({(p.stdout or p.stderr).strip().splitlines()[0] if (p.stdout or p.stderr) else '?'})")
    say(f"uv: {ctx.uv}; python: {ctx.python}; work: {ctx.work}; index from STACKUP_REAL_INDEX")

    results = []
    for name in [s for s in SCENARIOS if not args.only or s in args.only]:
        say(f"\n=== {name}")
        started = time.monotonic()
        try:
            RUNNERS[name](ctx, fx)
            status, why = "PASS", ""
        except Failed as e:
            status, why = "FAIL", str(e)
        except SetupError as e:
            status, why = "ERROR", f"setup: {e}"
        except Exception as e:  # a bug in this script: say so, go on
            status, why = "ERROR", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
        seconds = time.monotonic() - started
        say(f"{status} {name} ({seconds:.0f}s){': ' + why.splitlines()[0] if why else ''}")
        results.append((name, status, why))

    say("\n=== summary")
    for name, status, why in results:
        say(f"  {status:5} {name}{'  - ' + why.splitlines()[0] if why else ''}")
    counts = {s: sum(1 for _, st, _ in results if st == s) for s in ("PASS", "FAIL", "ERROR")}
    say(f"  {counts['PASS']} passed, {counts['FAIL']} failed, {counts['ERROR']} could not run")
    return 0 if counts["PASS"] == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())

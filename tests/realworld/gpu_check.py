#!/usr/bin/env python3
"""stackup on a real GPU machine, against the GPU venv already there. Run by hand on such a
machine (never by CI: CI has no GPU); no network is needed.

    python3 tests/realworld/gpu_check.py --stackup build/stackup --uv .tools/venv/bin/uv \
        [--venv DIR] [--out DIR] [--state-dir DIR]

--venv defaults to the venv of the `python3` on PATH (sys.prefix). The checks, each recorded with
its exit code, time and output in OUT/gpu_check.json (and printed as PASS/FAIL lines):
  driver-raw        what `nvidia-smi --query-gpu=driver_version --format=csv,noheader` and
                    /proc/driver/nvidia/version say (saved as fixtures for the parsers)
  init              `stackup init` writes a manifest of the venv as it is
  verify-baseline   `stackup verify` of that manifest passes: no false alarm on a healthy GPU venv
  plan-driver       `plan` of a manifest with `cuda: {toolkit, driver: ">=<major>", require_driver}`
                    passes, and names the driver nvidia-smi reports
  plan-driver-high  the same with driver ">=9999" fails preflight (exit 3) naming the driver
  apply             a blue/green apply of a one-step manifest (a tiny local wheel, served from
                    127.0.0.1) whose expectations and checks import torch on the GPU: torch's
                    `cuda` and a tensor summed on the device. Then the package imports, torch
                    still sees the GPU, and every file the apply wrote is checked for the clone's path
  rollback          `rollback` brings back exactly the tree before the apply (a metadata digest:
                    path, type, mode, size, mtime, link target; the venv holds GBs)
Exit 0 when every check passed, 1 otherwise.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "support"))
import index_server  # noqa: E402
import wheels  # noqa: E402

CANARY = "stackup-gpu-canary"
GPU_CHECK = ("import torch; assert torch.cuda.is_available(), 'no CUDA device'; "
             "x = torch.ones(1 << 20, device='cuda'); assert int(x.sum().item()) == 1 << 20; "
             "print(torch.cuda.get_device_name(0), torch.version.cuda)")


def meta_digest(root):
    """Digest of every entry's path, type, mode, size, mtime and link target (no contents)."""
    h = hashlib.sha256()
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            target = os.readlink(path) if os.path.islink(path) else ""
            h.update(f"{os.path.relpath(path, root)}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\0{target}\n"
                     .encode("utf-8", "surrogateescape"))
            count += 1
    return h.hexdigest(), count


class Checks:
    def __init__(self, out):
        self.out = out
        self.results = []

    def run(self, name, argv, expect_rc=0, env=None, must_say=None, timeout=240):
        start = time.monotonic()
        try:
            p = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, errors="replace", env=env, timeout=timeout)
            rc, output = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, output = "timeout", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        elapsed = time.monotonic() - start
        ok = rc == expect_rc and (must_say is None or re.search(must_say, output) is not None)
        self.record(name, ok, rc=rc, seconds=round(elapsed, 2), argv=[str(a) for a in argv], output=output[-6000:])
        return ok, output

    def record(self, name, ok, **facts):
        self.results.append({"check": name, "ok": ok, **facts})
        print(f"{'PASS' if ok else 'FAIL'} {name} ({facts.get('seconds', '-')} s, rc {facts.get('rc', '-')})", flush=True)
        if not ok and "output" in facts:
            print("    " + facts["output"][-3000:].replace("\n", "\n    "), flush=True)

    def save(self):
        (self.out / "gpu_check.json").write_text(json.dumps(self.results, indent=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stackup", required=True)
    ap.add_argument("--uv", required=True)
    ap.add_argument("--venv", default=sys.prefix)
    ap.add_argument("--out", default=None)
    ap.add_argument("--state-dir", default=None, help="stackup's --state-dir (default: stackup's own)")
    args = ap.parse_args()
    venv = Path(args.venv).resolve()
    out = Path(args.out or tempfile.mkdtemp(prefix="gpu-check-"))
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gpu-check-work-"))
    # The state dir is stackup's default (.stackup/ beside the venv): on the venv's filesystem, so
    # that apply clones by hard links, as on a user's machine, not by copying gigabytes.
    stackup = [str(Path(args.stackup).resolve()), "--cache-dir", str(work / "cache")]
    if args.state_dir:
        stackup += ["--state-dir", args.state_dir]
    env = dict(os.environ, STACKUP_UV=str(Path(args.uv).resolve()))
    c = Checks(out)
    python = venv / "bin" / "python"

    # What the driver says, raw: fixtures for parse_nvidia_smi and parse_proc_driver_version.
    smi = shutil.which("nvidia-smi")
    ok, smi_out = c.run("driver-raw", [smi or "nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    (out / "nvidia-smi-driver_version.txt").write_text(smi_out)
    proc = Path("/proc/driver/nvidia/version")
    if proc.exists():
        (out / "proc-driver-nvidia-version.txt").write_text(proc.read_text())
    driver = smi_out.strip().splitlines()[0].strip() if ok and smi_out.strip() else ""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    nvcc_out = subprocess.run([nvcc, "--version"], stdout=subprocess.PIPE, text=True).stdout if os.path.exists(nvcc) else ""
    toolkit = (re.search(r"release (\d+\.\d+)", nvcc_out) or [None, ""])[1]
    cuda_home = str(Path(nvcc).resolve().parent.parent) if toolkit else ""
    c.record("facts", True, driver=driver, toolkit=toolkit, cuda_home=cuda_home, venv=str(venv),
             python=subprocess.run([python, "-V"], stdout=subprocess.PIPE, text=True).stdout.strip())

    # init, then verify the manifest init wrote: a healthy GPU venv must pass.
    baseline = work / "baseline.yaml"
    c.run("init", [*stackup, "init", "--venv", venv, "--out", baseline], env=env)
    if baseline.exists():
        shutil.copy(baseline, out / "init-manifest.yaml")
    c.run("verify-baseline", [*stackup, "verify", baseline], env=env)

    # A local index with one tiny wheel, and manifests whose preflight needs the real driver.
    root = work / "index"
    wheels.plain(str(root / "local" / CANARY), CANARY, "1.0")
    server = index_server.IndexServer(str(root)).start()
    try:
        major = driver.split(".")[0] if driver else "0"

        def manifest(path, driver_spec):
            doc = {
                "version": 1, "name": "gpu-check", "venv": str(venv),
                "indexes": {"local": server.url("local")},
                "steps": [{"name": "canary", "index": "local", "packages": [f"{CANARY}==1.0"], "deps": False,
                           "expect": {CANARY: {"version": "==1.0"},
                                      "torch": {"cuda": toolkit} if toolkit else {}}}],
                "checks": [{"name": "torch computes on the GPU", "python": GPU_CHECK}],
            }
            if toolkit:
                doc["cuda"] = {"toolkit": toolkit, "home": cuda_home, "driver": driver_spec, "require_driver": True}
            path.write_text(json.dumps(doc, indent=1))
            return path

        good = manifest(work / "gpu.json", f">={major}")
        high = manifest(work / "gpu-high.json", ">=9999")
        c.run("plan-driver", [*stackup, "plan", good, "--json"], env=env, must_say=re.escape(driver) if driver else None)
        c.run("plan-driver-high", [*stackup, "plan", high], env=env, expect_rc=3, must_say="(?i)driver")

        before, entries = meta_digest(venv)
        c.record("digest-before", True, entries=entries)
        ok, applied = c.run("apply", [*stackup, "apply", good, "--json"], env=env)
        clone = (re.search(r'"clone":\s*"([^"]+)"', applied) or [None, ""])[1]
        if ok:
            ok_import = subprocess.run([python, "-I", "-B", "-c", f"import {CANARY.replace('-', '_')}; {GPU_CHECK}"],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            c.record("after-apply-imports", ok_import.returncode == 0, rc=ok_import.returncode,
                     output=ok_import.stdout[-3000:])
            leftovers = subprocess.run(["grep", "-rIlF", "--", clone, str(venv / "bin")], stdout=subprocess.PIPE,
                                       text=True).stdout if clone else "no clone path in apply's JSON"
            c.record("no-clone-path-in-bin", leftovers.strip() == "", clone=clone, output=leftovers[-2000:])
            c.run("status", [*stackup, "status", "--venv", venv], env=env)
            c.run("verify-after", [*stackup, "verify", good], env=env)
            c.run("rollback", [*stackup, "rollback", "--venv", venv], env=env)
            after, entries_after = meta_digest(venv)
            c.record("rollback-exact", after == before, entries=entries_after, before=before, after=after)
    finally:
        server.stop()
        c.save()
    failed = [r["check"] for r in c.results if not r["ok"]]
    print(f"\n{len(c.results) - len(failed)} of {len(c.results)} checks passed" +
          (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Preflight failures touch nothing: exit 3, the reason names what was asked and what was
found, no snapshot is taken, no wheel is fetched and the venv's tree is unchanged. (Index
pages may be: the contract probes the interpreter, toolkit, driver and every page in parallel.)
- the manifest asks python 3.99 of a venv that has another;
- it asks CUDA toolkit 12.8 while the real nvcc at cuda.home reports another release;
- cuda.home has no nvcc at all.
"""
import os
import re
import subprocess

import harness
from harness import Skip, check, check_rc, check_says

NVCC_HOME = "/usr/local/cuda-13.0"


def nvcc_release():
    nvcc = os.path.join(NVCC_HOME, "bin", "nvcc")
    if not os.access(nvcc, os.X_OK):
        raise Skip(f"no CUDA toolkit at {NVCC_HOME} to check against")
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+\.\d+)", out)
    if not m:
        raise Skip(f"{nvcc} --version printed no release")
    return m.group(1)


def scenario(t):
    release = nvcc_release()
    asked = "12.8" if release != "12.8" else "13.0"
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    before = t.tree(venv)
    wheels_before = [p for p in server.requests("/") if p.endswith(".whl")]

    cases = [
        ("python", dict(python="3.99"), ["3.99", "python"]),
        ("toolkit", dict(cuda={"toolkit": asked, "home": NVCC_HOME}), [asked, release, "nvcc"]),
        ("no-nvcc", dict(cuda={"toolkit": asked, "home": str(t.tmp / "no-cuda")}), [asked, "nvcc"]),
    ]
    for name, extra, words in cases:
        doc = dict(t.upgrade_doc(server, venv), **extra)
        r = t.stackup("apply", t.manifest(doc, f"{name}.yaml"))
        check_rc(r, 3)
        check_says(r, *words)
        t.assert_tree(venv, before, f"after the {name} preflight failure")
        snapshots = list(t.state_dir.glob("*/snapshots/*"))
        check(not snapshots, f"{name}: a snapshot was taken: {snapshots}", r)
    wheels = [p for p in server.requests("/") if p.endswith(".whl")]
    check(wheels == wheels_before, f"a preflight failure fetched wheels: {wheels[len(wheels_before):]}")


harness.main(scenario)

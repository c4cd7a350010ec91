"""The driver check of preflight, with a stand-in nvidia-smi on PATH (this machine has no
GPU driver). The stand-in answers `--query-gpu=driver_version --format=csv,noheader` and
`--query-gpu=compute_cap --format=csv,noheader` as the real tool does (one line per GPU) and
fails on anything else.
- new enough: plan exits 0;
- too old: plan exits 3 naming the minimum and the version found;
- absent: a warning and exit 0; with require_driver: true, exit 3;
- asked while the index pages come (the contract: all probed in parallel): a stand-in that
  answers only once the index server has been asked for torch's page (it polls the server's
  request log, giving up after 30 s) still lets plan pass, and records that it saw the
  request: a preflight that asks the driver first and the index after would find none.
"""
import os
import re
import shutil
import subprocess

import harness
from harness import Skip, check, check_rc, check_says, child_env, find_stackup, run

NVCC_HOME = "/usr/local/cuda-13.0"
STAND_IN = """#!/bin/sh
# stand-in for nvidia-smi: 8 GPUs (compute capability 9.0) on driver {version}
if [ "$1" = "--query-gpu=driver_version" ] && [ "$2" = "--format=csv,noheader" ]; then
  for i in 1 2 3 4 5 6 7 8; do echo "{version}"; done
  exit 0
fi
if [ "$1" = "--query-gpu=compute_cap" ] && [ "$2" = "--format=csv,noheader" ]; then
  for i in 1 2 3 4 5 6 7 8; do echo "9.0"; done
  exit 0
fi
echo "stand-in nvidia-smi: unsupported arguments: $*" >&2
exit 2
"""


# The same answer, given only once the index server has seen a request for torch's page (it
# polls the request log); `seen` records whether it had, before the 30 s it waits at most.
PATIENT_STAND_IN = """#!/usr/bin/env python3
import json, sys, time, urllib.request
seen = False
deadline = time.monotonic() + 30
while not seen and time.monotonic() < deadline:
    with urllib.request.urlopen("{control}") as r:
        seen = any(p.endswith("/torch/") for p in json.load(r)["log"])
    time.sleep(0.02)
with open("{record}", "w") as f:
    f.write("seen" if seen else "not seen")
if sys.argv[1:] == ["--query-gpu=driver_version", "--format=csv,noheader"]:
    print("\\n".join(["{version}"] * 8))
    sys.exit(0)
sys.exit(2)
"""


def toolkit_release():
    nvcc = os.path.join(NVCC_HOME, "bin", "nvcc")
    if not os.access(nvcc, os.X_OK):
        raise Skip(f"no CUDA toolkit at {NVCC_HOME}")
    m = re.search(r"release (\d+\.\d+)", subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout)
    if not m:
        raise Skip("nvcc printed no release")
    return m.group(1)


def scenario(t):
    release = toolkit_release()
    if shutil.which("nvidia-smi") or os.path.exists("/proc/driver/nvidia/version"):
        raise Skip("this machine has a real NVIDIA driver; the stand-in cases need none")
    server = t.serve_stack()
    venv = t.cu128_venv(server)

    def plan(name, driver_version, require=False, stand_in=STAND_IN):
        doc = t.upgrade_doc(server, venv)
        doc["cuda"] = {"toolkit": release, "home": NVCC_HOME, "driver": ">=580.65.06", "require_driver": require}
        env = child_env({"STACKUP_UV": t.uv_path})
        if driver_version:
            bin_dir = t.tmp / f"bin-{name}"
            bin_dir.mkdir()
            smi = bin_dir / "nvidia-smi"
            smi.write_text(stand_in.replace("{version}", driver_version))
            smi.chmod(0o755)
            env["PATH"] = f"{bin_dir}:{env['PATH']}"
        manifest = t.manifest(doc, f"{name}.yaml")
        return run([find_stackup(), "plan", manifest, "--state-dir", t.state_dir], env=env)

    check_rc(plan("new", "580.95.05"), 0)
    r = plan("old", "570.124.06")
    check_rc(r, 3)
    check_says(r, ">=580.65.6", "570.124.06", "nvidia-smi")  # the minimum, PEP 440-normalized
    r = plan("absent", None)
    check_rc(r, 0)
    check_says(r, "no NVIDIA driver seen", "warn")
    r = plan("required", None, require=True)
    check_rc(r, 3)
    check_says(r, "required", "none was seen")

    record = t.tmp / "patient-saw-torch"
    patient = PATIENT_STAND_IN.replace("{control}", server.url() + "_control").replace("{record}", str(record))
    r = plan("patient", "580.95.05", stand_in=patient)
    check_rc(r, 0)
    check(record.read_text() == "seen", "the driver was asked before the index pages were: preflight is not parallel", r)


harness.main(scenario)

"""Binary truth (README, "What the binaries say"): kernel packages without any CUDA label,
built here with the machine's nvcc and gcc stubs, installed by the real uv.

- fastkern 1.0 links libcudart.so.12 / libcublas.so.12 (a CUDA 12 build whose name and version
  say nothing): `verify` against a CUDA 13 target exits 1 naming the file and the library; it
  passed before binaries were read. allow_mixed lets it pass, named.
- The same venv upgraded by `remove: ["nvidia-*-cu12"]`: the step fails because fastkern's
  libcudart.so.12 is gone, naming the removal, and the live venv is as before; with a later step
  that installs fastkern 2.0 (a CUDA 13 build) the apply passes and fastkern 2.0 imports.
- cuda.arch, each compatibility rule on kernels nvcc built (sm_90, sm_90a, sm_100f, sm_120a,
  compute_90): plain SASS runs on the same major at a minor >= its own, `a` only on exactly its
  GPU, `f` on its major's later minors, PTX on any later GPU; a dist none of whose binaries runs
  fails, one where only some do is a warning. Without cuda.arch the GPUs come from nvidia-smi
  (a stand-in on PATH), and without either the kernels are not judged, and verify says so.
- `stackup inspect --arch 10.0 --json` lists each dist's CUDA build, kernels and the GPUs it has
  none for; the healthy CUDA 13 venv verifies.
Without nvcc the test exits 125 (a skip), never passes.
"""
import json
import os

import cuda_fixtures as cf
import harness
from harness import check, check_rc, check_says, child_env, find_stackup, run
from wheels import plain

NVCC_HOME = "/usr/local/cuda-13.0"
FULL = ["sm_90", "sm_90a", "sm_100f", "sm_120a", "compute_90"]
STAND_IN = """#!/bin/sh
# stand-in for nvidia-smi: the GPUs of a GB10 box (12.1)
if [ "$1" = "--query-gpu=compute_cap" ] && [ "$2" = "--format=csv,noheader" ]; then
  echo "12.1"
  exit 0
fi
if [ "$1" = "--query-gpu=driver_version" ] && [ "$2" = "--format=csv,noheader" ]; then
  echo "580.95.05"
  exit 0
fi
echo "stand-in nvidia-smi: unsupported arguments: $*" >&2
exit 2
"""


def build_indexes(root):
    def at(project):
        return str(root / "pypi" / project)

    cf.nvidia_wheel(at("nvidia-cuda-runtime-cu12"), "nvidia-cuda-runtime-cu12", "12.8.90", "cuda_runtime",
                    ["libcudart.so.12"])
    cf.nvidia_wheel(at("nvidia-cublas-cu12"), "nvidia-cublas-cu12", "12.8.4.1", "cublas",
                    ["libcublas.so.12", "libcublasLt.so.12"])
    cf.nvidia_wheel(at("nvidia-cuda-runtime"), "nvidia-cuda-runtime", "13.0.96", "cu13", ["libcudart.so.13"])
    cf.nvidia_wheel(at("nvidia-cublas"), "nvidia-cublas", "13.0.0.19", "cu13", ["libcublas.so.13", "libcublasLt.so.13"])
    cu12 = cf.extension(needed=["libcudart.so.12", "libcublas.so.12"], gencode=["sm_80", "sm_90a"], compress=True)
    cu13 = cf.extension(needed=["libcudart.so.13", "libcublas.so.13"], gencode=FULL, compress=True)
    cf.kernel_wheel(at("fastkern"), "fastkern", "1.0", {"ops.abi3.so": cu12})
    cf.kernel_wheel(at("fastkern"), "fastkern", "2.0", {"ops.abi3.so": cu13})
    cf.kernel_wheel(at("onlya"), "onlya", "1.0",
                    {"ops.abi3.so": cf.extension(needed=["libcudart.so.13"], gencode=["sm_90a", "sm_120a"])})
    cf.kernel_wheel(at("splitkern"), "splitkern", "1.0",
                    {"hopper.abi3.so": cf.extension(needed=["libcudart.so.13"], gencode=["sm_90"]),
                     "blackwell.abi3.so": cf.extension(needed=["libcudart.so.13"], gencode=["sm_100f"], compress=True)})
    plain(at("filelock"), "filelock", "3.20.0")
    return root


def doc(server, venv, steps=(), **extra):
    cuda = {"toolkit": "13.0", "home": NVCC_HOME, **extra.pop("cuda", {})}
    steps = list(steps) or [{"name": "look", "expect": {"filelock": {}}}]
    return {"version": 1, "name": "binaries", "venv": str(venv), "indexes": {"pypi": server.url("pypi")},
            "default_index": "pypi", "cuda": cuda, "steps": [{"index": "pypi", **s} for s in steps], **extra}


def scenario(t):
    if not cf.find_nvcc():
        raise harness.Skip("nvcc not found (the CUDA toolkit builds the fixture kernels)")
    if not os.access(os.path.join(NVCC_HOME, "bin", "nvcc"), os.X_OK):
        raise harness.Skip(f"no CUDA toolkit at {NVCC_HOME} (cuda.toolkit is checked against it)")
    server = t.serve(build_indexes(t.tmp / "indexes"))
    pypi = server.url("pypi")

    # --- an unlabelled CUDA 12 build in a CUDA 13 venv -------------------------------------
    old = t.make_venv("old")
    t.uv_install(old, "nvidia-cuda-runtime-cu12", "nvidia-cublas-cu12", "nvidia-cuda-runtime", "nvidia-cublas",
                 "fastkern==1.0", "filelock", default_index=pypi)
    before = t.tree(old)
    r = t.stackup("verify", t.manifest(doc(server, old), "old.yaml"), state=False)
    check_rc(r, 1)
    check_says(r, "fastkern", "CUDA 12", "fastkern/ops.abi3.so needs libcudart.so.12")
    allowed = doc(server, old, allow_mixed=["fastkern", "nvidia-cuda-runtime-cu12", "nvidia-cublas-cu12"])
    r = t.stackup("verify", t.manifest(allowed, "allowed.yaml"), state=False)
    check_rc(r, 0)
    check_says(r, "allow_mixed let pass", "fastkern 1.0")
    t.assert_tree(old, before, "verify changed the venv")

    # --- remove: takes the library a kernel needs ------------------------------------------
    to13 = {"name": "cuda13", "packages": ["nvidia-cuda-runtime==13.0.96"], "remove": ["nvidia-*-cu12"],
            "expect": {"nvidia-cuda-runtime": {"version": "==13.0.96"}}}
    r = t.stackup("apply", t.manifest(doc(server, old, [to13], allow_mixed=["fastkern"]), "remove.yaml"))
    check_rc(r, 1)
    check_says(r, "fastkern", "libcudart.so.12", "remove: nvidia-*-cu12", "nvidia-cuda-runtime-cu12 had it")
    t.assert_tree(old, before, "a failed blue/green apply changed the live venv")
    check(t.module(old, "fastkern").get("version") == "1.0", "the live fastkern changed", r)
    new_kernel = {"name": "kernel", "packages": ["fastkern==2.0"], "expect": {"fastkern": {"version": "==2.0"}}}
    r = t.stackup("apply", t.manifest(doc(server, old, [to13, new_kernel]), "repaired.yaml"))
    check_rc(r, 0)
    info = t.module(old, "fastkern")
    check(info.get("version") == "2.0", f"fastkern after the apply: {info}", r)
    dists = t.probe(old)["dists"]
    check("nvidia-cuda-runtime-cu12" not in dists, f"the removed wheel is back: {dists}", r)

    # --- cuda.arch, rule by rule --------------------------------------------------------------
    gpus = t.make_venv("gpus")
    t.uv_install(gpus, "nvidia-cuda-runtime", "nvidia-cublas", "fastkern==2.0", "onlya", "splitkern", "filelock",
                 default_index=pypi)
    gpus_before = t.tree(gpus)
    cases = [  # arch, exit, words it must say
        (["9.0"], 0, ["kernels judged for 9.0 (cuda.arch)"]),                     # sm_90, sm_90a: exactly 9.0
        # sm_100f runs; onlya (90a, 120a) has nothing; splitkern's sm_90-only module is a warning
        (["10.0"], 1, ["onlya", "no kernel for sm_100", "splitkern", "no kernel for sm_100 in 1 of 2", "hopper.abi3.so"]),
        (["12.1"], 1, ["onlya", "no kernel for sm_121", "SASS for 90a, 120a, no PTX"]),    # 120a is 12.0 only; PTX 90 JITs
        (["10.3"], 1, ["onlya", "no kernel for sm_103"]),                           # 100f runs on 10.3
        (["8.9"], 1, ["fastkern", "no kernel for sm_89"]),                          # compute_90 needs >= 9.0
        (["12.0"], 1, ["splitkern", "no kernel for sm_120"]),                       # sm_90 does not run on 12.0
    ]
    for arch, rc, words in cases:
        manifest = t.manifest(doc(server, gpus, cuda={"arch": arch}), f"arch-{arch[0]}.yaml")
        r = t.stackup("verify", manifest, state=False)
        check_rc(r, rc)
        check_says(r, *words)
    r = t.stackup("verify", t.manifest(doc(server, gpus, cuda={"arch": ["12.0"]},
                                           allow_mixed=[]), "fastkern-12.yaml"), state=False)
    check("fastkern" not in [line.split(":")[0].strip() for line in r.output.splitlines() if "no kernel" in line],
          "fastkern has sm_120a and must run on 12.0", r)

    # The GPUs nvidia-smi reports, when cuda.arch says none; none at all: not judged, and said.
    bin_dir = t.tmp / "smi"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text(STAND_IN)
    (bin_dir / "nvidia-smi").chmod(0o755)
    env = child_env({"STACKUP_UV": t.uv_path, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    plain_doc = t.manifest(doc(server, gpus), "plain.yaml")
    r = run([find_stackup(), "verify", plain_doc], env=env)
    check_rc(r, 1)
    check_says(r, "onlya", "no kernel for sm_121")
    r = t.stackup("verify", plain_doc, state=False)
    check_rc(r, 0)
    check_says(r, "kernels not judged", "nvidia-smi")
    t.assert_tree(gpus, gpus_before, "verify changed the venv")

    # --- inspect ---------------------------------------------------------------------------------
    r = t.stackup("inspect", "--arch", "10.0", "--json", venv=gpus, state=False)
    check_rc(r, 0)
    body = json.loads(r.stdout)
    found = {d["dist"]: d for d in body["dists"]}
    check(set(found) >= {"fastkern", "onlya", "splitkern", "nvidia-cuda-runtime"}, f"dists: {sorted(found)}", r)
    check(found["fastkern"]["kernels"] == ["sm_90", "sm_90a", "compute_90", "sm_100f", "sm_120a"] or
          sorted(found["fastkern"]["kernels"]) == sorted(["sm_90", "sm_90a", "compute_90", "sm_100f", "sm_120a"]),
          f"fastkern's kernels: {found['fastkern']}", r)
    check("libcudart.so.13" in (found["fastkern"]["cuda"] or ""), f"fastkern's CUDA: {found['fastkern']}", r)
    check(found["onlya"]["no_kernel_for"] == ["sm_100"], f"onlya: {found['onlya']}", r)
    check(found["fastkern"]["missing_libraries"] == [], f"fastkern: {found['fastkern']}", r)
    r = t.stackup("inspect", venv=gpus, state=False)
    check_rc(r, 0)
    check_says(r, "fastkern 2.0", "SASS for", "PTX for 90")


harness.main(scenario)

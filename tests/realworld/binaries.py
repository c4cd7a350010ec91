#!/usr/bin/env python3
"""Binary truth against real kernel wheels and NVIDIA's own tool, run by hand (never by CI):

    export STACKUP_REAL_INDEX=<simple-API root of the index pip uses, or your mirror of it>
    python3 tests/realworld/binaries.py --stackup build/stackup --uv .tools/venv/bin/uv

Installs (uv, --no-deps) into a venv the real sgl-kernel 0.3.21 (a CUDA 12 build whose version
carries no label) and onnxruntime-gpu 1.31.1 (a CUDA 13 build, no label), about 650 MB the first
time (kept in --cache), and NVIDIA's cuobjdump (the nvidia-cuda-cuobjdump wheel) into a tool venv.
Then, for every shared object each dist's RECORD lists:

- kernels: `stackup inspect --json`'s `kernels` of the dist must be exactly the union of what
  `cuobjdump --list-elf` (SASS, sm_XY[a|f]) and `cuobjdump --list-ptx` (PTX, compute_XY) list;
- CUDA major: the CUDA sonames `readelf -d` (binutils) lists as NEEDED must give the major that
  stackup says the dist is built for;

and `stackup verify` of a manifest whose target is CUDA 13 with `cuda.arch: ["10.0"]` must fail
sgl-kernel as built for CUDA 12 (naming the soname) and onnxruntime-gpu for having no kernel for
sm_100. `--torch` adds the stack the product exists for: torch 2.9.1 with its 15 NVIDIA CUDA 12
wheels and triton (about 4 GB the first time), whose kernels must also equal cuobjdump's (torch and
nvidia-cufft-cu12), and whose `stackup verify` with `cuda.arch: ["8.0", "9.0", "10.0", "12.0"]` must
exit 0: no false alarm on a healthy real stack. Exit 0 when every check held, 1 otherwise, 125 when
it could not start.
"""
import argparse
import glob
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

KERNEL_WHEELS = {"sgl-kernel": "0.3.21", "onnxruntime-gpu": "1.31.1"}
CUOBJDUMP = "nvidia-cuda-cuobjdump"
# The CUDA sonames only one major ships (a subset of src/binary/cuda_libs.cpp, written out again
# here so that the oracle does not read stackup's own table).
MAJOR_OF = {"libcudart.so.12": 12, "libcudart.so.13": 13, "libcublas.so.12": 12, "libcublas.so.13": 13,
            "libcublasLt.so.12": 12, "libcublasLt.so.13": 13, "libnvrtc.so.12": 12, "libnvrtc.so.13": 13,
            "libnvJitLink.so.12": 12, "libnvJitLink.so.13": 13}

failures = []


def check(ok, what, detail=""):
    print(f"  {'ok' if ok else 'NOT OK'}  {what}" + (f"\n{detail}" if detail and not ok else ""), flush=True)
    if not ok:
        failures.append(what)


def run(argv, **kw):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kw)


def must(argv, **kw):
    r = run(argv, **kw)
    if r.returncode != 0:
        sys.exit(f"setup failed: {' '.join(map(str, argv))}\n{r.stdout}\n{r.stderr}")
    return r


def venv_with(uv, root, name, packages, index, cache, deps=False):
    venv = root / name
    if not (venv / "bin" / "python").exists():
        must([uv, "venv", "--python", sys.executable, venv])
    env = dict(os.environ, UV_CACHE_DIR=str(cache))
    must([uv, "pip", "install", "--python", venv / "bin" / "python", "--index-url", index,
          *([] if deps else ["--no-deps"]), "--only-binary", ":all:", *packages], env=env)
    return venv


def site_packages(venv):
    return pathlib.Path(glob.glob(str(venv / "lib" / "python3.*" / "site-packages"))[0])


def shared_objects(site, dist):
    """The ELF files the dist's RECORD lists (by the name pattern: .so, .so.N)."""
    info = [p for p in site.glob("*.dist-info") if p.name.lower().replace("_", "-").startswith(dist + "-")]
    out = []
    for line in (info[0] / "RECORD").read_text().splitlines():
        path = line.rsplit(",", 2)[0]
        if re.search(r"\.so(\.\d+)*$", path):
            out.append(site / path)
    return out


def cuobjdump_kernels(tool, path):
    """{'sm_90a', 'compute_90', ...} as NVIDIA's cuobjdump lists the file's fatbinary entries."""
    kernels = set()
    for flag, kind in (("--list-elf", "sm"), ("--list-ptx", "compute")):
        r = run([tool, flag, path])
        if r.returncode != 0 and "does not contain" not in (r.stdout + r.stderr):
            check(False, f"cuobjdump {flag} {path.name}", r.stdout + r.stderr)
        for m in re.finditer(r"\.(sm_\d+[af]?)\.(?:cubin|ptx)", r.stdout):
            kernels.add(m.group(1) if kind == "sm" else m.group(1).replace("sm_", "compute_"))
    return kernels


def readelf_majors(path):
    r = run(["readelf", "-d", path])
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)
    return {MAJOR_OF[n] for n in needed if n in MAJOR_OF}, needed


def oracle(stackup, venv, tool, dists, arch=()):
    """Compares stackup inspect's kernels and CUDA major of each of `dists` with cuobjdump and readelf."""
    argv = [stackup, "inspect", "--venv", venv, "--json"]
    for a in arch:
        argv += ["--arch", a]
    r = must(argv)
    said_all = {d["dist"]: d for d in json.loads(r.stdout)["dists"]}
    site = site_packages(venv)
    for dist in dists:
        print(f"{dist}:")
        said = said_all.get(dist)
        check(said is not None, f"stackup inspect lists {dist}", r.stdout)
        if said is None:
            continue
        files = shared_objects(site, dist)
        kernels, majors = set(), set()
        for path in files:
            kernels |= cuobjdump_kernels(tool, path)
            m, _ = readelf_majors(path)
            majors |= m
        print(f"    {len(files)} shared object(s); cuobjdump: {', '.join(sorted(kernels)) or 'no kernels'}")
        print(f"    stackup:   {said['kernels_text']}; CUDA build: {said['cuda']}")
        check(set(said["kernels"]) == kernels, f"{dist}: kernels equal cuobjdump's",
              f"    stackup only: {sorted(set(said['kernels']) - kernels)}; cuobjdump only: {sorted(kernels - set(said['kernels']))}")
        check(said["files"] == len(files), f"{dist}: {len(files)} shared objects read", json.dumps(said))
        said_major = re.match(r"CUDA (\d+)", said["cuda"] or "")
        if majors:
            check(said_major is not None and majors == {int(said_major.group(1))},
                  f"{dist}: CUDA major {sorted(majors)} (readelf NEEDED) is the one stackup says", said["cuda"])
        if arch:
            check(not said["no_kernel_for"], f"{dist}: a kernel for each of {', '.join(arch)}", json.dumps(said))


def torch_stack(stackup, uv, root, index, cache, tool):
    """The real torch 2.9.1 CUDA 12.8 stack, installed with its dependencies: no false alarm."""
    arch = ["8.0", "9.0", "10.0", "12.0"]
    venv = venv_with(uv, root, "torch", ["torch==2.9.1"], index, cache, deps=True)
    oracle(stackup, venv, tool, ["torch", "nvidia-cufft-cu12", "nvidia-cublas-cu12"], arch)
    manifest = root / "torch.yaml"
    manifest.write_text(f"""version: 1
name: torch-realworld
venv: {venv}
cuda:
  toolkit: "12.8"
  home: /usr/local/cuda
  arch: [{', '.join(f'"{a}"' for a in arch)}]
indexes:
  real: {index}
steps:
  - name: torch
    index: real
    packages: ["torch==2.9.1"]
    expect:
      torch: {{version: "==2.9.1", cuda: "12.8"}}
""")
    r = run([stackup, "verify", manifest])
    text = r.stdout + r.stderr
    print("stackup verify of the real torch 2.9.1 stack (cuda.arch 8.0, 9.0, 10.0, 12.0):")
    print("\n".join("    " + line.strip() for line in text.splitlines() if "binaries:" in line or "FAILED" in line))
    check(r.returncode == 0, f"verify exits 0 on the healthy torch stack (got {r.returncode})", text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stackup", required=True)
    ap.add_argument("--uv", required=True)
    ap.add_argument("--work", default="/tmp/rw/binaries")
    ap.add_argument("--cache", default="/tmp/rw/cache/uv")
    ap.add_argument("--torch", action="store_true", help="also the real torch 2.9.1 stack (about 4 GB)")
    args = ap.parse_args()
    index = os.environ.get("STACKUP_REAL_INDEX")
    if not index:
        print("STACKUP_REAL_INDEX is not set: nothing run (see tests/realworld/README.md)")
        return 125
    if shutil.which("readelf") is None:
        print("readelf (binutils) is not on PATH")
        return 125
    stackup, uv = pathlib.Path(args.stackup).resolve(), pathlib.Path(args.uv).resolve()
    root = pathlib.Path(args.work)
    root.mkdir(parents=True, exist_ok=True)
    venv = venv_with(uv, root, "kernels", [f"{n}=={v}" for n, v in KERNEL_WHEELS.items()], index, args.cache)
    tools = venv_with(uv, root, "tools", [CUOBJDUMP], index, args.cache)
    tool = next(iter(site_packages(tools).glob("nvidia/**/bin/cuobjdump")), None)
    if tool is None:
        print("no cuobjdump in the nvidia-cuda-cuobjdump wheel")
        return 125
    oracle(stackup, venv, tool, list(KERNEL_WHEELS))

    manifest = root / "cuda13.yaml"
    manifest.write_text(f"""version: 1
name: binaries-realworld
venv: {venv}
cuda:
  toolkit: "13.0"
  arch: ["10.0"]
indexes:
  real: {index}
steps:
  - name: kernels
    index: real
    deps: false
    packages: [{', '.join(f'"{n}=={v}"' for n, v in KERNEL_WHEELS.items())}]
""")
    r = run([stackup, "verify", manifest])
    text = r.stdout + r.stderr
    print("stackup verify (target CUDA 13, cuda.arch 10.0):")
    shown = [line for line in text.splitlines() if re.search(r"mixed-cuda|kernels:|no kernel|binaries:", line)]
    missing = [line for line in text.splitlines() if "found nowhere" in line]
    print("\n".join("    " + line.strip() for line in shown))
    print(f"    ... and {len(missing)} CUDA libraries found nowhere (installed --no-deps: they are not there)")
    check(r.returncode == 1, f"verify exits 1 (got {r.returncode})", text)
    check(re.search(r"sgl-kernel: mixed-cuda: expected CUDA 13, found 0\.3\.21 \(CUDA 12: \S+ needs libcudart\.so\.12\)",
                    text) is not None,
          "verify: sgl-kernel built for CUDA 12, with the soname", text)
    check(re.search(r"onnxruntime-gpu: kernels: expected a kernel for 10\.0 \(cuda\.arch\), found no kernel for sm_100",
                    text) is not None,
          "verify: onnxruntime-gpu has no kernel for sm_100", text)
    if args.torch:
        torch_stack(stackup, uv, root, index, args.cache, tool)
    print(f"{'PASS' if not failures else 'FAIL'}: {len(failures)} check(s) failed")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())

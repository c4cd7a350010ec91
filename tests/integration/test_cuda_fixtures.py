"""The CUDA fixtures are what they say (no stackup needed): a kernel wheel like sgl-kernel, an NVIDIA
wheel and wheels.nvidia_like, installed by the real uv into a real venv, hold real shared objects:
- readelf -d: each extension's DT_NEEDED are the CUDA libraries asked (plus the C/C++ runtime),
  a kernel built with no `needed` has no libcudart, a stub's SONAME is its file name, DT_RPATH and
  DT_RUNPATH land where asked; `import kernel_like` works without any of those libraries.
- the .nv_fatbin holds exactly the SASS and PTX asked, compressed only when asked: read from the
  entries' headers (fatbin_entries) and by cuobjdump too (without it: the rest runs, then exit 125).
"""
import os
import re
import shutil

import cuda_fixtures as cf
import harness
from harness import Skip, check, run

NVCC = cf.require_nvcc()   # here: harness.main takes an exit inside the scenario for a failure
GENCODE = ["sm_90", "sm_90a", "sm_100f", "sm_120a", "compute_90"]
CUDA_12 = ["libcudart.so.12", "libcublas.so.12"]
RUNTIME = {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "libstdc++.so.6"}   # what the compiler links
KERNEL_VERSION = "0.3.19"


def find_cuobjdump():
    found = shutil.which("cuobjdump")
    if found:
        return found
    fallback = os.path.join(cf.CUDA_BIN, "cuobjdump")
    return fallback if os.access(fallback, os.X_OK) else None


def dynamic(path):
    """readelf -d's entries of `path`: {"NEEDED": [...], "SONAME": [...], "RPATH": [...], ...}."""
    r = run(["readelf", "-d", path], echo=False)
    check(r.rc == 0, f"readelf -d {path} failed", r)
    out = {}
    for tag, value in re.findall(r"\((NEEDED|SONAME|RPATH|RUNPATH)\)\s+[^\[]*\[(.*)\]", r.stdout):
        out.setdefault(tag, []).append(value)
    print(f"readelf -d {os.path.basename(path)}: {out}", flush=True)
    return out


def check_needed(path, asked):
    needed = dynamic(path).get("NEEDED", [])
    check([n for n in needed if n not in RUNTIME] == asked,
          f"{path}: DT_NEEDED {needed}, asked {asked} (and the C/C++ runtime)")


def expected_entries(gencode, compression, ptx_compression):
    """fatbin_entries' answer for `gencode`: PTX first (as nvcc writes it), then SASS, in order."""
    ptx = [cf.FatbinEntry(a, ptx_compression) for a in gencode if a.startswith("compute_")]
    sass = [cf.FatbinEntry(a, compression) for a in gencode if a.startswith("sm_")]
    return ptx + sass


def cuobjdump_entries(cuobjdump, path):
    """[(kind, arch, compressed)] from cuobjdump's header dump (its --list-elf names drop the "f"
    of sm_100f); the --list-elf --list-ptx listing is printed beside it."""
    listing = run([cuobjdump, "--list-elf", "--list-ptx", path])
    check(listing.rc == 0, f"cuobjdump --list-elf --list-ptx {path} failed", listing)
    dump = run([cuobjdump, path], echo=False)
    check(dump.rc == 0, f"cuobjdump {path} failed", dump)
    out = []
    for kind, body in re.findall(r"Fatbin (elf|ptx) code:\n=+\n(.*?)(?=\n\n|\Z)", dump.stdout, re.S):
        arch = re.search(r"^arch = (\S+)$", body, re.M).group(1)
        out.append((kind, arch, bool(re.search(r"^compressed$", body, re.M))))
    print(f"cuobjdump {os.path.basename(path)}: {out}", flush=True)
    return out


def as_cuobjdump(entries):
    """fatbin_entries in cuobjdump's words: PTX for compute_90 is "ptx sm_90"."""
    return [("ptx" if e.arch.startswith("compute_") else "elf", re.sub(r"^compute_", "sm_", e.arch),
             e.compression is not None) for e in entries]


def build_index(root):
    """The kernel wheel, an NVIDIA wheel and a wheels.nvidia_like one; returns the modules built."""
    modules = {
        "common_ops.abi3.so": cf.extension(needed=CUDA_12, gencode=GENCODE, compress=True),
        "plain_ops.abi3.so": cf.extension(needed=CUDA_12, gencode=GENCODE),
        "no_deps.abi3.so": cf.extension(gencode=["sm_90"]),
        "torch_ops.abi3.so": cf.extension(needed=["libtorch.so", "libc10.so"],
                                          runpath="$ORIGIN/../torch/lib"),
    }
    wheel = cf.kernel_wheel(os.path.join(root, "pypi", "kernel-like"), "kernel-like", KERNEL_VERSION, modules)
    check(os.path.basename(wheel).endswith(f"-{cf.KERNEL_TAG}.whl"), f"the kernel wheel's name: {wheel}")
    cf.nvidia_wheel(os.path.join(root, "pypi", "nvidia-cuda-runtime-cu12"), "nvidia-cuda-runtime-cu12",
                    "12.8.90", "cuda_runtime", ["libcudart.so.12"])
    harness.wheels.nvidia_like(os.path.join(root, "pypi", "nvidia-cublas-cu12"), "nvidia-cublas-cu12",
                               "12.8.4.1", "cublas", "libcublas.so.12")
    return modules


def check_kernel_files(site, modules, cuobjdump):
    package = site / "kernel_like"
    for name, data in modules.items():
        check((package / name).read_bytes() == data, f"{name}: the installed file is not the one built")
    check_needed(package / "common_ops.abi3.so", CUDA_12)
    check_needed(package / "plain_ops.abi3.so", CUDA_12)
    check_needed(package / "no_deps.abi3.so", [])
    check_needed(package / "torch_ops.abi3.so", ["libtorch.so", "libc10.so"])
    check(dynamic(package / "torch_ops.abi3.so").get("RUNPATH") == ["$ORIGIN/../torch/lib"],
          "torch_ops: DT_RUNPATH")

    # nvcc compresses PTX by default (zstd) and SASS only with -compress-all.
    wanted = {"common_ops.abi3.so": expected_entries(GENCODE, "zstd", "zstd"),
              "plain_ops.abi3.so": expected_entries(GENCODE, None, "zstd"),
              "no_deps.abi3.so": expected_entries(["sm_90"], None, "zstd"),
              "torch_ops.abi3.so": []}
    for name, entries in wanted.items():
        got = cf.fatbin_entries((package / name).read_bytes())
        print(f"fatbin_entries {name}: {got}", flush=True)
        check(got == entries, f"{name}: the fatbinary holds {got}, asked {entries}")
    if cuobjdump is None:
        harness.skip_part("no cuobjdump on PATH or in /usr/local/cuda/bin; the fatbinaries were "
                          "checked by their entries' headers only")
        return
    for name, entries in wanted.items():
        if entries:
            got = cuobjdump_entries(cuobjdump, package / name)
            check(got == as_cuobjdump(entries), f"{name}: cuobjdump sees {got}, asked {entries}")


def check_nvidia_files(site):
    for lib_dir, library in (("cuda_runtime", "libcudart.so.12"), ("cublas", "libcublas.so.12")):
        path = site / "nvidia" / lib_dir / "lib" / library
        check(dynamic(path).get("SONAME") == [library], f"{path}: its SONAME is not {library}")


def check_stub_paths(t):
    for tag, kwargs in (("RPATH", {"rpath": "$ORIGIN/../lib:/opt/x"}), ("RUNPATH", {"runpath": "$ORIGIN"})):
        path = t.tmp / f"libstub-{tag}.so.1"
        path.write_bytes(cf.stub_library("libstub.so.1", needed=["libdep.so.2"], **kwargs))
        got = dynamic(path)
        check(got.get(tag) == list(kwargs.values()) and got.get("NEEDED", [])[:1] == ["libdep.so.2"]
              and got.get("SONAME") == ["libstub.so.1"] and len(got) == 3, f"{path}: {got}")


def scenario(t):
    if shutil.which("readelf") is None:
        raise Skip("no readelf on PATH (binutils)")
    root = str(t.tmp / "indexes")
    modules = build_index(root)
    server = t.serve(root)
    venv = t.tmp / "venv"
    r = t.uv("venv", "--python", "python3", venv)
    check(r.rc == 0, "uv venv failed", r)
    t.uv_install(venv, f"kernel-like=={KERNEL_VERSION}", "nvidia-cuda-runtime-cu12", "nvidia-cublas-cu12",
                 default_index=server.url("pypi"))
    state = t.probe(venv, "kernel_like")
    check(state["dists"].get("kernel-like") == KERNEL_VERSION, f"installed: {state['dists']}")
    check(state["modules"]["kernel_like"].get("version") == KERNEL_VERSION,
          f"import kernel_like: {state['modules']['kernel_like']}")
    site = next(venv.glob("lib/python3*/site-packages"))
    wheel_file = (site / f"kernel_like-{KERNEL_VERSION}.dist-info" / "WHEEL").read_text()
    check("Root-Is-Purelib: false" in wheel_file and f"Tag: {cf.KERNEL_TAG}" in wheel_file, wheel_file)

    check_kernel_files(site, modules, find_cuobjdump())
    check_nvidia_files(site)
    check_stub_paths(t)


harness.main(scenario, needs_stackup=False)

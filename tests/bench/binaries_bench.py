#!/usr/bin/env python3
"""The binary scan on a venv the size of a torch + CUDA 13 stack, run by hand (never by CI):

    python3 tests/bench/binaries_bench.py --stackup build/stackup [--files 70000] [--runs 5]

The venv's site-packages gets every real shared object of the CUDA toolkit on this machine
(/usr/local/cuda/lib64: cuBLAS, cuDNN, cuFFT, NCCL ... with their fatbinaries, hard-linked, so
nothing is copied) spread over NVIDIA-like dists, plus small .py files up to --files RECORD lines
in 40 dists. `stackup inspect --json` reports the scan's own time (`scan.seconds`); "cold" first
drops the files' pages from the page cache (posix_fadvise DONTNEED: no root needed), "warm" reads
them again. Medians of --runs, alternating cold and warm. Targets (issue 29): 2 s cold, 0.2 s warm.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

from benchlib import run

CUDA_LIB = pathlib.Path("/usr/local/cuda/lib64")


def make_venv(root, files):
    venv = root / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    site = next((venv / "lib").glob("python3.*")) / "site-packages"
    real = sorted(p for p in CUDA_LIB.iterdir() if p.is_file() and not p.is_symlink() and ".so" in p.name)
    listed = 0
    paths = []
    for i, lib in enumerate(real):  # one NVIDIA-like dist per library
        dist = f"nvidia_like_{i}"
        target = site / "nvidia" / f"lib{i}" / "lib" / lib.name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(lib, target)
        paths.append(target)
        info = site / f"{dist}-13.0.{i}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 13.0.{i}\n")
        (info / "RECORD").write_text(f"nvidia/lib{i}/lib/{lib.name},,\n{info.name}/RECORD,,\n")
        listed += 2
    per_dist = max(1, (files - listed) // 40)
    for d in range(40):
        dist = f"pure_like_{d}"
        pkg = site / dist
        pkg.mkdir()
        lines = []
        for f in range(per_dist):
            name = f"{dist}/m{f}.py"
            (site / name).write_text("x = 1\n")
            lines.append(f"{name},sha256=x,6")
        info = site / f"{dist}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        (info / "RECORD").write_text("\n".join(lines + [f"{info.name}/RECORD,,"]) + "\n")
        listed += per_dist + 1
    size = sum(p.stat().st_size for p in paths)
    return venv, paths, listed, size


def drop_pages(paths):
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def scan(stackup, venv):
    out = subprocess.run([stackup, "inspect", "--json", "--venv", venv], capture_output=True, text=True, check=True)
    body = json.loads(out.stdout)
    return body["scan"]["seconds"], body["scan"]["headers_read"], len(body["dists"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stackup", required=True)
    ap.add_argument("--files", type=int, default=70000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if not CUDA_LIB.is_dir():
        sys.exit(f"no {CUDA_LIB}: the bench reads the toolkit's real libraries")
    with tempfile.TemporaryDirectory(prefix="stackup-binaries-bench-") as tmp:
        venv, paths, listed, size = make_venv(pathlib.Path(tmp), args.files)
        print(f"venv: {listed} RECORD lines, {len(paths)} real CUDA shared objects, {size / 1e9:.2f} GB of them")
        cold, warm = [], []
        for _ in range(args.runs):
            drop_pages(paths)
            seconds, read, dists = scan(args.stackup, venv)
            cold.append(seconds)
            seconds, _, _ = scan(args.stackup, venv)
            warm.append(seconds)
        print(f"headers read per scan: {read}; dists with shared objects: {dists}")
        print(f"scan cold: median {statistics.median(cold):.3f} s ({', '.join(f'{c:.3f}' for c in cold)}); target 2 s")
        print(f"scan warm: median {statistics.median(warm):.3f} s ({', '.join(f'{w:.3f}' for w in warm)}); target 0.2 s")


if __name__ == "__main__":
    main()

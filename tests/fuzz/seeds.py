#!/usr/bin/env python3
"""Writes a seed corpus for each fuzz target, from the shared fixtures and the repo's own files.

    seeds.py OUT_DIR [--fixtures DIR]     ->  OUT_DIR/<target>/<n>

Every target gets the real inputs its parser meets: PEP 440 cases for version and specifier,
wheel names and tags for wheel, stored index pages for page_html and page_json, the repo's
manifests and saved plan, and hand-written journals, snapshot indexes and uv outputs in the
formats stackup writes and uv prints.
"""
import argparse
import hashlib
import json
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent

TARGETS = ["version", "specifier", "requirement", "wheel", "manifest", "page_html", "page_json",
           "uv_summary", "journal", "snapshot_index", "saved_plan", "url", "tool_output"]


def unescape(text):
    """The fixtures' escapes: \\\\ \\t \\n \\r and \\uXXXX."""
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in text else text


def rows(path):
    """Non-comment lines of a fixture file, split on tabs and unescaped."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        yield [unescape(cell) for cell in line.split("\t")]


def journal_samples():
    started = {"record": "started", "version": 1, "manifest": "/srv/stackup.yaml", "venv": "/srv/venv",
               "pid": 4242, "host": "gpu-07", "mode": "blue-green", "time": "2026-12-04T10:00:00Z"}
    lines = [started,
             {"record": "snapshot_taken", "id": "20261204T100001Z-1"},
             {"record": "step_running", "n": 1, "name": "torch"},
             {"record": "step_verified", "n": 1},
             {"record": "switching", "generation": "g-3", "clone": 1234567, "live": 7654321},
             {"record": "committed"}]
    whole = "".join(json.dumps(line) + "\n" for line in lines)
    torn = whole + '{"record": "rolling_back", "wh'
    rolled = "".join(json.dumps(line) + "\n" for line in lines[:3]) + json.dumps(
        {"record": "rolled_back", "why": "expectation torch failed"}) + "\n"
    return [whole, torn, rolled, json.dumps(started) + "\n"]


def snapshot_index_samples():
    header = "stackup snapshot index 2\n"
    body = ("d\t755\t0\t1733300000000000000\t0\t0\t-\t.\n"
            "d\t755\t0\t1733300000000000000\t12\t1733300000000000001\t-\tlib\n"
            "f\t644\t5\t1733300000000000000\t13\t1733300000000000002\t"
            + hashlib.sha256(b"hello").hexdigest() + "\tlib/a.py\n"
            "l\t777\t0\t1733300000000000000\t0\t0\t-\tbin/python\t/usr/bin/python3.12\n"
            "f\t755\t0\t1\t0\t0\t-\t\\6120620a\n")
    return [header, header + body, header + body.replace("\t-\t", "\t\t", 1)]


def uv_samples():
    return [
        "Using Python 3.12.3 environment at: /srv/venv\nResolved 3 packages in 12ms\n"
        "Prepared 2 packages in 1.20s\nUninstalled 2 packages in 153ms\nInstalled 2 packages in 9ms\n"
        " - torch==2.10.0+cu128\n + torch==2.11.0+cu130\n - nvidia-cublas-cu12==12.8.4.1\n"
        " + nvidia-cublas==13.0.0.19\n",
        "Audited 4 packages in 3ms\n",
        "Checked 7 packages in 0.51ms\n",
        "Resolved 1 package in 1ms\n ~ sgl-kernel==0.3.19\nInstalled 1 package in 2ms\n",
        "error: No solution found when resolving dependencies:\n  Because torch==9.9 was not found...\n",
    ]


def url_samples(pages):
    """Manifest-style index URLs, with and without credentials, and hrefs from the stored pages."""
    urls = ["https://download.example/whl/nightly/cu130", "https://user:p%40ss@mirror.example:8443/simple/",
            "http://127.0.0.1:9/cu130/torch/", "file:///srv/wheels/", "https://tok@host/x?q=1#frag",
            "https://[::1]:8080/simple/", "HTTPS://Host.Example/Simple"]
    hrefs = []
    for page in pages[:6]:
        hrefs += re.findall(rb'href="([^"]{1,300})"', page)[:20]
    return [u.encode() + b"\n" + h for u in urls[:3] for h in hrefs[:40]] + [u.encode() for u in urls]


def tool_samples():
    return [
        "580.159.04\n", "580.65.06\n580.65.06\n",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \n"
        "GCC version:  gcc version 15.3.0 (GCC) \n",
        "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n"
        "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88\n"
        "Build cuda_13.0.r13.0/compiler.36424714_0\n",
        "glibc 2.36", "musl 1.2",
        "pid 4242 on gpu-07, running 'stackup apply m.yaml' since 2026-12-04T10:00:00Z",
    ]


def write(out, target, items):
    folder = out / target
    folder.mkdir(parents=True, exist_ok=True)
    for n, item in enumerate(items):
        data = item if isinstance(item, bytes) else item.encode("utf-8", "surrogateescape")
        (folder / f"seed-{n:05d}").write_bytes(data)
    return len(items)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--fixtures", type=pathlib.Path, default=REPO.parent / "shared" / "fixtures")
    args = parser.parse_args()
    pep440, wheels, indexes = (args.fixtures / d for d in ("pep440", "wheels", "indexes"))

    versions = [r[0] for f in ("versions_valid.txt", "versions_invalid.txt") for r in rows(pep440 / f)]
    versions += [r[0] for r in rows(pep440 / "cuda_stack_versions.tsv")]
    specifiers = [r[0] for f in ("specifiers_valid.txt", "specifiers_invalid.txt") for r in rows(pep440 / f)]
    specifier_cases = [f"{r[0]}\n{r[1]}" for r in rows(pep440 / "specifier_cases.tsv") if len(r) > 1]
    wheel_names = [r[0] for f in ("wheel_filenames.tsv", "sdist_filenames.tsv", "parse_tag.tsv",
                                  "realworld_wheels_cp312_glibc2.35_x86_64.tsv") for r in rows(wheels / f)]
    requirements = [
        "torch==2.11.0+cu130", "torch[opt]>=2.11.0.dev0,<3; python_version >= '3.10'",
        "nvidia-cublas-cu12==12.8.4.1; platform_system == 'Linux' and platform_machine == 'x86_64'",
        "sgl-kernel @ https://example.invalid/sgl_kernel-0.3.19-cp39-abi3-manylinux2014_x86_64.whl",
        "flashinfer-python (>=0.5)", "triton; extra == \"cuda\"", "name[a,b] ===1.0.0",
        "python_version < '3.13' or (os_name == 'nt' and implementation_name != 'pypy')",
        "numpy>=1.26; python_full_version >= '3.12.0'",
    ] + [f"torch{spec}" for spec in specifiers[:200]]
    manifests = sorted(p.read_text() for p in (REPO / "manifests").glob("*.yaml"))
    pages = {p.suffix: [] for p in indexes.iterdir()}
    for page in sorted(indexes.iterdir()):
        pages[page.suffix].append(page.read_bytes())
    plans = [p.read_text() for p in sorted((REPO / "plans").glob("*.json"))]

    counts = {
        "version": write(args.out, "version", versions),
        "specifier": write(args.out, "specifier", specifiers + specifier_cases),
        "requirement": write(args.out, "requirement", requirements),
        "wheel": write(args.out, "wheel", wheel_names),
        "manifest": write(args.out, "manifest", manifests),
        "page_html": write(args.out, "page_html", pages.get(".html", [])),
        "page_json": write(args.out, "page_json", pages.get(".json", [])),
        "uv_summary": write(args.out, "uv_summary", uv_samples()),
        "journal": write(args.out, "journal", journal_samples()),
        "snapshot_index": write(args.out, "snapshot_index", snapshot_index_samples()),
        "saved_plan": write(args.out, "saved_plan", plans),
        "url": write(args.out, "url", url_samples(pages.get(".html", []))),
        "tool_output": write(args.out, "tool_output", tool_samples()),
    }
    assert set(counts) == set(TARGETS)
    for target, count in counts.items():
        print(f"{target}: {count} seeds")


if __name__ == "__main__":
    main()

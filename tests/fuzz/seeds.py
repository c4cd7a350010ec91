#!/usr/bin/env python3
"""Writes a seed corpus for each fuzz target, from the shared fixtures and the repo's own files.

    seeds.py OUT_DIR [--fixtures DIR]     ->  OUT_DIR/<target>/<n>

Every target gets the real inputs its parser meets: PEP 440 cases for version and specifier,
wheel names and tags for wheel, stored index pages for page_html and page_json, the repo's
manifests and saved plan, hand-written journals, snapshot indexes and uv outputs in the
formats stackup writes and uv prints, and for elf: ELF files made here (with fatbin containers
laid out as nvcc lays them), small ones cc builds, and small or cut system and CUDA libraries.
"""
import argparse
import hashlib
import json
import pathlib
import re
import shutil
import struct
import subprocess
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent

TARGETS = ["version", "specifier", "requirement", "wheel", "manifest", "page_html", "page_json",
           "uv_summary", "journal", "snapshot_index", "saved_plan", "url", "tool_output", "elf"]


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


FATBIN_MAGIC = 0xBA55ED50
SEED_LIMIT = 200 * 1024


def fat_entry(kind=2, arch=90, flags=0x11, major=1, minor=8, payload=16, header_size=64):
    """One fatbin entry (src/binary/elf.hpp's layout) with a zero payload."""
    header = bytearray(header_size)
    struct.pack_into("<HHIQ", header, 0, kind, 0x0101, header_size, payload)
    struct.pack_into("<HHI", header, 0x18, minor, major, arch)
    struct.pack_into("<Q", header, 0x28, flags)
    return bytes(header) + bytes(payload)


def fat_container(entries):
    body = b"".join(entries)
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def make_elf(dynamic, sections, is64=True, big=False):
    """A shared object as a linker lays it out: header, program headers (PT_LOAD over the whole
    file, PT_DYNAMIC), .dynstr, .dynamic, the sections' data, .shstrtab, section headers."""
    e = ">" if big else "<"
    word = "Q" if is64 else "I"
    ehdr_size, phdr_size, shdr_size = (64, 56, 64) if is64 else (52, 32, 40)
    dyn_fmt = e + ("qQ" if is64 else "iI")
    base = 0x10000
    out = bytearray(ehdr_size)

    def append(data):
        out.extend(bytes(-len(out) % 8))
        at = len(out)
        out.extend(data)
        return at

    phoff = append(bytes(2 * phdr_size))
    dynstr = b"\0"
    dyns = []
    for tag, text in dynamic:
        dyns.append((tag, len(dynstr)))
        dynstr += text.encode() + b"\0"
    dynstr_at = append(dynstr)
    dyns += [(5, base + dynstr_at), (10, len(dynstr)), (0, 0)]  # DT_STRTAB, DT_STRSZ, DT_NULL
    dynamic_at = append(b"".join(struct.pack(dyn_fmt, tag, value) for tag, value in dyns))
    dynamic_size = len(dyns) * struct.calcsize(dyn_fmt)
    shstrtab = b"\0"
    shdrs = [(0, 0, 0, 0)]
    for name, data in sections:
        shdrs.append((len(shstrtab), 1, append(data), len(data)))  # SHT_PROGBITS
        shstrtab += name.encode() + b"\0"
    shdrs.append((len(shstrtab), 3, 0, 0))  # SHT_STRTAB
    shstrtab += b".shstrtab\0"
    shdrs[-1] = (shdrs[-1][0], 3, append(shstrtab), len(shstrtab))
    if is64:
        shdr = lambda n, t, o, s: struct.pack(e + "IIQQQQIIQQ", n, t, 0, 0, o, s, 0, 0, 1, 0)
        phdr = lambda t, o, v, s: struct.pack(e + "IIQQQQQQ", t, 4, o, v, v, s, s, 8)
    else:
        shdr = lambda n, t, o, s: struct.pack(e + "IIIIIIIIII", n, t, 0, 0, o, s, 0, 0, 1, 0)
        phdr = lambda t, o, v, s: struct.pack(e + "IIIIIIII", t, o, v, v, s, s, 4, 8)
    shoff = append(b"".join(shdr(*h) for h in shdrs))
    out[phoff:phoff + 2 * phdr_size] = phdr(1, 0, base, len(out)) + phdr(2, dynamic_at, base + dynamic_at,
                                                                             dynamic_size)
    ident = b"\x7fELF" + bytes([2 if is64 else 1, 2 if big else 1, 1]) + bytes(9)
    out[0:ehdr_size] = ident + struct.pack(e + "HHI" + word * 3 + "IHHHHHH", 3, 62, 1, 0, phoff, shoff, 0,
                                           ehdr_size, phdr_size, 2, shdr_size, len(shdrs), len(shdrs) - 1)
    return bytes(out)


def elf_section(path, wanted, limit):
    """The bytes of section `wanted` of a little-endian ELF64 file, read by offset (the file may be
    hundreds of MB), or None when absent or larger than `limit`."""
    try:
        with open(path, "rb") as f:
            header = f.read(64)
            if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
                return None
            shoff, = struct.unpack_from("<Q", header, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", header, 0x3a)
            f.seek(shoff)
            table = f.read(shentsize * shnum)
            sections = [struct.unpack_from("<IIQQQQ", table, i * shentsize) for i in range(shnum)]
            _, _, _, _, names_at, names_size = sections[shstrndx]
            f.seek(names_at)
            names = f.read(names_size)
            for name, _, _, _, offset, size in sections:
                if names[name:names.index(b"\0", name)] == wanted.encode() and size <= limit:
                    f.seek(offset)
                    return f.read(size)
    except (OSError, struct.error, IndexError, ValueError):
        return None
    return None


def first_container(fatbin):
    """The first fatbin container of a section's bytes."""
    if not fatbin or len(fatbin) < 16:
        return None
    _, _, header_size, size = struct.unpack_from("<IHHQ", fatbin, 0)
    return fatbin[:header_size + size]


def cc_built():
    """A libcudart.so.12 stub and a library linking it by DT_RUNPATH, where cc exists."""
    cc = shutil.which("cc")
    if not cc:
        return []
    with tempfile.TemporaryDirectory(prefix="stackup-elf-seeds-") as tmp:
        folder = pathlib.Path(tmp)
        (folder / "stub.c").write_text("int cudaGetDeviceCount(int* n) { *n = 0; return 0; }\n")
        (folder / "user.c").write_text("int cudaGetDeviceCount(int*);\nint f(void) { int n; return cudaGetDeviceCount(&n); }\n")
        builds = [["-Wl,-soname,libcudart.so.12", "-o", "libcudart.so.12", "stub.c"],
                  ["-Wl,-rpath,$ORIGIN/../lib:/opt/cuda", "-Wl,--enable-new-dtags", "-o", "libuser.so", "user.c",
                   "libcudart.so.12"]]
        for args in builds:
            if subprocess.run([cc, "-shared", "-fPIC", "-s", *args], cwd=folder, capture_output=True).returncode:
                return []
        return [(folder / name).read_bytes() for name in ("libcudart.so.12", "libuser.so")]


def overflowing(elf):
    """`elf` with its first fatbin entry's payload size so large that the entry's end overflows."""
    at = elf.index(struct.pack("<I", FATBIN_MAGIC)) + 16 + 8
    return elf[:at] + struct.pack("<Q", 2 ** 64 - 48) + elf[at + 8:]


def elf_samples():
    dynamic = [(14, "libkern.so.1"), (1, "libcudart.so.12"), (1, "libc.so.6"), (29, "$ORIGIN:$ORIGIN/../lib"),
               (15, "/opt/cuda/lib64")]  # DT_SONAME, DT_NEEDED, DT_RUNPATH, DT_RPATH
    fatbin = (fat_container([fat_entry(arch=80), fat_entry(arch=90, flags=0x108011),
                             fat_entry(arch=100, flags=0x1208011, header_size=112),
                             fat_entry(arch=120, flags=0x1102011, header_size=96)])
              + fat_container([fat_entry(kind=1, arch=90, flags=0x8011, major=9, minor=0, header_size=80),
                               fat_entry(arch=80)])
              + fat_container([]))
    relfatbin = fat_container([fat_entry(kind=8, arch=100, flags=0x118011, major=1, minor=65, header_size=120)])
    made = make_elf(dynamic, [(".nv_fatbin", fatbin), ("__nv_relfatbin", relfatbin)])
    samples = [made,
               make_elf(dynamic, [(".nv_fatbin", fatbin)], is64=False),
               make_elf(dynamic, [(".nv_fatbin", fatbin)], big=True),
               make_elf(dynamic, [(".nv_fatbin", fatbin)], is64=False, big=True),
               made[:64], made[:len(made) // 2],
               overflowing(made),
               make_elf([], []),
               b"#!/usr/bin/env python3\nprint('not ELF')\n"]
    cuda = pathlib.Path("/usr/local/cuda/lib64")
    for library in ("libcufft.so.12", "libcudnn_cnn.so.9", "libnccl.so.2", "libcublas.so.13"):
        container = first_container(elf_section(cuda / library, ".nv_fatbin", 64 << 20))
        if container and len(container) < SEED_LIMIT - 4096:
            samples.append(make_elf(dynamic, [(".nv_fatbin", container)]))
    samples += cc_built()
    for path in ("/usr/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libffi.so.8",
                 cuda / "libnvtx3interop.so.1", cuda / "stubs" / "libcuda.so", cuda / "libcudart.so.13",
                 cuda / "libcublasLt.so.13"):
        path = pathlib.Path(path)
        if path.is_file():
            with open(path, "rb") as f:
                head = f.read(SEED_LIMIT)
            if len(head) < SEED_LIMIT:
                samples.append(head)  # the whole file
            if len(head) > 64 * 1024:
                samples.append(head[:64 * 1024])  # its headers' region
    return samples


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
        "elf": write(args.out, "elf", elf_samples()),
    }
    assert set(counts) == set(TARGETS)
    for target, count in counts.items():
        print(f"{target}: {count} seeds")


if __name__ == "__main__":
    main()

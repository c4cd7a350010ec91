"""Real binaries for the tests of stackup's ELF and CUDA-fatbinary checks, with the stdlib only.

stub_library   a shared object built with cc: a SONAME, DT_NEEDED, DT_RPATH or DT_RUNPATH as asked
extension      a Python-extension-like shared object; with `gencode`, a real CUDA kernel whose
               fatbinary holds exactly the SASS and PTX asked (built with nvcc, no GPU needed)
kernel_wheel   a kernel package like sgl-kernel: the extensions in a platform wheel
nvidia_wheel   an NVIDIA component wheel whose libraries are real stubs
fatbin_entries what a shared object's .nv_fatbin holds, read from the entries' headers

Every DT_NEEDED comes from `needed` alone (besides the C/C++ runtime the compiler links): the
libraries named there are throwaway stubs with those SONAMEs, so no CUDA 12 toolkit is needed,
and kernels are built without cudart. Builds are cached by content under
$STACKUP_TEST_TMPDIR (else the temp dir)/cuda-fixture-cache, because nvcc takes seconds;
entries are written whole (temp file + rename), as tests run in parallel.
"""
import collections
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import wheels

CUDA_BIN = "/usr/local/cuda/bin"
SKIP = 125   # CTest's skip
# sgl-kernel's own tag on PyPI: the stable ABI from CPython 3.10, glibc 2.17 and newer.
KERNEL_TAG = "cp310-abi3-manylinux2014_x86_64"
# The tag NVIDIA's CUDA component wheels carry on PyPI.
NVIDIA_TAG = "py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64"

_SELF = open(__file__, "rb").read()
_ARCH = re.compile(r"(sm|compute)_(\d+)([af]?)")
_KERNEL_SOURCE = ("__global__ void k(float* x) { x[0] = 1; }\n"
                  'extern "C" void stackup_fixture_launch(float* x) { k<<<1, 1>>>(x); }\n')

# The fatbinary layout (CUDA 13.0's nvcc, checked against cuobjdump 13.2): a section of
# containers, each a 16-byte header and entries; an entry's header gives its kind, arch and flags.
_FATBIN_MAGIC = 0xBA55ED50
_ENTRY_KINDS = {1: "compute", 2: "sm"}          # PTX, SASS (an ELF cubin)
_FLAG_LZ4 = 0x2000                              # nvcc -compress-mode=speed
_FLAG_ZSTD = 0x8000                             # nvcc's default compression mode
_FLAG_ARCH_SPECIFIC = 0x100000                  # the "a" of sm_90a
_FLAG_FAMILY = 0x200000                         # the "f" of sm_100f

FatbinEntry = collections.namedtuple("FatbinEntry", "arch compression")
FatbinEntry.__doc__ = """arch: "sm_90a" for SASS, "compute_90" for PTX; compression: None, "lz4" or "zstd"."""


class FixtureBuildError(RuntimeError):
    """A compiler or linker failed; the message holds its argv and output."""


# --- tools --------------------------------------------------------------------

def find_nvcc():
    """nvcc on PATH, else /usr/local/cuda/bin/nvcc, else None."""
    found = shutil.which("nvcc")
    if found:
        return found
    fallback = os.path.join(CUDA_BIN, "nvcc")
    return fallback if os.access(fallback, os.X_OK) else None


def require_nvcc():
    """nvcc's path, or a loud skip (exit 125). Call it outside harness.main's scenario, which
    takes any exit but 0 for a failure."""
    nvcc = find_nvcc()
    if nvcc is None:
        print("SKIP: nvcc not found (CUDA toolkit needed to build fixture kernels)", file=sys.stderr,
              flush=True)
        sys.exit(SKIP)
    return nvcc


def _tool(*names):
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise FixtureBuildError(f"none of {', '.join(names)} is on PATH (needed to build fixture binaries)")


def _tool_id(path):
    """What a cache key must change with when the toolchain does."""
    real = os.path.realpath(path)
    st = os.stat(real)
    return [real, st.st_size, st.st_mtime_ns]


def _run(argv, cwd):
    proc = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise FixtureBuildError(f"$ {' '.join(argv)}\n[rc={proc.returncode}]\n{proc.stdout}")


# --- the cache ----------------------------------------------------------------

def cache_dir():
    base = os.environ.get("STACKUP_TEST_TMPDIR") or tempfile.gettempdir()
    return os.path.join(base, "cuda-fixture-cache")


def _cached(what, build):
    """The bytes build() makes for `what` (JSON-able), from the cache when there."""
    key = hashlib.sha256(json.dumps(what, sort_keys=True).encode() + b"\0" + _SELF).hexdigest()
    folder = cache_dir()
    path = os.path.join(folder, key + ".so")
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        pass
    data = build()
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=key + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return data


# --- shared objects -----------------------------------------------------------

def _symbol(soname):
    """The function a stub exports: its SONAME as a C identifier (libcudart.so.12 -> libcudart_so_12)."""
    return "stub_" + re.sub(r"\W", "_", soname)


def _check_links(soname, needed, rpath, runpath):
    if rpath is not None and runpath is not None:
        raise ValueError("a shared object gets DT_RPATH or DT_RUNPATH, not both")
    for name in ([soname] if soname is not None else []) + list(needed):
        if not name or "/" in name:
            raise ValueError(f"not a SONAME: {name!r}")


def _link(linker, objects, out, work, soname=None, needed=(), rpath=None, runpath=None):
    """Links `objects` into the shared object `out`, with a DT_NEEDED on each of `needed`
    (linked against stubs of those SONAMEs written into `work`)."""
    argv = [linker, "-shared", "-fPIC", *objects, "-o", out]
    if soname is not None:
        argv += ["-Xlinker", "-soname", "-Xlinker", soname]
    if needed:
        argv.append("-Wl,--push-state,--no-as-needed")   # a DT_NEEDED on each, used or not
        for name in needed:
            path = os.path.join(work, "needed", name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(stub_library(name))
            argv.append(path)
        argv.append("-Wl,--pop-state")
    if rpath is not None:
        argv += ["-Wl,--disable-new-dtags", "-Xlinker", "-rpath", "-Xlinker", rpath]
    if runpath is not None:
        argv += ["-Wl,--enable-new-dtags", "-Xlinker", "-rpath", "-Xlinker", runpath]
    _run(argv, work)
    with open(out, "rb") as f:
        return f.read()


def stub_library(soname, needed=(), rpath=None, runpath=None):
    """The bytes of a real shared object (cc -shared -fPIC) whose SONAME is `soname`, exporting
    the function _symbol(soname), with a DT_NEEDED on each of `needed` and DT_RPATH `rpath` or
    DT_RUNPATH `runpath` (e.g. "$ORIGIN/../lib")."""
    needed = list(needed)
    _check_links(soname, needed, rpath, runpath)
    cc = _tool("cc", "gcc", "clang")
    what = {"kind": "stub", "soname": soname, "needed": needed, "rpath": rpath, "runpath": runpath,
            "cc": _tool_id(cc)}

    def build():
        with tempfile.TemporaryDirectory(prefix="stub-", dir=_work_base()) as work:
            source = os.path.join(work, "stub.c")
            with open(source, "w") as f:
                f.write(f"int {_symbol(soname)}(void) {{ return 0; }}\n")
            return _link(cc, [source], os.path.join(work, "out.so"), work, soname=soname, needed=needed,
                         rpath=rpath, runpath=runpath)

    return _cached(what, build)


def _gencode_flags(gencode):
    """-gencode per entry: "sm_90a" is SASS from compute_90a, "compute_90" is PTX."""
    flags = []
    for entry in gencode:
        m = _ARCH.fullmatch(entry)
        if not m:
            raise ValueError(f"not an architecture like sm_90, sm_90a, sm_100f or compute_90: {entry!r}")
        flags += ["-gencode", f"arch=compute_{m.group(2)}{m.group(3)},code={entry}"]
    return flags


def _compress_flags(compress):
    """False: nvcc's default (PTX compressed, SASS not); True: -compress-all; a mode name
    ("speed" is LZ4, "size"/"balance"/"default" zstd, "none"): -compress-all in that mode."""
    if compress is False:
        return []
    flags = ["-Xfatbin", "-compress-all"]
    if isinstance(compress, str):
        flags += ["-Xfatbin", f"-compress-mode={compress}"]
    elif compress is not True:
        raise ValueError(f"compress is a bool or an nvcc compress mode, not {compress!r}")
    return flags


def extension(needed=(), rpath=None, runpath=None, gencode=None, compress=False):
    """The bytes of a Python-extension-like shared object (no SONAME, as setuptools builds them)
    with a DT_NEEDED on each of `needed` (e.g. "libcudart.so.12", "libtorch.so") and DT_RPATH
    `rpath` or DT_RUNPATH `runpath`. With `gencode` (e.g. ["sm_90", "sm_90a", "sm_100f",
    "compute_90"]) it holds a real CUDA kernel whose fatbinary has exactly those SASS and PTX
    entries, built by nvcc without cudart; `compress` as _compress_flags says."""
    needed = list(needed)
    gencode = list(gencode or [])
    _check_links(None, needed, rpath, runpath)
    what = {"kind": "extension", "needed": needed, "rpath": rpath, "runpath": runpath,
            "gencode": gencode, "compress": compress}
    if not gencode:
        cc = _tool("cc", "gcc", "clang")
        what["cc"] = _tool_id(cc)
        source_text, suffix = "int stackup_fixture_extension(void) { return 0; }\n", ".c"
    else:
        nvcc = find_nvcc()
        if nvcc is None:
            raise FixtureBuildError("nvcc not found (CUDA toolkit needed to build fixture kernels)")
        cxx = _tool("c++", "g++", "clang++")   # the host linker nvcc itself uses
        flags = [*_gencode_flags(gencode), *_compress_flags(compress)]
        what.update(nvcc=_tool_id(nvcc), cxx=_tool_id(cxx))
        source_text, suffix = _KERNEL_SOURCE, ".cu"

    def build():
        with tempfile.TemporaryDirectory(prefix="ext-", dir=_work_base()) as work:
            source = os.path.join(work, "ext" + suffix)
            with open(source, "w") as f:
                f.write(source_text)
            if not gencode:
                return _link(cc, [source], os.path.join(work, "out.so"), work, needed=needed,
                             rpath=rpath, runpath=runpath)
            obj = os.path.join(work, "ext.o")
            _run([nvcc, "-c", "-Xcompiler", "-fPIC", "-cudart", "none", *flags, "-o", obj, source], work)
            return _link(cxx, [obj], os.path.join(work, "out.so"), work, needed=needed, rpath=rpath,
                         runpath=runpath)

    return _cached(what, build)


def _work_base():
    base = os.environ.get("STACKUP_TEST_TMPDIR")
    if base:
        os.makedirs(base, exist_ok=True)
    return base


# --- reading a fatbinary --------------------------------------------------------

def _elf_section(elf, name):
    """The contents of section `name` of a 64-bit little-endian ELF file, or None."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    for name_off, _type, _flags, _addr, offset, size in headers:
        start = names_at + name_off
        if elf[start:elf.index(b"\0", start)].decode() == name:
            return elf[offset:offset + size]
    return None


def fatbin_entries(elf):
    """The entries of the .nv_fatbin section of shared object `elf` (bytes), in order, as
    FatbinEntry; [] when it has none. An independent check where cuobjdump is absent."""
    section = _elf_section(elf, ".nv_fatbin")
    out = []
    at = 0
    while section is not None and at + 16 <= len(section):
        magic, _version, header_size, body_size = struct.unpack_from("<IHHQ", section, at)
        if magic != _FATBIN_MAGIC:
            break
        entry, end = at + header_size, at + header_size + body_size
        while entry < end:
            kind, _unknown, entry_header, payload = struct.unpack_from("<HHIQ", section, entry)
            arch, = struct.unpack_from("<I", section, entry + 28)
            flags, = struct.unpack_from("<Q", section, entry + 40)
            variant = "a" if flags & _FLAG_ARCH_SPECIFIC else "f" if flags & _FLAG_FAMILY else ""
            compression = "zstd" if flags & _FLAG_ZSTD else "lz4" if flags & _FLAG_LZ4 else None
            out.append(FatbinEntry(f"{_ENTRY_KINDS.get(kind, f'kind{kind}')}_{arch}{variant}", compression))
            entry += entry_header + payload
        at = (end + 7) // 8 * 8
    return out


# --- wheels -------------------------------------------------------------------

def _platform_wheel(tag):
    return any(platform != "any" for platform in tag.split("-")[2].split("."))


def kernel_wheel(out_dir, name, version, modules, requires=(), tag=KERNEL_TAG):
    """A kernel package like sgl-kernel (the version as given: PyPI's has no CUDA label).
    modules: {file name inside the package dir, e.g. "common_ops.abi3.so": bytes}. Its
    __init__.py imports nothing binary, so `import name` works without the libraries."""
    package = name.replace("-", "_")
    files = {f"{package}/__init__.py": f"__version__ = {version!r}\n"}
    files.update({f"{package}/{path}": data for path, data in modules.items()})
    return wheels.build_wheel(out_dir, name, version, files, requires=requires, tag=tag,
                              top_level=[package], root_is_purelib=not _platform_wheel(tag))


def nvidia_wheel(out_dir, name, version, lib_dir, libraries, requires=(), tag=NVIDIA_TAG):
    """Like wheels.nvidia_like with NVIDIA's own tag: nvidia/<lib_dir>/lib/<each of libraries>,
    each a real stub_library with that file name as its SONAME, and a header per library."""
    files = {}
    for library in libraries:
        files[f"nvidia/{lib_dir}/lib/{library}"] = stub_library(library)
        files[f"nvidia/{lib_dir}/include/{library.split('.')[0]}.h"] = f"/* {name} {version} */\n"
    return wheels.build_wheel(out_dir, name, version, files, requires=requires, tag=tag,
                              top_level=["nvidia"], root_is_purelib=not _platform_wheel(tag))

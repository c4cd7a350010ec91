"""Builds small, real wheels (PEP 427) for the tests and the demo, with the stdlib only.

A wheel is a zip with the package, a .dist-info/METADATA, WHEEL and RECORD;
uv installs these exactly as it installs torch's.
"""
import base64
import hashlib
import io
import os
import zipfile


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def build_wheel(out_dir, name, version, files, requires=(), tag="py3-none-any",
                requires_python=None, top_level=None, root_is_purelib=True):
    """Writes <out_dir>/<name>-<version>-<tag>.whl and returns its path.

    files: {relative path inside site-packages: text or bytes content}.
    requires: PEP 508 strings for Requires-Dist.
    root_is_purelib: WHEEL's Root-Is-Purelib (false for a platform wheel, as real ones say).
    """
    dist = name.replace("-", "_")
    dist_info = f"{dist}-{version}.dist-info"
    metadata = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        metadata.append(f"Requires-Python: {requires_python}")
    metadata += [f"Requires-Dist: {r}" for r in requires]
    entries = dict(files)
    entries[f"{dist_info}/METADATA"] = "\n".join(metadata) + "\n"
    entries[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: stackup-tests\n"
        + f"Root-Is-Purelib: {'true' if root_is_purelib else 'false'}\n"
        + "".join(f"Tag: {t}\n" for t in _expand_tag(tag)))
    if top_level:
        entries[f"{dist_info}/top_level.txt"] = "\n".join(top_level) + "\n"
    record_name = f"{dist_info}/RECORD"
    lines = []
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, text in entries.items():
            data = text.encode() if isinstance(text, str) else text
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
            lines.append(f"{path},{_record_hash(data)},{len(data)}")
        lines.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        zf.writestr(info, "\n".join(lines) + "\n")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{dist}-{version}-{tag}.whl")
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    return path


def _expand_tag(tag):
    py, abi, plat = tag.split("-")
    return [f"{p}-{a}-{q}" for p in py.split(".") for a in abi.split(".") for q in plat.split(".")]


def torch_like(out_dir, name, version, cuda, requires=(), requires_python=None):
    """A package `name` whose module reports __version__ and version.cuda, as torch does."""
    module = name.replace("-", "_")
    files = {
        f"{module}/__init__.py": f"__version__ = {version!r}\nfrom . import version\n",
        f"{module}/version.py": f"__version__ = {version!r}\ncuda = {cuda!r}\n",
    }
    return build_wheel(out_dir, name, version, files, requires=requires,
                       requires_python=requires_python, top_level=[module])


def plain(out_dir, name, version, requires=()):
    """A package `name` with a module that only reports __version__."""
    module = name.replace("-", "_")
    files = {f"{module}/__init__.py": f"__version__ = {version!r}\n"}
    return build_wheel(out_dir, name, version, files, requires=requires, top_level=[module])


def blocking_import(out_dir, name, version, marker, seconds=3600):
    """A package `name` whose import writes "PID PPID" to `marker` (whole, by rename) and then
    sleeps `seconds` before it sets __version__: an import that hangs where a test wants it."""
    module = name.replace("-", "_")
    marker = str(marker)
    body = (
        "import os, time\n"
        f"with open({marker + '.tmp'!r}, 'w') as f:\n"
        "    f.write(f'{os.getpid()} {os.getppid()}\\n')\n"
        f"os.replace({marker + '.tmp'!r}, {marker!r})\n"
        f"time.sleep({seconds})\n"
        f"__version__ = {version!r}\n")
    return build_wheel(out_dir, name, version, {f"{module}/__init__.py": body}, top_level=[module])


# The demo and test stack: what a CUDA 12.8 -> 13.0 upgrade meets on the real indexes.
TORCH_CU128 = "2.10.0+cu128"
TORCH_CU130 = "2.11.0.dev20251230+cu130"
VISION_CU128 = "0.25.0+cu128"
VISION_CU130 = "0.26.0.dev20251230+cu130"
SGL_KERNEL_PYPI = "0.3.19"           # PyPI's build: no local label
SGL_KERNEL_CU130 = "0.3.20+cu130"
MISSING_DEP = "stackup-test-missing-dependency"   # on no index at all


def build_stack(root):
    """Writes <root>/<index>/<project>/<wheel> for these indexes and returns root:

    cu128         torch 2.10.0+cu128 (cuda 12.8), torchvision 0.25.0+cu128
    cu130         torch 2.11.0.dev20251230+cu130 (cuda 13.0), torchvision 0.26.0.dev20251230+cu130
    sglang-cu130  sgl-kernel 0.3.20+cu130, which declares a dependency that exists nowhere
                  (it installs only with --no-deps, as `deps: false` asks)
    pypi          the plain index: filelock (torch's dependency), sgl-kernel 0.3.19,
                  torch 2.10.0+cu128, oldpin (pins torch==2.10.0+cu128),
                  brokendep (depends on a dist that exists nowhere)
    """
    def at(index, project):
        return os.path.join(root, index, project)

    for index, torch, vision, cuda in (("cu128", TORCH_CU128, VISION_CU128, "12.8"),
                                       ("cu130", TORCH_CU130, VISION_CU130, "13.0")):
        torch_public = torch.split("+")[0]
        torch_like(at(index, "torch"), "torch", torch, cuda, requires=["filelock>=3.0"],
                   requires_python=">=3.9")
        torch_like(at(index, "torchvision"), "torchvision", vision, cuda,
                   requires=[f"torch=={torch_public}"], requires_python=">=3.9")
    torch_like(at("sglang-cu130", "sgl-kernel"), "sgl-kernel", SGL_KERNEL_CU130, "13.0",
               requires=[MISSING_DEP])
    plain(at("pypi", "filelock"), "filelock", "3.20.0")
    torch_like(at("pypi", "sgl-kernel"), "sgl-kernel", SGL_KERNEL_PYPI, "12.8")
    torch_like(at("pypi", "torch"), "torch", TORCH_CU128, "12.8", requires=["filelock>=3.0"],
               requires_python=">=3.9")
    plain(at("pypi", "oldpin"), "oldpin", "1.0", requires=[f"torch=={TORCH_CU128}"])
    plain(at("pypi", "brokendep"), "brokendep", "1.0", requires=[MISSING_DEP])
    return root


def nvidia_like(out_dir, name, version, lib_dir, library, requires=()):
    """An NVIDIA CUDA component wheel as on the real indexes: shared libraries under the `nvidia`
    namespace package (no nvidia/__init__.py), top_level.txt `nvidia`, nothing to import.
    The library is a real shared object whose SONAME is `library` (cuda_fixtures.stub_library)."""
    import cuda_fixtures   # here, not at the top: cuda_fixtures builds its wheels with this module
    files = {f"nvidia/{lib_dir}/lib/{library}": cuda_fixtures.stub_library(library),
             f"nvidia/{lib_dir}/include/{library.split('.')[0]}.h": f"/* {name} {version} */\n"}
    return build_wheel(out_dir, name, version, files, requires=requires, top_level=["nvidia"])


def clitool(out_dir):
    """clitool 2.0, a wheel with a console script (entry point `clitool`, which prints
    "clitool 2.0 runs"): uv writes its shebang naming the venv it installs into."""
    return build_wheel(out_dir, "clitool", "2.0", {
        "clitool/__init__.py": "__version__ = '2.0'\ndef main():\n    print('clitool 2.0 runs')\n",
        "clitool-2.0.dist-info/entry_points.txt": "[console_scripts]\nclitool = clitool:main\n",
    }, top_level=["clitool"])


# The CUDA 12 -> 13 rename: NVIDIA's -cu12 wheels (one dir per library) become unsuffixed
# 13.x wheels (all in nvidia/cu13), and torch +cu130 depends on the new names, so uv installs
# them beside the old ones and never removes those.
RUNTIME_CU12 = "12.8.90"
CUBLAS_CU12 = "12.8.4.1"
RUNTIME_13 = "13.0.96"
CUBLAS_13 = "13.0.0.19"
CUFFT_13 = "12.0.0.15"     # CUDA 13's cuFFT: the library's own version


def build_rename_stack(root):
    """Writes <root>/<index>/<project>/<wheel> and returns root:

    nv-cu128  torch 2.10.0+cu128, needing nvidia-cuda-runtime-cu12 and nvidia-cublas-cu12
    nv-cu130  torch 2.11.0.dev20251230+cu130, needing nvidia-cuda-runtime, nvidia-cublas, nvidia-cufft (13)
    nv-pypi   filelock, the NVIDIA wheels of both generations, and oldcuda (needs nvidia-cuda-runtime-cu12)
    """
    def at(index, project):
        return os.path.join(root, index, project)

    cu12 = [f"nvidia-cuda-runtime-cu12=={RUNTIME_CU12}", f"nvidia-cublas-cu12=={CUBLAS_CU12}"]
    cu13 = [f"nvidia-cuda-runtime=={RUNTIME_13}", f"nvidia-cublas=={CUBLAS_13}", f"nvidia-cufft=={CUFFT_13}"]
    torch_like(at("nv-cu128", "torch"), "torch", TORCH_CU128, "12.8", requires=["filelock>=3.0", *cu12])
    torch_like(at("nv-cu130", "torch"), "torch", TORCH_CU130, "13.0", requires=["filelock>=3.0", *cu13])
    plain(at("nv-pypi", "filelock"), "filelock", "3.20.0")
    nvidia_like(at("nv-pypi", "nvidia-cuda-runtime-cu12"), "nvidia-cuda-runtime-cu12", RUNTIME_CU12,
                "cuda_runtime", "libcudart.so.12")
    nvidia_like(at("nv-pypi", "nvidia-cublas-cu12"), "nvidia-cublas-cu12", CUBLAS_CU12, "cublas",
                "libcublas.so.12")
    nvidia_like(at("nv-pypi", "nvidia-cuda-runtime"), "nvidia-cuda-runtime", RUNTIME_13, "cu13", "libcudart.so.13")
    nvidia_like(at("nv-pypi", "nvidia-cublas"), "nvidia-cublas", CUBLAS_13, "cu13", "libcublas.so.13")
    nvidia_like(at("nv-pypi", "nvidia-cufft"), "nvidia-cufft", CUFFT_13, "cu13", "libcufft.so.12")
    plain(at("nv-pypi", "oldcuda"), "oldcuda", "1.0", requires=[f"nvidia-cuda-runtime-cu12=={RUNTIME_CU12}"])
    return root


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 3 or sys.argv[1] != "stack":
        sys.exit(f"usage: {sys.argv[0]} stack ROOT   (writes the demo/test indexes under ROOT)")
    build_stack(sys.argv[2])

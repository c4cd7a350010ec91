"""Wheels shaped like real packages that a naive default import or __version__ rule gets wrong
(each named after the real package it copies), a stale module to catch, and a cuda-bindings-like
pair whose newer version adds a dependency. Built with wheels.build_wheel, served like the stack.
"""
import os

from cuda_fixtures import stub_library
from wheels import build_wheel

INDEX = "shapes"

# dist -> (version, module the default import must pick or None for "judged by metadata only",
#          __version__ the module reports or None)
HEALTHY = {
    # protobuf: no top_level.txt; google/ is a namespace package (no __init__.py); the module is
    # google.protobuf; a private google/_upb holds the C extension.
    "nsproto": ("6.31.1", "google.nsproto", "6.31.1"),
    # opencv-python-headless: cv2.__version__ drops the 4th (build) part; an auditwheel .libs dir.
    "opencv-like-headless": ("4.9.0.80", "cv2like", "4.9.0"),
    # nvidia-ml-py: top_level.txt lists a stray top-level example.py first; pynvml has no __version__.
    "nvml-like-py": ("12.560.30", "pynvmllike", None),
    # regex 2024.x: its __version__ is its own numbering (2.5.x), defined in a submodule.
    "regex-like": ("2024.11.6", "regexlike", "2.5.148"),
    # nvidia-cuda-runtime-cu12: only shared libraries and headers under the nvidia/ namespace.
    "nvidia-like-runtime-cu12": ("12.9.79", None, None),
    # cuda-python 12.9+: a metapackage, nothing but its dist-info (top_level.txt one blank line).
    "cudameta-like": ("12.9.0", None, None),
    # PyYAML: top_level.txt lists a private shim package (_yaml) before yaml.
    "pyyamllike": ("6.0.2", "yamllike", "6.0.2"),
    # nvidia-cutlass-dsl: the package lives in a dir that the dist's .pth puts on sys.path.
    "cutlass-like-dsl": ("4.2.1", "cutlasslike", "4.2.1"),
}

# Installed healthy at 2.11.0; a test then writes the old 2.10.0 text over one of their files.
STALE = {
    "stale-like": ("2.11.0", "stalelike/__init__.py"),            # the module's own file
    "stale-deep-like": ("2.11.0", "staledeeplike/_version.py"),   # __init__.py intact, _version.py old
}

CUDABIND_OLD, CUDABIND_NEW, CUDAPATH = "12.9.0", "12.9.10", "1.0"


def _at(root, project):
    return os.path.join(root, INDEX, project)


def _healthy(root):
    def wheel(name, files, top_level=None):
        build_wheel(_at(root, name), name, HEALTHY[name][0], files, top_level=top_level)

    wheel("nsproto", {
        "google/nsproto/__init__.py": "__version__ = '6.31.1'\nfrom google._upbn import _message\n",
        "google/nsproto/descriptor.py": "KIND = 'descriptor'\n",
        "google/_upbn/_message.py": "IMPLEMENTATION = 'python'\n",
    })
    wheel("opencv-like-headless", {
        "cv2like/__init__.py": "from .version import opencv_version\n__version__ = '4.9.0'\n",
        "cv2like/version.py": "opencv_version = '4.9.0.80'\n",
        "opencv_like_headless.libs/libavcodec-like.so.59": stub_library("libavcodec-like.so.59"),
    }, top_level=["cv2like"])
    wheel("nvml-like-py", {
        "example.py": "import pynvmllike\nprint('example: a demo script installed as a top-level module')\n",
        "pynvmllike.py": "def nvmlInit():\n    return None\n",
    }, top_level=["example", "pynvmllike"])
    wheel("regex-like", {
        "regexlike/__init__.py": "from .regexlike import *\nfrom .regexlike import __version__\n",
        "regexlike/regexlike.py": "__all__ = ['compile']\n__version__ = '2.5.148'\n"
                                  "def compile(pattern):\n    return pattern\n",
    }, top_level=["regexlike"])
    wheel("nvidia-like-runtime-cu12", {
        "nvidia/like_runtime/lib/libx.so.12": stub_library("libx.so.12"),
        "nvidia/like_runtime/lib/libx.so": stub_library("libx.so.12"),
        "nvidia/like_runtime/include/x.h": "int x(void);\n",
    }, top_level=["nvidia"])
    wheel("cudameta-like", {}, top_level=[""])
    wheel("pyyamllike", {
        "_yamllike/__init__.py": "from yamllike import *\n",
        "yamllike/__init__.py": "__version__ = '6.0.2'\n",
    }, top_level=["_yamllike", "yamllike"])
    wheel("cutlass-like-dsl", {
        "cutlass_like_dsl.pth": "cutlass_like_dsl/python_packages\n",
        "cutlass_like_dsl/python_packages/cutlasslike/__init__.py": "__version__ = '4.2.1'\n",
        "cutlass_like_dsl/lib/libcute-like.so": stub_library("libcute-like.so"),
    })


def _stale(root):
    build_wheel(_at(root, "stale-like"), "stale-like", "2.11.0",
                {"stalelike/__init__.py": "__version__ = '2.11.0'\n"}, top_level=["stalelike"])
    build_wheel(_at(root, "stale-deep-like"), "stale-deep-like", "2.11.0",
                {"staledeeplike/__init__.py": "from ._version import __version__\n",
                 "staledeeplike/_version.py": "__version__ = '2.11.0'\n"}, top_level=["staledeeplike"])


def _cudabind(root):
    """cuda-bindings 12.9.0 -> 12.9.x: the newer one needs cudapath-like (cuda-pathfinder);
    `import cudabind_like` works without it, `import cudabind_like.runtime` does not."""
    for version, requires, runtime in (
            (CUDABIND_OLD, [], "def get_version():\n    return 12090\n"),
            (CUDABIND_NEW, [f"cudapath-like>={CUDAPATH}"],
             "import cudapath_like\n\ndef get_version():\n    return 12090\n")):
        build_wheel(_at(root, "cudabind-like"), "cudabind-like", version,
                    {"cudabind_like/__init__.py": f"__version__ = {version!r}\n",
                     "cudabind_like/runtime.py": runtime},
                    requires=requires, top_level=["cudabind_like"])
    build_wheel(_at(root, "cudapath-like"), "cudapath-like", CUDAPATH,
                {"cudapath_like/__init__.py": f"__version__ = {CUDAPATH!r}\n"}, top_level=["cudapath_like"])


STALE_TEXT = "__version__ = '2.10.0'\n"   # what the old release's file said


def build_real_shapes(root):
    """Writes <root>/shapes/<project>/<wheel> for HEALTHY, STALE and the cudabind-like pair
    (cudabind-like 12.9.0 and 12.9.10, cudapath-like 1.0); returns root."""
    _healthy(root)
    _stale(root)
    _cudabind(root)
    return root


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} ROOT   (writes the real-shapes index under ROOT/{INDEX})")
    build_real_shapes(sys.argv[1])

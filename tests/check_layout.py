"""The layout rules of STYLE.md, checked on every test run:
each third-party library is included from one place only, and module
dependencies point one way, down (cli -> txn -> ... -> pep -> base)."""
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"

# Header prefix -> the only files (or folders) that may include it.
LIBRARIES = {
    "yaml-cpp/": ["manifest/"],
    "curl/": ["base/http"],
    "boost/process": ["base/process.cpp"],
    "spdlog/": ["base/log.cpp"],
    "openssl/": ["base/sha256.cpp"],
    "gumbo": ["index/"],
    "CLI/": ["cli/"],
}

# Module -> the modules it may include from (its own always allowed).
BELOW = {
    "base": set(),
    "pep": {"base"},
    "manifest": {"pep", "base"},
    "venv": {"pep", "base"},
    "index": {"venv", "pep", "base"},
    "verify": {"venv", "manifest", "pep", "base"},
    "installer": {"index", "manifest", "venv", "pep", "base"},
    "snapshot": {"base"},
    "plan": {"index", "verify", "installer", "venv", "manifest", "pep", "base"},
    "txn": {"plan", "installer", "verify", "snapshot", "index", "venv", "manifest", "pep", "base"},
    "cli": {"txn", "plan", "installer", "verify", "snapshot", "index", "venv", "manifest", "pep", "base"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def problems():
    for path in sorted(SRC.rglob("*.[ch]pp")):
        rel = path.relative_to(SRC).as_posix()
        module = rel.split("/")[0] if "/" in rel else None
        for header in INCLUDE.findall(path.read_text()):
            for prefix, owners in LIBRARIES.items():
                if header.startswith(prefix) and not any(rel.startswith(o) for o in owners):
                    yield f"src/{rel}: includes <{header}>; only {', '.join(owners)} may"
            target = header.split("/")[0] if "/" in header else None
            if module and target in BELOW and target != module and target not in BELOW[module]:
                yield f"src/{rel}: {module} includes {header}, but {module} may not depend on {target}"
        if module and module not in BELOW:
            yield f"src/{rel}: module '{module}' is not in the layout (tests/check_layout.py)"


def main():
    found = list(problems())
    for p in found:
        print(p)
    print(f"layout: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

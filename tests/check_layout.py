"""The layout of ARCHITECTURE.md, checked on every test run: each third-party
library is included only where that file says, and module dependencies point
one way, down (cli -> txn -> ... -> pep -> base), as its ```layout block lists."""
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"

ARCHITECTURE = SRC.parent / "ARCHITECTURE.md"


def block(kind):
    """The lines of ARCHITECTURE.md's fenced block ```kind as {key: [words]}."""
    match = re.search(rf"^```{kind}\n(.*?)^```", ARCHITECTURE.read_text(), re.M | re.S)
    if not match:
        sys.exit(f"layout: {ARCHITECTURE} has no ```{kind} block")
    out = {}
    for line in match.group(1).splitlines():
        key, _, rest = line.partition(":")
        out[key.strip()] = rest.split()
    return out


# Module -> the modules it may include from (its own always allowed), as ARCHITECTURE.md draws it.
BELOW = {module: set(deps) for module, deps in block("layout").items()}
# Header prefix -> the only files (or folders; "*/test_": any test file) that may include it.
LIBRARIES = block("libraries")


def owns(owner, rel):
    if owner.startswith("*/"):
        return pathlib.PurePosixPath(rel).name.startswith(owner[2:])
    return rel.startswith(owner)


INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def problems():
    for path in sorted(SRC.rglob("*.[ch]pp")):
        rel = path.relative_to(SRC).as_posix()
        module = rel.split("/")[0] if "/" in rel else None
        for header in INCLUDE.findall(path.read_text()):
            for prefix, owners in LIBRARIES.items():
                if header.startswith(prefix) and not any(owns(o, rel) for o in owners):
                    yield f"src/{rel}: includes <{header}>; only {', '.join(owners)} may"
            target = header.split("/")[0] if "/" in header else None
            if module and target in BELOW and target != module and target not in BELOW[module]:
                yield f"src/{rel}: {module} includes {header}, but {module} may not depend on {target}"
        if module and module not in BELOW:
            yield f"src/{rel}: module '{module}' is not in the layout (tests/check_layout.py)"


# Folders not yet checked for include knots (every other folder is, a new one too): snapshot/ still
# has one (store, store_internal, store_json, index_tsv, strategy); drop it from here once untied.
KNOTTED = ("snapshot",)


def circles():
    """Inside any folder but KNOTTED's, a file (x.hpp with x.cpp) that reaches itself through the quoted includes
    of its own folder: a knot (ARCHITECTURE.md: the house has no circle). Tests are left out."""
    edges = {}
    for path in sorted(SRC.rglob("*.[ch]pp")):
        rel = path.relative_to(SRC)
        if path.name.startswith("test_") or len(rel.parts) != 2 or rel.parts[0] in KNOTTED:
            continue
        node = f"{rel.parts[0]}/{path.stem}"
        for header in INCLUDE.findall(path.read_text()):
            target = header.rsplit(".", 1)[0]
            if header.startswith(rel.parts[0] + "/") and target != node:
                edges.setdefault(node, set()).add(target)
    for start in sorted(edges):
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        if start in seen:
            yield f"src/{start}: its includes lead back to itself (a knot inside {start.split('/')[0]}/)"


def main():
    found = list(problems()) + list(circles())
    for p in found:
        print(p)
    print(f"layout: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

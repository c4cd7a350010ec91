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


def circles(src=SRC):
    """In every folder of `src`, a file (x.hpp with x.cpp) that reaches itself through the quoted includes
    of its own folder: a knot (ARCHITECTURE.md: the house has no circle). Tests are left out."""
    edges = {}
    for path in sorted(src.rglob("*.[ch]pp")):
        rel = path.relative_to(src)
        if path.name.startswith("test_") or len(rel.parts) != 2:
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


# Writing to the terminal: streams, the printf family, <iostream>, ANSI escapes.
PRINTS = re.compile(r'std::(cout|cerr|clog)\b|(?<![A-Za-z_])(printf|puts|fputs|fprintf)\s*\(|<iostream>|\\x1b\[|\\033\[')


def printers(src=SRC):
    """Only cli/ (and main.cpp) speaks to the terminal: below it (txn above all) a module returns data
    and the CLI renders it; base/log.cpp writes through spdlog. Comments and tests are left out."""
    for path in sorted(src.rglob("*.[ch]pp")):
        rel = path.relative_to(src)
        if path.name.startswith("test_") or len(rel.parts) != 2 or rel.parts[0] == "cli":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//", 1)[0] if not line.lstrip().startswith("//") else ""
            if PRINTS.search(code):
                yield f"src/{rel.as_posix()}:{number}: writes to the terminal; only cli/ may (render data there)"


# circles() and printers() on small trees: (what, {path: text}, the files they must name).
SELF_TESTS = [
    ("a knot through a shared header", {
        "m/a.hpp": '#include "m/b.hpp"\n', "m/a.cpp": '#include "m/a.hpp"\n',
        "m/b.hpp": "", "m/b.cpp": '#include "m/b.hpp"\n#include "m/a.hpp"\n'}, ["src/m/a", "src/m/b"]),
    ("the same two files with the shared type in its own header", {
        "m/a.hpp": '#include "m/types.hpp"\n', "m/a.cpp": '#include "m/a.hpp"\n#include "m/b.hpp"\n',
        "m/b.hpp": '#include "m/types.hpp"\n', "m/b.cpp": '#include "m/b.hpp"\n', "m/types.hpp": ""}, []),
    ("a .cpp that includes its own header only", {"m/a.hpp": "", "m/a.cpp": '#include "m/a.hpp"\n'}, []),
    ("includes across folders are the layout's business, not a knot", {
        "m/a.hpp": '#include "n/b.hpp"\n', "m/a.cpp": "", "n/b.hpp": '#include "m/a.hpp"\n'}, []),
    ("a test file's includes are left out", {
        "m/a.hpp": "", "m/a.cpp": '#include "m/test_a.hpp"\n', "m/test_a.hpp": '#include "m/a.hpp"\n'}, []),
    ("txn printing", {"txn/a.cpp": 'void f() { std::cerr << "x"; }\n'}, ["src/txn/a.cpp"]),
    ("txn painting", {"txn/a.cpp": 'auto red = "\\x1b[31m";\n'}, ["src/txn/a.cpp"]),
    ("txn's printf", {"txn/a.cpp": '#include <cstdio>\nvoid f() { std::printf("x"); }\n'}, ["src/txn/a.cpp"]),
    ("cli printing, a comment naming printf, fmt's format and snprintf", {
        "cli/a.cpp": 'void f() { std::cout << "x"; }\n',
        "txn/b.cpp": '// libcurl writes each with its own printf (slow)\nauto s = fmt::format("{}", 1);\n'
                     'int n = std::snprintf(buf, 4, "x");\n'}, []),
]


def self_test():
    import tempfile
    failed = 0
    for what, files, expected in SELF_TESTS:
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            for name, text in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            got = sorted(line.split(":")[0] for line in list(circles(root)) + list(printers(root)))
        if got != sorted(expected):
            failed += 1
            print(f"self-test: {what}: found {got}, expected {sorted(expected)}")
    print(f"layout self-test: {len(SELF_TESTS) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    found = list(problems()) + list(circles()) + list(printers())
    for p in found:
        print(p)
    print(f"layout: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main())

"""Near misses name the real cause, served for real on 127.0.0.1 (HTML and PEP 691 JSON pages):
- a range whose only match is yanked says so with the reason; an exact pin of it plans with a warning;
- a wheel for a newer glibc names the glibc it needs and the host's, not the interpreter;
- newer releases that exist only as sdists are named when an older wheel is chosen.
Each refused plan exits 3 and touches nothing.
"""
import os

import harness
from harness import check_rc, check_says
from wheels import build_wheel, plain


def build_index(root):
    at = lambda project: str(root / "near" / project)  # noqa: E731
    plain(at("yanky"), "yanky", "1.0")
    yanked = plain(at("yanky"), "yanky", "2.0")
    with open(yanked + ".yanked", "w") as f:
        f.write("broken ABI on glibc 2.36")
    build_wheel(at("newglibc"), "newglibc", "1.0", {"newglibc/__init__.py": "__version__ = '1.0'\n"},
                tag="py3-none-manylinux_2_99_x86_64", top_level=["newglibc"])
    plain(at("srconly"), "srconly", "0.16")
    for version in ("0.17", "0.18"):
        with open(os.path.join(at("srconly"), f"srconly-{version}.tar.gz"), "wb") as f:
            f.write(b"not a real sdist\n")
    return root


def doc(server, venv, packages):
    return {"version": 1, "name": "near", "venv": str(venv), "indexes": {"near": server.url("near")},
            "steps": [{"name": "one", "index": "near", "packages": packages}]}


def scenario(t):
    root = build_index(t.tmp / "indexes")
    server = t.serve(str(root))
    venv = t.make_venv()
    before = t.tree(venv)
    for page_format in ("html", "json"):
        if page_format == "json":
            (root / "near" / ".format").write_text("json\n")
        r = t.stackup("plan", t.manifest(doc(server, venv, ["yanky>=2"]), "yanked.yaml"))
        check_rc(r, 3)
        check_says(r, "yanky 2.0 was yanked: broken ABI on glibc 2.36")

        r = t.stackup("plan", t.manifest(doc(server, venv, ["yanky==2.0"]), "pinned.yaml"))
        check_rc(r, 0)
        check_says(r, "warning", "yanky 2.0 was yanked", "chosen anyway")

        r = t.stackup("plan", t.manifest(doc(server, venv, ["newglibc"]), "glibc.yaml"))
        check_rc(r, 3)
        check_says(r, "needs glibc 2.99 (manylinux_2_99_x86_64); this host has glibc")

        r = t.stackup("plan", t.manifest(doc(server, venv, ["srconly"]), "sdist.yaml"))
        check_rc(r, 0)
        check_says(r, "srconly-0.16", "0.17 and 0.18 are source-only; stackup installs wheels only")
        t.assert_tree(venv, before, f"plan ({page_format} pages) changed the venv")


harness.main(scenario)

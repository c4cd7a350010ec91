"""`stackup plan` fetches every project page from its index over the network, all at once,
and survives a slow or flaky index. 8 plain packages on 3 indexes, one step per index:
- every page delayed 400 ms: exit 0 and the table names all 8;
- one page answers 503 twice, then 200: exit 0, and that page was asked for 3 times;
- one page always answers 500: exit 3 naming the package and "500";
- one page hangs, --http-timeout 2: exit 3 naming the package (the harness's child timeout
  is the hang guard; nothing here asserts on wall time).
"""
import os

import harness
from harness import check, check_rc, check_says
from wheels import plain

INDEXES = {
    "alpha": ["netpkg-a1", "netpkg-a2", "netpkg-a3"],
    "beta": ["netpkg-b1", "netpkg-b2", "netpkg-b3"],
    "gamma": ["netpkg-c1", "netpkg-c2"],
}
DEFAULT = "alpha"


def build_tree(root):
    """<root>/<index>/<project>/<wheel> for INDEXES; returns root."""
    for index, packages in INDEXES.items():
        for name in packages:
            plain(os.path.join(root, index, name), name, "1.0")
    return root


def plan_doc(t, server, venv):
    return {
        "version": 1,
        "name": f"it-{t.name}",
        "venv": str(venv),
        "indexes": {index: server.url(index) for index in INDEXES},
        "default_index": DEFAULT,
        "steps": [{"name": f"step-{index}", "index": index, "packages": list(packages)}
                  for index, packages in INDEXES.items()],
    }


def all_packages():
    return [p for packages in INDEXES.values() for p in packages]


def scenario(t):
    server = t.serve(build_tree(str(t.tmp / "indexes")))
    venv = t.make_venv()
    manifest = t.manifest(plan_doc(t, server, venv))

    # (a) every page slow: still a full plan.
    server.rules.set([{"prefix": f"/{index}/", "delay_ms": 400} for index in INDEXES])
    r = t.stackup("plan", manifest)
    server.rules.clear()
    check_rc(r, 0)
    check_says(r, *all_packages())

    # (b) a transient 503, twice, then 200: retried into success.
    page = "/beta/netpkg-b2/"
    before = len(server.requests(page))
    server.rules.set([{"prefix": page, "status": 503, "times": 2}])
    r = t.stackup("plan", manifest)
    server.rules.clear()
    check_rc(r, 0)
    check_says(r, *all_packages())
    asked = len(server.requests(page)) - before
    check(asked == 3, f"{page} was requested {asked} times, expected 3 (2 x 503, then 200)", r)

    # (c) a page that always fails: exit 3 naming the package and the status.
    page = "/gamma/netpkg-c1/"
    server.rules.set([{"prefix": page, "status": 500}])
    r = t.stackup("plan", manifest)
    server.rules.clear()
    check_rc(r, 3)
    check_says(r, "netpkg-c1", "500")

    # (d) a page that never answers: the per-attempt timeout turns it into a failure.
    page = "/alpha/netpkg-a3/"
    with server.rules.applied([{"prefix": page, "hang": True}]):
        r = t.stackup("--http-timeout", "2", "plan", manifest)
    check_rc(r, 3)
    check_says(r, "netpkg-a3")


if __name__ == "__main__":
    harness.main(scenario)

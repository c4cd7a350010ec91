"""An apply's retention never removes the generation it names as its undo target. With
`snapshot.keep: 2`: apply (generation 2, built from 1), `stackup rollback` (1 is live again),
apply again (generation 3, built from 1). The second apply keeps the newest two by number, 3
and 2, and without the fix deleted 1: the tree its output names as "previous generation"
and that `stackup rollback` must bring back. Here the previous generation it names is still
in `stackup history`, and `stackup rollback` restores the venv's exact tree digest of before;
a third apply still prunes the generation nothing needs.
"""
import json

import harness
from harness import check, check_rc
import wheels


def apply_json(t, manifest):
    r = t.stackup("apply", manifest, "--json")
    check_rc(r, 0)
    body = json.loads(r.stdout)
    check(body["mode"] == "blue-green" and body["switched"], f"not a blue/green switch: {body}")
    return body


def history(t, venv):
    r = t.stackup("history", "--venv", venv, "--json")
    check_rc(r, 0)
    return json.loads(r.stdout)["generations"]


def scenario(t):
    root = t.tmp / "indexes"
    for version in ("1.0", "2.0", "3.0"):
        wheels.plain(str(root / "pypi" / "pkga"), "pkga", version)
    server = t.serve(root)
    venv = t.make_venv()
    t.uv_install(venv, "pkga==1.0", default_index=server.url("pypi"))

    def manifest(version):
        return t.manifest({
            "version": 1, "name": f"pkga-{version}", "venv": str(venv),
            "indexes": {"pypi": server.url("pypi")},
            "steps": [{"name": "pkga", "index": "pypi", "packages": [f"pkga=={version}"],
                       "expect": {"pkga": {"version": f"=={version}"}}}],
            "snapshot": {"keep": 2},
        }, f"pkga-{version}.yaml")

    first = apply_json(t, manifest("2.0"))
    check_rc(t.stackup("rollback", "--venv", venv), 0)
    check(t.probe(venv)["dists"].get("pkga") == "1.0", "the rollback did not bring pkga 1.0 back")

    before = t.tree(venv)
    second = apply_json(t, manifest("3.0"))
    check(t.probe(venv)["dists"].get("pkga") == "3.0", "the second apply did not install pkga 3.0")
    previous = second["snapshot"]["id"]
    check(previous != first["generation"]["id"], f"the second apply names the rolled-back generation "
                                                  f"{previous} as its previous one")
    check(previous not in second["pruned"], f"the second apply pruned its own undo target {previous}: "
                                            f"{second['pruned']}")
    gens = history(t, venv)
    ids = [g["id"] for g in gens]
    check(previous in ids, f"the previous generation {previous} is gone from history: {ids}")
    live = [g for g in gens if g["live"]]
    check(len(live) == 1 and live[0]["id"] == second["generation"]["id"]
          and live[0]["parent"] == previous, f"history: {gens}")

    r = t.stackup("rollback", "--venv", venv, "--json")
    check_rc(r, 0)
    t.assert_tree(venv, before, "the rollback after the second apply")
    check(t.probe(venv)["dists"].get("pkga") == "1.0", "the rollback did not bring pkga 1.0 back")

    # Retention still bounds the store: a third apply from 1 keeps itself, its parent and the
    # newest other (3), and removes the generation rolled back from first (2).
    third = apply_json(t, manifest("2.0"))
    ids = sorted(g["id"] for g in history(t, venv))
    check(third["pruned"] == [first["generation"]["id"]]
          and ids == sorted([previous, second["generation"]["id"], third["generation"]["id"]]),
          f"the third apply pruned {third['pruned']}, left {ids}")


harness.main(scenario)

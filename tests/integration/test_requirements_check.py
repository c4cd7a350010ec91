"""No new broken requirements, and markers in the plan.
- A step with `deps: false` that installs a release needing a new dependency (as cuda-bindings
  12.9.10 needs cuda-pathfinder) fails with 1 naming the unmet requirement, and the venv is as
  before; the same step with deps leaves every requirement met and commits.
- `allow_unmet: [DIST]` accepts what a step leaves unmet for DIST, on purpose.
- A venv that was already inconsistent does not fail an apply that breaks nothing new.
- A requirement whose marker is false for this venv is planned as skipped and never installed.
"""
import harness
from harness import check, check_rc, check_says
from wheels import build_wheel, plain


def build_indexes(root):
    def at(project):
        return str(root / "deps" / project)

    module = {"cudabind_like/__init__.py": "__version__ = '12.9.0'\n"}
    build_wheel(at("cudabind-like"), "cudabind-like", "12.9.0", module, top_level=["cudabind_like"])
    newer = {"cudabind_like/__init__.py": "__version__ = '12.9.10'\n",
             "cudabind_like/runtime.py": "import cudapath_like\n"}
    build_wheel(at("cudabind-like"), "cudabind-like", "12.9.10", newer, requires=["cudapath-like>=1.0"],
                top_level=["cudabind_like"])
    plain(at("cudapath-like"), "cudapath-like", "1.0")
    plain(at("lonely"), "lonely", "1.0", requires=["absent-dependency>=1"])
    plain(at("six-like"), "six-like", "1.0")
    plain(at("six-like"), "six-like", "2.0")
    return root


def doc(server, venv, packages, deps=True, expect=None):
    step = {"name": "bindings", "index": "deps", "packages": packages, "deps": deps}
    if expect:
        step["expect"] = expect
    return {"version": 1, "name": "deps", "venv": str(venv), "indexes": {"deps": server.url("deps")},
            "steps": [step]}


def scenario(t):
    server = t.serve(str(build_indexes(t.tmp / "indexes")))
    venv = t.make_venv()
    t.uv_install(venv, "cudabind-like==12.9.0", default_index=server.url("deps"))
    before = t.tree(venv)

    no_deps = doc(server, venv, ["cudabind-like==12.9.10"], deps=False,
                  expect={"cudabind-like": {"version": "==12.9.10"}})
    r = t.stackup("apply", t.manifest(no_deps, "no-deps.yaml"))
    check_rc(r, 1)
    check_says(r, "cudabind-like", "cudapath-like>=1.0", "not installed", "add cudabind-like to allow_unmet")
    t.assert_tree(venv, before, "a step that broke a requirement")

    accepted = dict(no_deps, allow_unmet=["cudabind-like"])
    r = t.stackup("apply", t.manifest(accepted, "accepted.yaml"))
    check_rc(r, 0)
    now = t.probe(venv)["dists"]
    check(now.get("cudabind-like") == "12.9.10" and "cudapath-like" not in now,
          f"allow_unmet: the step should install 12.9.10 alone: {now}")

    with_deps = dict(no_deps, steps=[dict(no_deps["steps"][0], deps=True)])
    r = t.stackup("apply", t.manifest(with_deps, "deps.yaml"), "--json")
    check_rc(r, 0)
    step = harness.json.loads(r.stdout)["steps"][0]
    requires = [c for c in step["checks"] if c["field"] == "requires"]
    check(requires and all(c["ok"] for c in requires), f"the requirement check did not run or failed: {requires}")
    dists = t.probe(venv, "cudabind_like.runtime")
    check(dists["dists"].get("cudapath-like") == "1.0", f"cudapath-like not installed: {dists}")
    check("error" not in dists["modules"]["cudabind_like.runtime"], f"runtime import failed: {dists}")

    # Already inconsistent before the apply: `lonely` needs a dist that exists nowhere.
    t.uv_install(venv, "lonely", default_index=server.url("deps"), extra=["--no-deps"])
    t.uv_install(venv, "six-like==1.0", default_index=server.url("deps"))
    r = t.stackup("apply", t.manifest(doc(server, venv, ["six-like==2.0"]), "unrelated.yaml"))
    check_rc(r, 0)
    check(t.probe(venv)["dists"].get("six-like") == "2.0", "six-like was not upgraded")
    r = t.stackup("verify", t.manifest(doc(server, venv, ["six-like==2.0"]), "unrelated.yaml"))
    check_rc(r, 0)
    check_says(r, "warning", "lonely 1.0 requires absent-dependency>=1, but absent-dependency is not installed")

    # A marker false for this venv: planned as skipped, never installed.
    skipped = doc(server, venv, ["six-like==2.0", "cudapath-like; python_version < '3'"])
    venv_before = t.tree(venv)
    r = t.stackup("plan", t.manifest(skipped, "marker.yaml"))
    check_rc(r, 0)
    check_says(r, "cudapath-like", "skip", "marker is false for this venv")
    t.assert_tree(venv, venv_before, "plan changed the venv")
    plan = t.tmp / "marker-plan.json"
    check_rc(t.stackup("plan", t.manifest(skipped, "marker.yaml"), "--out", plan), 0)
    r = t.stackup("apply", plan)
    check_rc(r, 0)
    check(t.probe(venv)["dists"].get("cudapath-like") == "1.0", "cudapath-like changed although skipped")


harness.main(scenario)

"""A multi-step upgrade is judged by where it ends (README, "Requirements between steps").
Two real shapes, in venvs made by `python3 -m venv` and filled by pip:
- numpy -> pandas: step 1 upgrades numpy-like to 2.2.6, which the installed pandas-like 2.1.4
  forbids (numpy-like<2); step 2 replaces pandas-like with 2.2.3, which accepts it. The
  apply exits 0 (blue/green and in place) and says what step 2 repaired; without step 2 it
  exits 1 naming pandas-like, the live venv as before; with a step after it that cannot repair
  it, it fails after step 1 and runs nothing more; `plan` and `apply --dry-run` say which later
  step repairs what.
- torch -> sglang -> sgl-kernel (SGLang's documented order): after step 1 the old sglang-like
  and the old sgl-kernel-like pin the old torch-like, after step 2 the new sglang-like pins a
  kernel step 3 brings. Exit 0, every new version importable.
- A venv already broken before the apply still applies.
"""
import harness
from harness import check, check_rc, check_says, run
from wheels import plain

OLD_PANDAS_PIN = "numpy-like<2,>=1.23.2"


def build_indexes(root):
    def at(project):
        return str(root / "pypi" / project)

    plain(at("numpy-like"), "numpy-like", "1.26.4")
    plain(at("numpy-like"), "numpy-like", "2.2.6")
    plain(at("pandas-like"), "pandas-like", "2.1.4", requires=[OLD_PANDAS_PIN])
    plain(at("pandas-like"), "pandas-like", "2.2.3", requires=["numpy-like>=1.26.0"])
    plain(at("scipy-like"), "scipy-like", "1.13.1", requires=["numpy-like<2.3,>=1.22.4"])
    plain(at("six-like"), "six-like", "1.0")
    plain(at("six-like"), "six-like", "2.0")
    plain(at("lonely"), "lonely", "1.0", requires=["absent-dependency>=1"])
    plain(at("torch-like"), "torch-like", "2.9.1")
    plain(at("torch-like"), "torch-like", "2.11.0")
    plain(at("sgl-kernel-like"), "sgl-kernel-like", "0.3.16", requires=["torch-like==2.9.1"])
    plain(at("sgl-kernel-like"), "sgl-kernel-like", "0.3.21", requires=["torch-like==2.11.0"])
    plain(at("sglang-like"), "sglang-like", "0.5.5", requires=["torch-like==2.9.1", "sgl-kernel-like==0.3.16"])
    plain(at("sglang-like"), "sglang-like", "0.5.6", requires=["torch-like==2.11.0", "sgl-kernel-like==0.3.21"])
    return root


def pip_venv(t, server, name, *packages):
    """A venv as most users make one: python3 -m venv (with pip), then pip install."""
    venv = t.tmp / name
    r = run(["python3", "-m", "venv", venv])
    check(r.rc == 0, "python3 -m venv failed", r)
    r = run([venv / "bin" / "python", "-m", "pip", "install", "--disable-pip-version-check", "--no-cache-dir",
             "--index-url", server.url("pypi"), *packages])
    check(r.rc == 0, "pip install failed", r)
    return venv


def doc(server, venv, steps, **extra):
    return {"version": 1, "name": "between", "venv": str(venv), "indexes": {"pypi": server.url("pypi")},
            "default_index": "pypi", "steps": [{"index": "pypi", **s} for s in steps], **extra}


NUMPY = {"name": "numpy", "packages": ["numpy-like==2.2.6"], "deps": False,
         "expect": {"numpy-like": {"version": "==2.2.6"}}}
PANDAS = {"name": "pandas", "packages": ["pandas-like==2.2.3"], "deps": False,
          "expect": {"pandas-like": {"version": "==2.2.3"}}}


def numpy_then_pandas(t, server):
    venv = pip_venv(t, server, "pandas-venv", "numpy-like==1.26.4", "pandas-like==2.1.4", "scipy-like==1.13.1")
    before = t.tree(venv)
    two_steps = t.manifest(doc(server, venv, [NUMPY, PANDAS]), "numpy-pandas.yaml")

    r = t.stackup("plan", two_steps)
    check_rc(r, 0)
    check_says(r, "between steps:", "after step 'numpy': pandas-like 2.1.4 requires numpy-like<2,>=1.23.2, "
               "but numpy-like 2.2.6 is installed", "step 'pandas' installs pandas-like")
    r = t.stackup("apply", two_steps, "--dry-run", "--json")
    check_rc(r, 0)
    between = harness.json.loads(r.stdout)["between_steps"]
    check([(b["dist"], b["after_step"], b["repaired_by"]) for b in between] == [("pandas-like", "numpy", "pandas")],
          f"the dry run's between_steps: {between}")
    t.assert_tree(venv, before, "plan and apply --dry-run")

    # Only step 1: the last step is judged strictly, and the venv is left as it was.
    r = t.stackup("apply", t.manifest(doc(server, venv, [NUMPY]), "numpy-only.yaml"))
    check_rc(r, 1)
    check_says(r, "pandas-like 2.1.4 requires numpy-like<2,>=1.23.2, but numpy-like 2.2.6 is installed",
               "add pandas-like to allow_unmet")
    t.assert_tree(venv, before, "a last step that left pandas-like broken")

    # A later step that names neither dist and installs no dependencies cannot repair it: the
    # apply fails after step 1, and step 2 never runs.
    unrelated = {"name": "six", "packages": ["six-like==2.0"], "deps": False}
    r = t.stackup("apply", t.manifest(doc(server, venv, [NUMPY, unrelated]), "no-repair.yaml"), "--json")
    check_rc(r, 1)
    steps = harness.json.loads(r.stdout)["steps"]
    check([s["status"] for s in steps] == ["verification failed", "not run"], f"statuses: {steps}")
    failing = [b for b in steps[0]["broken_requirements"] if b["fails"]]
    check([b["dist"] for b in failing] == ["pandas-like"] and "no later step can repair it" in failing[0]["message"],
          f"step 1's broken requirements: {steps[0]['broken_requirements']}")
    check(harness.json.loads(r.stdout)["repaired_between_steps"] == [], "a step that never ran repaired something")
    t.assert_tree(venv, before, "a break no later step could repair")

    # Both steps: exit 0, the new versions importable, the repair said.
    r = t.stackup("apply", two_steps, "--json")
    check_rc(r, 0)
    report = harness.json.loads(r.stdout)
    first = report["steps"][0]["broken_requirements"]
    check([(b["dist"], b["fails"], b["repaired_by"]) for b in first] == [("pandas-like", False, "pandas")],
          f"step 1's broken requirements: {first}")
    check(report["steps"][1]["broken_requirements"] == [], f"step 2: {report['steps'][1]}")
    repaired = report["repaired_between_steps"]
    check([r["message"] for r in repaired] ==
          [f"pandas-like 2.1.4 requires {OLD_PANDAS_PIN}, but numpy-like 2.2.6 is installed "
           "(repaired by step 'pandas')"], f"repaired_between_steps: {repaired}")
    now = t.probe(venv, "numpy_like", "pandas_like", "scipy_like")
    check(now["modules"]["numpy_like"].get("version") == "2.2.6" and
          now["modules"]["pandas_like"].get("version") == "2.2.3" and
          now["dists"].get("scipy-like") == "1.13.1", f"after the two steps: {now}")
    return venv


def in_place(t, server):
    venv = pip_venv(t, server, "in-place-venv", "numpy-like==1.26.4", "pandas-like==2.1.4")
    r = t.stackup("apply", t.manifest(doc(server, venv, [NUMPY, PANDAS]), "in-place.yaml"),
                  "--snapshot-strategy", "copy")
    check_rc(r, 0)
    check_says(r, "the steps ran in the venv itself", "broken for now",
               "(to be repaired by step 'pandas', which installs pandas-like)",
               "between steps: pandas-like 2.1.4 requires numpy-like<2,>=1.23.2, but numpy-like 2.2.6 is installed "
               "(repaired by step 'pandas')")
    dists = t.probe(venv)["dists"]
    check(dists.get("numpy-like") == "2.2.6" and dists.get("pandas-like") == "2.2.3", f"in place: {dists}")


def torch_sglang_kernel(t, server):
    venv = pip_venv(t, server, "sglang-venv", "sglang-like==0.5.5")
    check(t.probe(venv)["dists"].get("torch-like") == "2.9.1", "pip did not bring torch-like 2.9.1")
    steps = [
        {"name": "torch", "packages": ["torch-like==2.11.0"], "expect": {"torch-like": {"version": "==2.11.0"}}},
        {"name": "sglang", "packages": ["sglang-like==0.5.6"], "deps": False,
         "expect": {"sglang-like": {"version": "==0.5.6"}}},
        {"name": "sgl-kernel", "packages": ["sgl-kernel-like==0.3.21"], "deps": False,
         "expect": {"sgl-kernel-like": {"version": "==0.3.21"}}},
    ]
    r = t.stackup("apply", t.manifest(doc(server, venv, steps), "sglang.yaml"), "--json")
    check_rc(r, 0)
    report = harness.json.loads(r.stdout)
    # (sgl-kernel-like's pin on the old torch-like is still broken after step 2: seen twice)
    seen = sorted({(b["dist"], b["required"], b["repaired_by"])
                   for s in report["steps"] for b in s["broken_requirements"]})
    check(seen == [("sgl-kernel-like", "torch-like", "sgl-kernel"), ("sglang-like", "sgl-kernel-like", "sgl-kernel"),
                   ("sglang-like", "torch-like", "sglang")], f"broken between steps: {seen}")
    check(len(report["repaired_between_steps"]) == 3, f"repaired: {report['repaired_between_steps']}")
    now = t.probe(venv, "torch_like", "sglang_like", "sgl_kernel_like")["modules"]
    versions = {m: now[m].get("version") for m in now}
    check(versions == {"torch_like": "2.11.0", "sglang_like": "0.5.6", "sgl_kernel_like": "0.3.21"},
          f"after torch -> sglang -> sgl-kernel: {versions}")


def already_broken(t, server, venv):
    """The venv of numpy_then_pandas, with a dist whose dependency exists nowhere."""
    t.uv_install(venv, "lonely==1.0", default_index=server.url("pypi"), extra=["--no-deps"])
    t.uv_install(venv, "six-like==1.0", default_index=server.url("pypi"))
    six = {"name": "six", "packages": ["six-like==2.0"], "expect": {"six-like": {"version": "==2.0"}}}
    r = t.stackup("apply", t.manifest(doc(server, venv, [six]), "already-broken.yaml"), "--json")
    check_rc(r, 0)
    found = [c["found"] for c in harness.json.loads(r.stdout)["steps"][0]["checks"] if c["field"] == "requires"]
    check(found == ["none newly broken (1 already broken before the apply, left as they were)"],
          f"the requirements check: {found}")
    check(t.probe(venv)["dists"].get("six-like") == "2.0", "six-like was not upgraded")


def scenario(t):
    server = t.serve(str(build_indexes(t.tmp / "indexes")))
    venv = numpy_then_pandas(t, server)
    in_place(t, server)
    torch_sglang_kernel(t, server)
    already_broken(t, server, venv)


harness.main(scenario)

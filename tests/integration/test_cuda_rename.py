"""The CUDA 12 -> 13 move with NVIDIA's renamed wheels (nvidia-cuda-runtime-cu12 -> nvidia-cuda-runtime
13.x): torch +cu130 brings the new names and uv leaves the old ones installed.
- Without `remove:`, plan and apply --dry-run refuse with 3 before anything is touched, naming every
  leftover and the exact `remove:` line that fixes it.
- With `remove: ["nvidia-*-cu12"]` one apply ends with no -cu12 dist (read by the venv's own python),
  verify passes, and a rollback brings the old wheels back byte for byte.
- A later step whose dependency drags a removed wheel back fails the run (exit 1, expected absent)
  and the venv is as before.
- With no target CUDA, plan warns that CUDA 12 and 13 builds would stand side by side, and
  verify never claims "no mixed CUDA builds": it says what it saw.
Venvs made both ways users make them: uv venv, and python -m venv with pip.
"""
import harness
from harness import check, check_rc, check_says
from wheels import (CUBLAS_CU12, RUNTIME_13, RUNTIME_CU12, TORCH_CU128, TORCH_CU130, build_rename_stack)

CU12 = {"nvidia-cuda-runtime-cu12": RUNTIME_CU12, "nvidia-cublas-cu12": CUBLAS_CU12}


def rename_doc(server, venv, remove=True, later_steps=()):
    torch_expect = {"version": ">=2.11.0.dev0", "local": "cu130"}
    step = {"name": "torch", "index": "pytorch", "packages": ["torch"], "prerelease": True,
            "expect": {"torch": torch_expect, "nvidia-cuda-runtime": {"version": ">=13"}}}
    if remove:
        step["remove"] = ["nvidia-*-cu12"]
    return {"version": 1, "name": "rename", "venv": str(venv),
            "indexes": {"pytorch": server.url("nv-cu130"), "pypi": server.url("nv-pypi")},
            "default_index": "pypi", "steps": [step, *later_steps]}


def dists(t, venv):
    return t.probe(venv)["dists"]


def cu128_venv(t, server, name, maker):
    venv = t.tmp / name
    if maker == "uv":
        r = t.uv("venv", venv)
        check(r.rc == 0, f"uv venv failed:\n{r}")
    else:
        r = harness.run([harness.sys.executable, "-m", "venv", venv], echo=False)
        check(r.rc == 0, f"python -m venv failed:\n{r}")
    t.uv_install(venv, f"torch=={TORCH_CU128}", index=server.url("nv-cu128"), default_index=server.url("nv-pypi"))
    installed = dists(t, venv)
    for name, version in CU12.items():
        check(installed.get(name) == version, f"setup: {name} {version} not in {installed}")
    return venv


def refuses_without_remove(t, server, venv, before):
    manifest = t.manifest(rename_doc(server, venv, remove=False), "no-remove.yaml")
    for argv in (["plan", manifest], ["apply", "--dry-run", manifest], ["apply", manifest]):
        r = t.stackup(*argv)
        check_rc(r, 3)
        check_says(r, "nvidia-cuda-runtime-cu12", "nvidia-cublas-cu12", "another CUDA than cu130",
                   "step 'torch':  remove: [nvidia-cublas-cu12, nvidia-cuda-runtime-cu12]", "allow_mixed")
        t.assert_tree(venv, before, f"stackup {argv[0]} without remove: changed the venv")


def applies_with_remove(t, server, venv, before, saved_plan):
    manifest = t.manifest(rename_doc(server, venv), "remove.yaml")
    r = t.stackup("plan", manifest, "--json")
    check_rc(r, 0)
    rows = harness.json.loads(r.stdout)["steps"][0]["packages"]
    removed = sorted(p["name"] for p in rows if p["change"] == "remove")
    check(removed == sorted(CU12), f"plan --json lists the removals: {removed}")
    r = t.stackup("plan", manifest)
    check_says(r, "nvidia-cuda-runtime-cu12", "remove", "(remove: nvidia-*-cu12)")
    t.assert_tree(venv, before, "stackup plan changed the venv")

    r = t.stackup("apply", "--dry-run", manifest)
    check_rc(r, 0)
    check_says(r, "pip uninstall", "--dry-run nvidia-cublas-cu12 nvidia-cuda-runtime-cu12", "Would uninstall")
    t.assert_tree(venv, before, "apply --dry-run with remove: changed the venv")

    if saved_plan:   # apply PLAN: the removals the plan saved, exactly
        plan = t.tmp / f"{venv.name}-plan.json"
        check_rc(t.stackup("plan", manifest, "--out", plan), 0)
        saved = harness.json.loads(plan.read_text())["steps"][0]
        check(sorted(saved["remove"]) == sorted(CU12), f"the saved plan's removals: {saved.get('remove')}")
        r = t.stackup("apply", plan)
    else:
        r = t.stackup("apply", manifest)
    check_rc(r, 0)
    after = dists(t, venv)
    left = [name for name in after if name.endswith("-cu12")]
    check(not left, f"apply left CUDA 12 wheels: {left}")
    check(after.get("nvidia-cuda-runtime") == RUNTIME_13, f"nvidia-cuda-runtime 13 missing: {after}")
    check(after.get("torch") == TORCH_CU130, f"torch is {after.get('torch')}")
    check(not list(venv.glob("lib/python3*/site-packages/nvidia/cuda_runtime")), "the cu12 files are still there")
    r = t.stackup("verify", manifest)
    check_rc(r, 0)
    check_says(r, "only cu130 builds")

    r = t.stackup("rollback", venv=venv)
    check_rc(r, 0)
    t.assert_tree(venv, before, "rollback after the rename")
    back = dists(t, venv)
    for name, version in CU12.items():
        check(back.get(name) == version, f"rollback: {name} {version} not back: {back}")


def later_step_drags_one_back(t, server, venv, before):
    later = {"name": "old", "index": "pypi", "packages": ["oldcuda"]}
    r = t.stackup("apply", t.manifest(rename_doc(server, venv, later_steps=[later]), "dragged.yaml"))
    check_rc(r, 1)
    check_says(r, "nvidia-cuda-runtime-cu12", "expected absent (remove: nvidia-*-cu12)")
    t.assert_tree(venv, before, "a failed apply after a removal")


def no_target_says_what_it_saw(t, server, venv):
    doc = rename_doc(server, venv, remove=False)
    doc["steps"][0]["expect"] = {"torch": {"version": ">=2"}}   # no local label, no cuda: no target
    r = t.stackup("plan", t.manifest(doc, "no-target.yaml"))
    check_rc(r, 0)   # nothing to judge against: a warning, not a refusal
    check_says(r, "warning: no target CUDA is given", "CUDA 12: nvidia-cublas-cu12")
    r = t.stackup("verify", t.manifest(doc, "no-target.yaml"))
    check_rc(r, 0)
    check_says(r, "not judged", "CUDA 12: ", "nvidia-cuda-runtime-cu12 " + RUNTIME_CU12)
    check("no other CUDA build" not in r.output, "verify claimed no mixed builds without a target")


def scenario(t):
    server = t.serve(build_rename_stack(str(t.tmp / "indexes")))
    for maker in ("uv", "pip"):
        venv = cu128_venv(t, server, f"venv-{maker}", maker)
        before = t.tree(venv)
        refuses_without_remove(t, server, venv, before)
        applies_with_remove(t, server, venv, before, saved_plan=maker == "uv")
        later_step_drags_one_back(t, server, venv, before)
        no_target_says_what_it_saw(t, server, venv)


harness.main(scenario)

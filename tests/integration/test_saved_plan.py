"""Saved plans: `plan --out FILE` writes a versioned JSON plan (manifest and venv digests,
every chosen file with its URL and sha256, each step's exact uv command) and touches nothing;
`apply FILE` installs exactly that plan, each file checked by uv against the plan's sha256:
a wheel swapped on the index since the plan was made fails the install (exit 4; it ran in the
next generation beside the venv, which is discarded: "nothing was changed", and the venv's tree and
root directory are as before, its snapshot the only one left).
A plan whose venv or manifest changed since is refused with 3, naming the change.
The PyTorch-like index answers in PEP 691 JSON here, so both page shapes are on the path.
"""
import hashlib
import json
import os
import shutil

import harness
import wheels
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130, VISION_CU130


def sha256_of(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_plan_file(t, plan_path, index_root, venv):
    doc = json.loads(plan_path.read_text())
    check(doc["schema"] == 1 and doc["kind"] == "stackup-plan", f"schema: {doc.get('schema')}")
    check(doc["venv"]["path"] == str(venv.resolve()), f"venv: {doc['venv']}")
    check(doc["venv"]["distributions"].get("torch") == TORCH_CU128, f"dists: {doc['venv']}")
    check(len(doc["venv"]["digest"]) == 64 and len(doc["manifest"]["sha256"]) == 64, "digests")
    torch = doc["steps"][0]["packages"][0]
    wheel = next((index_root / "cu130" / "torch").glob("*.whl"))
    check(torch["version"] == TORCH_CU130 and torch["filename"] == wheel.name, f"torch: {torch}")
    check(torch["sha256"] == sha256_of(wheel), f"sha256 {torch['sha256']} is not the file's")
    check(torch["url"].endswith(wheel.name.replace("+", "%2B")), f"url: {torch['url']}")
    check(torch["change"] == "upgrade" and torch["installed"] == TORCH_CU128, f"change: {torch}")
    step = doc["steps"][0]
    check(f"torch=={TORCH_CU130} --hash=sha256:{torch['sha256']}" in step["requirements"],
          f"requirements: {step['requirements']}")
    check("--requirements" in step["argv"] and "--reinstall-package" in step["argv"], f"argv: {step['argv']}")
    check(step["env"].get("VIRTUAL_ENV") == str(venv.resolve()), f"env: {step['env']}")
    return doc


def scenario(t):
    server = t.serve_stack()
    index_root = t.tmp / "indexes"
    (index_root / "cu130" / ".format").write_text("json\n")
    venv = t.cu128_venv(server)
    before = t.tree(venv)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    plan_path = t.tmp / "plan.json"

    r = t.stackup("plan", manifest, "--out", plan_path)
    check_rc(r, 0)
    check_says(r, "plan saved to", "stackup apply")
    check(any(q.startswith("/cu130/") for q in server.requests("/cu130/torch/")), "torch's page was not asked")
    t.assert_tree(venv, before, "after plan --out")
    check(not list(t.state_dir.glob("*/snapshots/*")), "plan took a snapshot")
    check_plan_file(t, plan_path, index_root, venv)

    # A wheel swapped on the index after planning: uv checks the plan's sha256 and refuses.
    wheel = next((index_root / "cu130" / "torch").glob("*.whl"))
    original = t.tmp / "torch-original.whl"
    shutil.copy2(wheel, original)
    rebuilt = wheels.torch_like(str(t.tmp / "rebuilt"), "torch", TORCH_CU130, "13.0",
                                requires=["filelock>=3.1"], requires_python=">=3.9")
    shutil.copy(rebuilt, wheel)
    check(sha256_of(wheel) != sha256_of(original), "the rebuilt wheel has the same bytes")
    root = os.stat(venv).st_ino
    r = t.stackup("apply", plan_path)
    check_rc(r, 4)
    check_says(r, "hash", f"nothing was changed in {venv}")
    t.assert_tree(venv, before, "after the swapped wheel was refused")
    check(os.stat(venv).st_ino == root, "the refused apply replaced the venv's root directory")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
    left = [p.name for p in t.state_dir.glob("*/snapshots/*") if (p / "snapshot.json").exists()]
    check(len(left) == 1, f"the refused apply should leave only its base snapshot: {left}")
    shutil.copy2(original, wheel)

    # The plan as made: exactly its files, without asking the indexes again.
    def page_asks():
        return sum(1 for q in server.requests("/cu130/torch/") if q.split("?")[0] == "/cu130/torch/")
    asked = page_asks()
    r = t.stackup("apply", plan_path)
    check_rc(r, 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check(t.probe(venv)["dists"].get("torchvision") == VISION_CU130, "torchvision not upgraded")
    # uv reads the page once to find the file; stackup did not plan again.
    check(page_asks() - asked == 1, f"torch's page was asked {page_asks() - asked} times, not once (by uv)")

    # The venv moved on since the plan: refused, naming the change; nothing touched.
    after = t.tree(venv)
    r = t.stackup("apply", plan_path)
    check_rc(r, 3)
    check_says(r, "stale plan", f"torch changed from {TORCH_CU128} to {TORCH_CU130}")
    t.assert_tree(venv, after, "after a stale plan")

    # The manifest edited since the plan: refused too.
    r = t.stackup("rollback", venv=venv)
    check_rc(r, 0)
    t.assert_tree(venv, before, "after rollback")
    r = t.stackup("plan", manifest, "--out", plan_path)
    check_rc(r, 0)
    manifest.write_text(manifest.read_text() + "# edited\n")
    r = t.stackup("apply", plan_path)
    check_rc(r, 3)
    check_says(r, "stale plan", "manifest", "changed")
    t.assert_tree(venv, before, "after a plan of an edited manifest")

    # Not a plan for this venv.
    r = t.stackup("apply", plan_path, venv=t.make_venv("other"))
    check_rc(r, 2)
    check_says(r, "is a plan for the venv")


harness.main(scenario)

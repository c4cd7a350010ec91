"""`stackup plan` and apply's preflight prove every wheel exists before anything is touched.
- plan on the cu128 venv: exit 0, the table shows torch cu128 -> the cu130 nightly (upgrade)
  and the file it will install, and the venv's tree is unchanged;
- a cp312-only wheel for this cp311 venv: plan and apply exit 3 naming cp312, apply takes
  no snapshot and the tree is unchanged;
- a package asked of an index that lacks it: exit 3, "not on index 'pytorch' (404)" and
  where it is instead;
- an index page that always answers 500: exit 3 naming the status, after retrying;
- apply installs exactly the planned pin (seen in its -v argv) and the venv holds it.
"""
import os
import sys

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU130, build_wheel


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    minor = sys.version_info[1]
    before = t.tree(venv)

    r = t.stackup("plan", t.manifest(t.upgrade_doc(server, venv), "ok.yaml"))
    check_rc(r, 0)
    check_says(r, "torch", "2.10.0+cu128", TORCH_CU130, "upgrade", "torch-" + TORCH_CU130)
    t.assert_tree(venv, before, "after stackup plan")

    other = minor + 1
    build_wheel(os.path.join(t.tmp, "indexes", "cu130", "onlynext"), "onlynext", "1.0",
                {"onlynext/__init__.py": ""}, tag=f"cp3{other}-cp3{other}-manylinux_2_17_x86_64")
    doc = t.upgrade_doc(server, venv)
    doc["steps"][0]["packages"] = ["torch", "torchvision", "onlynext"]
    wrong_python = t.manifest(doc, "wrong-python.yaml")
    for command in ("plan", "apply"):
        r = t.stackup(command, wrong_python)
        check_rc(r, 3)
        check_says(r, "onlynext", f"cp3{other}", f"cp3{minor}")
    check(not list(t.state_dir.glob("*/snapshots/*")), "a failed preflight took a snapshot")
    t.assert_tree(venv, before, "after a failed preflight")

    doc = t.upgrade_doc(server, venv)
    doc["steps"][0]["packages"] = ["torch", "sgl-kernel"]
    doc.pop("default_index")
    r = t.stackup("plan", t.manifest(doc, "wrong-index.yaml"))
    check_rc(r, 3)
    check_says(r, "sgl-kernel", "not on index 'pytorch' (404)", "'sglang'")

    server.rules.set([{"prefix": "/cu130/torchvision/", "status": 500}])
    r = t.stackup("plan", t.manifest(t.upgrade_doc(server, venv), "broken.yaml"))
    server.rules.clear()
    check_rc(r, 3)
    check_says(r, "torchvision", "500")
    check(len(server.requests("/cu130/torchvision/")) >= 3, "a 500 was not retried", r)

    r = t.stackup("apply", "-v", t.manifest(t.upgrade_doc(server, venv), "apply.yaml"))
    check_rc(r, 0)
    check_says(r, f"torch=={TORCH_CU130}")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")


harness.main(scenario)

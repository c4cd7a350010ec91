"""An installer no-op is named as such: a step whose requirement uv skips (its marker is
false on this interpreter) leaves the cu128 torch as it was; uv says only "Checked" or
"Audited", and the step's expectation fails. stackup exits 4 naming the installer no-op
and torch, and the venv is restored exactly.
"""
import harness
from harness import check_module, check_rc, check_says
from wheels import TORCH_CU128


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    doc = t.upgrade_doc(server, venv)
    torch_step = doc["steps"][0]
    doc["steps"] = [dict(torch_step, packages=["torch; python_version < '3.0'"],
                         expect={"torch": torch_step["expect"]["torch"]})]
    manifest = t.manifest(doc)
    before = t.tree(venv)

    r = t.stackup("apply", manifest)
    check_rc(r, 4)
    check_says(r, "installer no-op", "torch", TORCH_CU128)
    t.assert_tree(venv, before, "after the rollback")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

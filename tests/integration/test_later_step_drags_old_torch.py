"""(d) A later step whose package pins torch==2.10.0+cu128 (from the plain index) drags the
old torch back: step 1's expectation fails after that step, exit 1, and the venv is
restored exactly (tree digest), still the cu128 stack.
"""
import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    oldpin = {"name": "oldpin", "index": "pypi", "packages": ["oldpin"],
              "expect": {"oldpin": {"version": "==1.0"}}}
    manifest = t.manifest(t.upgrade_doc(server, venv, later_steps=[oldpin]))
    before = t.tree(venv)

    r = t.stackup("apply", manifest)
    check_rc(r, 1)
    check_says(r, "torch", "cu130", "oldpin")
    # Step 1 installed the cu130 torch; the oldpin step really fetched the cu128 torch back.
    check(server.requests("/cu130/torch/torch-"), "the cu130 torch was never fetched", r)
    check(server.requests("/pypi/torch/torch-2.10.0"), "the oldpin step never pulled torch", r)
    t.assert_tree(venv, before, "after the rollback")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

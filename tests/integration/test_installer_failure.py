"""(f) An installer failure after a successful step: the last step's package depends on a
dist that no index has, so uv fails; stackup exits 4 and restores the venv exactly
(tree digest), though step 1 had already installed the cu130 torch.
"""
import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    broken = {"name": "brokendep", "index": "pypi", "packages": ["brokendep"]}
    manifest = t.manifest(t.upgrade_doc(server, venv, later_steps=[broken]))
    before = t.tree(venv)

    r = t.stackup("apply", manifest)
    check_rc(r, 4)
    check_says(r, "brokendep")
    check(server.requests("/cu130/torch/torch-"), "step 1 never fetched the cu130 torch", r)
    t.assert_tree(venv, before, "after the rollback")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

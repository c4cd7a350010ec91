"""(c) An expectation no index can meet (torch cuda "13.1") fails the run after the install:
exit 1, the message names torch, cuda, 13.1 and 13.0, and the venv is byte for byte what
it was before (tree digest), still the cu128 stack.
"""
import harness
from harness import check_module, check_rc, check_says
from wheels import TORCH_CU128


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv, torch_cuda="13.1"))
    before = t.tree(venv)

    r = t.stackup("apply", manifest)
    check_rc(r, 1)
    check_says(r, "torch", "cuda", "13.1", "13.0")
    # The cu130 wheel really was installed before verification failed.
    harness.check(server.requests("/cu130/torch/torch-"), "the cu130 torch was never fetched", r)
    t.assert_tree(venv, before, "after the rollback")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

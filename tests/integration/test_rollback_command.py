"""(g) `stackup rollback` after a successful apply restores the pre-apply tree exactly."""
import harness
from harness import check, check_module, check_rc
from wheels import TORCH_CU128, TORCH_CU130


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    before = t.tree(venv)

    check_rc(t.stackup("apply", manifest), 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check(t.tree(venv) != before, "the apply changed nothing")

    check_rc(t.stackup("rollback", venv=venv), 0)
    t.assert_tree(venv, before, "after stackup rollback")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

"""(a) The cu128 -> cu130 upgrade: `stackup apply` installs torch and torchvision from the
PyTorch-like index and sgl-kernel from its own index with deps: false (its declared
dependency exists nowhere, so only --no-deps installs it), and every package, imported,
reports the cu130 build; `stackup verify` then passes and touches nothing.
"""
import harness
from harness import check, check_module, check_rc
from wheels import MISSING_DEP, SGL_KERNEL_CU130, TORCH_CU128, TORCH_CU130, VISION_CU130


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")

    check_rc(t.stackup("apply", manifest), 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check_module(t.module(venv, "torchvision"), VISION_CU130, "13.0")
    check_module(t.module(venv, "sgl_kernel"), SGL_KERNEL_CU130, "13.0")
    dists = t.probe(venv)["dists"]
    check(MISSING_DEP not in dists and dists.get("filelock") == "3.20.0",
          f"unexpected distributions: {dists}")

    before = t.tree(venv)
    check_rc(t.stackup("verify", manifest, state=False), 0)
    t.assert_tree(venv, before, "stackup verify changed the venv")


harness.main(scenario)

"""(e) A mixed env (torch cu130, torchvision cu128): `stackup verify` exits 1 naming
torchvision, both when torchvision has an expectation and when only the whole-env scan
can see it; allow_mixed: [torchvision] lets it pass. verify never touches the venv.
"""
import harness
from harness import check_rc, check_says
from wheels import TORCH_CU130, VISION_CU128


def scenario(t):
    server = t.serve_stack()
    venv = t.make_venv()
    t.uv_install(venv, f"torch=={TORCH_CU130}", index=server.url("cu130"),
                 default_index=server.url("pypi"))
    t.uv_install(venv, f"torchvision=={VISION_CU128}", default_index=server.url("cu128"),
                 extra=["--no-deps"])
    before = t.tree(venv)

    full = t.upgrade_doc(server, venv)
    step = full["steps"][0]                     # torch + torchvision, both expected cu130
    full["steps"] = [step]
    torch_only = dict(full, steps=[dict(step, expect={"torch": step["expect"]["torch"]})])
    allowed = dict(torch_only, allow_mixed=["torchvision"])

    for name, doc, rc in (("full", full, 1), ("scan", torch_only, 1), ("allowed", allowed, 0)):
        manifest = t.manifest(doc, f"{name}.yaml")
        r = t.stackup("verify", manifest, state=False)
        check_rc(r, rc)
        if rc:
            check_says(r, "torchvision", "cu128")
        t.assert_tree(venv, before, f"stackup verify ({name}) changed the venv")


harness.main(scenario)

"""(b) The trap is real: in a venv holding the cu128 stack, a plain
`uv pip install torch --index-url <cu130>` (with or without --prerelease allow, and for the
whole step's packages) is a no-op, though the cu130 build is right there on that index:
--reinstall-package gets it.
"""
import re

import harness
from harness import check, check_module
from wheels import TORCH_CU128, TORCH_CU130


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server, "twin")
    cu130 = server.url("cu130")

    for packages, extra in ((["torch"], []), (["torch"], ["--prerelease", "allow"]),
                            (["torch", "torchvision"], ["--prerelease", "allow"])):
        r = t.uv("pip", "install", *packages, "--index-url", cu130, *extra, venv=venv)
        check(r.rc == 0, "uv failed", r)
        # uv 0.10.10 renamed "Audited N packages" to "Checked N packages".
        check(re.search(rf"(Checked|Audited) {len(packages)} packages?", r.output),
              "uv did not report a no-op", r)
        check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")

    # The cu130 wheel was on the index all along: asking uv to drop the installed copy gets it.
    r = t.uv("pip", "install", "torch", "--index-url", cu130, "--prerelease", "allow",
             "--reinstall-package", "torch", venv=venv)
    check(r.rc == 0, "uv --reinstall-package failed", r)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")


harness.main(scenario, needs_stackup=False)

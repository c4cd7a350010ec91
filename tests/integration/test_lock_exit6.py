"""(i) Two runs on one venv never interleave: while a first apply holds the lock (its uv is
held inside the index server, fetching the cu130 torch), a second apply exits 6 and
touches nothing; once released, the first apply completes.
"""

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU130


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    first, log = t.held_apply(server, manifest, "/cu130/torch/torch-", "first-apply.log")
    try:
        before = t.tree(venv)

        second = t.stackup("apply", manifest)
        check_rc(second, 6)
        check_says(second, "lock")
        t.assert_tree(venv, before, "the locked-out apply")
    finally:
        server.rules.clear()                         # releases the held request
        rc = first.wait(timeout=harness.CHILD_TIMEOUT_S)
        log.seek(0)
        print(f"--- first apply (rc={rc})\n{log.read()}", flush=True)
    check(rc == 0, f"the first apply failed once released (rc {rc})")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")


harness.main(scenario)

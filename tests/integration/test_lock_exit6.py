"""(i) Two runs on one venv never interleave: while a first apply holds the lock (its uv is
held inside the index server, fetching the cu130 torch), a second apply exits 6 and
touches nothing; once released, the first apply completes.
"""
import subprocess
import time

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU130

WAIT_S = 120   # a hang guard for reaching the held request; nothing asserts on time


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    held = "/cu130/torch/torch-"
    server.rules.set([{"prefix": held, "hang": True}])

    argv = [harness.find_stackup(), "apply", manifest, "--state-dir", t.state_dir]
    log = open(t.tmp / "first-apply.log", "w+")
    first = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT,
                             env=harness.child_env({"STACKUP_UV": t.uv_path}))
    try:
        deadline = time.monotonic() + WAIT_S
        while not server.requests(held) and first.poll() is None:
            check(time.monotonic() < deadline, "the first apply never reached the index")
            time.sleep(0.05)
        check(first.poll() is None, f"the first apply ended early (rc {first.returncode})")
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

"""A running process is never mixed by a switch (PRODUCT.md), with the real uv and a real python that
has imported torch from the venv and stays (a server):
- `apply --dry-run` says the switch would not happen now, naming the process (exit 0);
- `apply` builds and verifies, does not switch: exit 8, the PID and what to do said, the live tree
  unchanged (digest), the generation staged; `switch` and `rollback` refuse too (exit 8, --json names
  the process), touching nothing;
- `switch --switch-running` switches and names the process as needing a restart: the server, importing
  torchvision now, holds torch cu128 + torchvision cu130 (the mix, said); `rollback --switch-running`
  goes back;
- `apply --wait-running 120` waits: once the process ends, it switches (exit 0);
- the same through a symlinked venv path, and in place (exit 8, nothing touched);
- a shell `cd`'d into the venv that runs stackup does not block it (an ancestor's working directory).
"""
import json
import os
import signal
import subprocess
import time

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130

# torch's file stays mapped, as a real server's libtorch.so does: after a switch its maps point into
# the replaced generation's tree, which status and history name.
SERVER = ("import mmap, pathlib, sys, time, torch; f = open(torch.__file__, 'rb'); "
          "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ); f.close(); "
          "pathlib.Path(sys.argv[1]).write_text(torch.__version__); "
          "sys.stdin.readline(); import torchvision; print(torch.__version__, torchvision.__version__, flush=True); "
          "time.sleep(600)")


class Server:
    """`python -c SERVER` started from the venv (through `python`, which may be a symlinked path):
    imports torch, says so, and on a line on stdin imports torchvision and prints both versions."""

    def __init__(self, t, python, name):
        self.ready = t.tmp / f"{name}.ready"
        self.out = open(t.tmp / f"{name}.out", "w+")
        self.proc = subprocess.Popen([str(python), "-c", SERVER, str(self.ready)], cwd=t.tmp, stdin=subprocess.PIPE,
                                     stdout=self.out, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        harness.wait_for(lambda: self.ready.exists() or self.proc.poll() is not None, f"the server {name}")
        check(self.proc.poll() is None, f"the server {name} ended (rc {self.proc.returncode})")
        self.pid = self.proc.pid

    def import_more(self):
        """torchvision, imported now; returns 'torch-version torchvision-version'."""
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        harness.wait_for(lambda: self.out.seek(0) == 0 and self.out.read().strip(), "the server's second import")
        self.out.seek(0)
        return self.out.read().strip()

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=30)


def blocked(t, r, server, *words):
    check_rc(r, 8)
    check_says(r, str(server.pid), "process(es) use", *words)


def scenario(t):
    srv = t.serve_stack()
    venv = t.cu128_venv(srv)
    manifest = t.manifest(t.upgrade_doc(srv, venv))
    before = t.tree(venv)

    server = Server(t, venv / "bin" / "python", "server")
    try:
        # plan and the dry run say it; the exit code stays theirs.
        r = t.stackup("plan", manifest)
        check_rc(r, 0)
        check_says(r, "would build and stage, but not switch now", str(server.pid))
        check([p["pid"] for p in json.loads(t.stackup("plan", manifest, "--json").stdout)["running"]] == [server.pid],
              "plan --json names the server")
        r = t.stackup("apply", manifest, "--dry-run")
        check_rc(r, 0)
        check_says(r, "the switch would not happen now", str(server.pid))

        # The default: built, verified, staged, not switched; exit 8.
        r = t.stackup("apply", manifest)
        blocked(t, r, server, "not switched", "stackup switch", "argv[0]")
        t.assert_tree(venv, before, "after an apply blocked by a running process")
        check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
        s = t.stackup("status", venv=venv)
        check_rc(s, 0)
        check_says(s, "use the venv (a switch waits for them)", str(server.pid))

        # switch and rollback refuse while it runs; --json names it.
        r = t.stackup("switch", "--venv", venv, "--json")
        check_rc(r, 8)
        doc = json.loads(r.stdout)
        check(not doc["ok"] and doc["errors"][0]["code"] == "running", f"switch --json: {r.stdout}")
        check([p["pid"] for p in doc["errors"][0]["running"]] == [server.pid], f"switch --json: {r.stdout}")
        t.assert_tree(venv, before, "after a refused switch")

        # --switch-running: switched, the process named for a restart; it mixes, as said.
        r = t.stackup("switch", "--venv", venv, "--switch-running")
        check_rc(r, 0)
        check_says(r, "switched under 1 running process", str(server.pid), "restart")
        check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
        after = t.tree(venv)
        mixed = server.import_more()
        print(f"the server after the switch: {mixed}", flush=True)
        check(mixed.startswith(TORCH_CU128) and "cu130" in mixed,
              f"the server did not mix as a switch under it must make it (what the warning is for): {mixed}")
        # status and history name it as still running the replaced generation's code.
        s = t.stackup("status", "--json", venv=venv)
        check_rc(s, 0)
        old = json.loads(s.stdout)["running_old_code"]
        check([p["pid"] for p in old] == [server.pid] and old[0]["generation"] and "/ready/" in old[0]["path"],
              f"status --json running_old_code: {s.stdout}")
        check_says(t.stackup("status", venv=venv), "no longer live: restart them", str(server.pid))
        h = t.stackup("history", "--json", venv=venv)
        gens = {g["id"]: g for g in json.loads(h.stdout)["generations"]}
        check([p["pid"] for p in gens[old[0]["generation"]]["running"]] == [server.pid],
              f"history --json: the old generation's running: {h.stdout}")
        check_says(t.stackup("history", venv=venv), "still running its code (restart it)", str(server.pid))

        r = t.stackup("rollback", "--venv", venv)
        blocked(t, r, server, "not rolled back", "stackup rollback")
        t.assert_tree(venv, after, "after a refused rollback")
        r = t.stackup("rollback", "--venv", venv, "--switch-running", "--json")
        check_rc(r, 0)
        check([p["pid"] for p in json.loads(r.stdout)["running"]] == [server.pid], r.stdout)
        t.assert_tree(venv, before, "after rollback --switch-running")

        # apply --json: the same data.
        r = t.stackup("apply", manifest, "--json")
        check_rc(r, 8)
        body = json.loads(r.stdout)
        check(body["blocked_by_running"] and body["staged"] and not body["switched"], r.stdout)
        check([p["pid"] for p in body["running"]] == [server.pid], r.stdout)
        check(body["errors"][0]["code"] == "running", r.stdout)
        t.assert_tree(venv, before, "after apply --json blocked")
    finally:
        server.stop()

    # Once it has stopped, `stackup switch` puts the staged generation in.
    check_rc(t.stackup("switch", "--venv", venv), 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check_rc(t.stackup("rollback", "--venv", venv), 0)
    t.assert_tree(venv, before, "after the rollback")

    # --wait-running: the apply waits at the switch until the server ends, then switches.
    server = Server(t, venv / "bin" / "python", "waited")
    try:
        proc, log = t.background_apply(manifest, "apply-wait.log", "--wait-running", "120")
        harness.wait_for(lambda: log.seek(0) == 0 and "torch reports CUDA 13.0" in log.read() or proc.poll() is not None,
                         "the apply's manifest check")
        time.sleep(1.0)
        check(proc.poll() is None, f"the apply ended (rc {proc.returncode}) while the process still ran")
        server.stop()
        rc = proc.wait(timeout=harness.CHILD_TIMEOUT_S)
        log.seek(0)
        text = log.read()
        print(f"--- apply --wait-running: rc={rc}\n{text}", flush=True)
        check(rc == 0, f"apply --wait-running: exit {rc}", text)
    finally:
        server.stop()
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check_rc(t.stackup("rollback", "--venv", venv), 0)
    t.assert_tree(venv, before, "after the rollback of the waited apply")

    # Through a symlink to the venv: the process is found all the same.
    link = t.tmp / "venv-link"
    link.symlink_to(venv)
    server = Server(t, link / "bin" / "python", "linked")
    try:
        r = t.stackup("apply", manifest)
        blocked(t, r, server, "not switched")
        t.assert_tree(venv, before, "after an apply blocked by a process using the venv through a symlink")
        # In place (a copy snapshot): named before anything is touched.
        r = t.stackup("apply", manifest, "--snapshot-strategy", "copy")
        blocked(t, r, server, "not applied in place", "nothing was touched")
        t.assert_tree(venv, before, "after an in-place apply blocked by a running process")
    finally:
        server.stop()

    # A shell standing in the venv that runs stackup is not a process to wait for.
    stackup = harness.find_stackup()
    r = harness.run(["sh", "-c", f'cd "$1/lib" && "$2" apply "$3" --state-dir "$4"; rc=$?; exit $rc', "sh",
                     venv, stackup, manifest, t.state_dir], env=harness.child_env({"STACKUP_UV": t.uv_path}))
    check_rc(r, 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    t.assert_nothing_left("at the end")


harness.main(scenario)

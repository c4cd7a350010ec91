"""A lock left behind is reported, never silently stolen:
- stale: the holder line of a run that died without releasing it (the flock itself is
  free): `status` says STALE and names the dead pid; the next `apply` warns that it takes
  it over, names that pid, and runs;
- orphaned: the holder is dead but another process (an installer that outlived its
  stackup, here a stand-in `flock` holding the same file) still holds the flock:
  `apply` exits 6 naming that process's pid and touches nothing, `status` says so;
  once that process ends, apply runs.
"""
import os
import signal
import socket
import subprocess

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU130


def dead_pid():
    """The pid of a process that has ended and been reaped."""
    return int(subprocess.run(["/bin/sh", "-c", "echo $$"], capture_output=True, text=True,
                              check=True).stdout)


def holder_line(pid, command):
    return f"pid {pid} on {socket.gethostname()}, running '{command}' since 2026-12-01T10:00:00Z\n"


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    check_rc(t.stackup("snapshots", "create", "--label", "makes the state dir", manifest), 0)
    locks = list(t.state_dir.glob("*/lock"))
    check(len(locks) == 1, f"expected one lock file: {locks}")
    lock = locks[0]
    check(lock.read_text() == "", f"a released lock still names a holder: {lock.read_text()!r}")

    # Orphaned: the dead holder's line, and a live process holding the flock.
    gone = dead_pid()
    lock.write_text(holder_line(gone, f"apply {manifest}"))
    # --close: only flock itself holds the lock, not its sleep; its own session, killed as a group.
    orphan = subprocess.Popen(["flock", "--exclusive", "--close", str(lock), "sleep", "600"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        harness.wait_for(lambda: subprocess.run(["flock", "--nonblock", str(lock), "true"]).returncode != 0,
                         "the stand-in to take the lock", every=0.05)
        before = t.tree(venv)
        refused = t.stackup("apply", manifest)
        check_rc(refused, 6)
        check_says(refused, f"pid {gone}", "not running", "still holds the lock", str(orphan.pid))
        t.assert_tree(venv, before, "the apply refused by an orphaned lock")
        status = t.stackup("status", manifest)
        check_rc(status, 0)
        check_says(status, "HELD, but its holder", f"pid {gone}", str(orphan.pid))
    finally:
        os.killpg(orphan.pid, signal.SIGKILL)
        orphan.wait()

    # Stale: the flock is free now, the dead holder's line is still there.
    status = t.stackup("status", manifest)
    check_rc(status, 0)
    check_says(status, "STALE", f"pid {gone}", "not running")
    taken = t.stackup("apply", manifest)
    check_rc(taken, 0)
    check_says(taken, f"stale lock of pid {gone}", "taking it over")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check(lock.read_text() == "", f"the apply left a holder line: {lock.read_text()!r}")
    check_says(t.stackup("status", manifest), "lock:        free")


harness.main(scenario)

"""An interrupted run says it was interrupted: SIGINT, SIGTERM and SIGHUP, to the process group
(what Ctrl-C sends) or to stackup alone, at several moments of a real apply (an index page held during
the preflight, uv held inside the index server at step 2, a manifest check running, the discard after a first signal, right after
the exchange), blue/green and in place. Each must:
- exit 128+N, never 1 ("verification failed") or 4 ("installer failed");
- say `interrupted by SIGX` and what became of the venv;
- leave the venv wholly old (tree digest), or after the exchange wholly new and recorded;
- leave no process at work and a clean `status` (exit 0, no open transaction);
and a second SIGINT during the cleanup is ignored with a line saying so. The next apply succeeds.
"""
import os
import signal
import subprocess

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130

HELD = "/sglang-cu130/sgl-kernel/sgl_kernel-"


def start(t, manifest, log_name, *extra, env=None):
    """`stackup apply` in a session of its own (so a signal to its group reaches it and nothing else)."""
    argv = [harness.find_stackup(), "apply", manifest, *extra, "--state-dir", t.state_dir]
    log = open(t.tmp / log_name, "w+")
    proc = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            env=harness.child_env({"STACKUP_UV": t.uv_path, **(env or {})}), start_new_session=True)
    return proc, log


def finish(proc, log, title):
    rc = proc.wait(timeout=harness.CHILD_TIMEOUT_S)
    log.seek(0)
    text = log.read()
    print(f"--- {title}: rc={rc}\n{text}", flush=True)
    return rc, text


def send(proc, sig, group):
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)


def wait_held(t, server, proc, seen):
    """Until this run's uv asks for the held wheel (`seen`: how many earlier runs asked)."""
    harness.wait_for(lambda: len(server.requests(HELD)) > seen or proc.poll() is not None,
                     "step 2's uv at the held wheel")
    check(proc.poll() is None, f"the apply ended (rc {proc.returncode}) before step 2's uv")


def clean_after(t, venv, before, what):
    t.assert_nothing_left(what)
    t.assert_tree(venv, before, what)
    s = t.stackup("status", venv=venv)
    check_rc(s, 0)
    check("INTERRUPTED" not in s.output, f"status reports an open transaction {what}", s)


def during_uv(t, server, venv, manifest, before, sig, group, *extra, failpoint=None):
    """A signal while step 2's uv waits for its wheel; returns the output."""
    env = None
    hit = t.tmp / f"hit-{sig.name}-{group}-{len(extra)}"
    if failpoint:
        env = {"STACKUP_FAILPOINT": failpoint, "STACKUP_FAILPOINT_FILE": str(hit)}
    server.rules.set([{"prefix": HELD, "hang": True}])
    seen = len(server.requests(HELD))
    proc, log = start(t, manifest, f"apply-{sig.name}-{group}-{len(extra)}.log", *extra, env=env)
    try:
        wait_held(t, server, proc, seen)
        send(proc, sig, group)
        if failpoint:
            harness.wait_for(lambda: hit.exists() or proc.poll() is not None, f"the failpoint {failpoint}")
            check(proc.poll() is None, f"the apply ended (rc {proc.returncode}) before {failpoint}")
            send(proc, signal.SIGINT, True)   # the second Ctrl-C, while it cleans up
    finally:
        server.rules.clear()
        rc, text = finish(proc, log, f"{sig.name} to the {'group' if group else 'process'} during uv")
    check(rc == 128 + sig.value, f"{sig.name} during uv: exit {rc}, not {128 + sig.value}", text)
    check(f"interrupted by {sig.name}" in text, f"{sig.name}: the interrupt is not said", text)
    check("installer failed" not in text and "verification failed" not in text,
          f"{sig.name}: the interrupt reads as a failure", text)
    clean_after(t, venv, before, f"after {sig.name} during uv")
    return text


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    doc = t.upgrade_doc(server, venv)
    manifest = t.manifest(doc)
    before = t.tree(venv)

    # SIGINT while the preflight waits for an index page (first: no page is cached yet).
    page = "/cu130/"
    server.rules.set([{"prefix": page, "hang": True}])
    seen = len(server.requests(page))
    proc, log = start(t, manifest, "apply-preflight.log")
    try:
        harness.wait_for(lambda: len(server.requests(page)) > seen or proc.poll() is not None, "the held page")
        check(proc.poll() is None, f"the apply ended (rc {proc.returncode}) before asking for a page")
        send(proc, signal.SIGINT, True)
    finally:
        server.rules.clear()
        rc, text = finish(proc, log, "SIGINT during the preflight")
    check(rc == 130, f"SIGINT during the preflight: exit {rc}, not 130", text)
    check_says_text(text, "interrupted by SIGINT")
    clean_after(t, venv, before, "after SIGINT during the preflight")

    text = during_uv(t, server, venv, manifest, before, signal.SIGINT, True)
    check_says_text(text, "nothing was changed in " + str(venv))
    text = during_uv(t, server, venv, manifest, before, signal.SIGTERM, False)
    check_says_text(text, "nothing was changed in " + str(venv))
    # A second Ctrl-C while the first one's cleanup runs (held at the failpoint in the discard).
    text = during_uv(t, server, venv, manifest, before, signal.SIGINT, True, failpoint="discarding")
    check_says_text(text, "SIGINT again: ignored", "nothing was changed in " + str(venv))
    # In place (a copy snapshot cannot be switched): the venv is restored from its snapshot.
    text = during_uv(t, server, venv, manifest, before, signal.SIGHUP, True, "--snapshot-strategy", "copy")
    check_says_text(text, "was restored")

    # SIGHUP while a manifest check runs (its python gets it: a KeyboardInterrupt-like death).
    marker = t.tmp / "check-started"
    slow = dict(doc)
    slow["checks"] = list(doc.get("checks", [])) + [{
        "name": "slow", "python": f"import pathlib, time; pathlib.Path({str(marker)!r}).write_text('x'); time.sleep(120)"}]
    slow_manifest = t.manifest(slow, "slow.yaml")
    proc, log = start(t, slow_manifest, "apply-check.log")
    try:
        harness.wait_for(lambda: marker.exists() or proc.poll() is not None, "the manifest check")
        check(proc.poll() is None, f"the apply ended (rc {proc.returncode}) before its check ran")
        send(proc, signal.SIGHUP, True)
    finally:
        rc, text = finish(proc, log, "SIGHUP during a check")
    check(rc == 128 + signal.SIGHUP.value, f"SIGHUP during a check: exit {rc}", text)
    check_says_text(text, "interrupted by SIGHUP", "nothing was changed")
    clean_after(t, venv, before, "after SIGHUP during a check")

    # SIGTERM right after the exchange: the upgrade is live and recorded; rollback undoes it.
    hit = t.tmp / "after-switch.hit"
    proc, log = start(t, manifest, "apply-after-switch.log",
                      env={"STACKUP_FAILPOINT": "after-switch", "STACKUP_FAILPOINT_FILE": str(hit)})
    try:
        harness.wait_for(lambda: hit.exists() or proc.poll() is not None, "the failpoint after-switch")
        check(proc.poll() is None, f"the apply ended (rc {proc.returncode}) before the switch")
        send(proc, signal.SIGTERM, False)
    finally:
        rc, text = finish(proc, log, "SIGTERM after the switch")
    check(rc == 128 + signal.SIGTERM.value, f"SIGTERM after the switch: exit {rc}", text)
    check_says_text(text, "interrupted by SIGTERM after the switch", "the upgrade is live", "rollback")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    t.assert_nothing_left("after SIGTERM after the switch")
    s = t.stackup("status", venv=venv)
    check_rc(s, 0)
    check_rc(t.stackup("rollback", manifest), 0)
    t.assert_tree(venv, before, "the rollback of the apply interrupted after its switch")

    # Nothing of all that stands in the way of the next apply.
    r = t.stackup("apply", manifest)
    check_rc(r, 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check_rc(t.stackup("rollback", manifest), 0)
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


def check_says_text(text, *words):
    for w in words:
        check(w in text, f"the output does not say {w!r}", text)


harness.main(scenario)

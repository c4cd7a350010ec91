"""What a terminal gets and a pipe does not. Under a real pseudo-terminal, `stackup apply`
draws a live status line for each step ("[1/2] torch  1.2s" and a spinner, redrawn in place
with "\\r\\x1b[2K" while uv runs; each torch page is delayed so the clock ticks) and colours
its plan and summary; with NO_COLOR set it keeps the status line but no colour. Piped, the
same apply prints the step counter and uv's indented lines with no control codes at all.
Each run is a real upgrade, checked by importing torch, then rolled back for the next."""
import os
import pty
import select
import subprocess

import harness
from harness import check, check_module, check_rc
from wheels import TORCH_CU130

ESC = "\x1b["
CLEAR_LINE = "\r\x1b[2K"


def run_in_pty(argv, env):
    """Runs argv with stdout and stderr on a new pty; returns (rc, everything it wrote)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                            env=env, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], harness.CHILD_TIMEOUT_S)
        if not ready:
            proc.kill()
            raise AssertionError("no output from the apply under a pty")
        try:
            data = os.read(master, 65536)
        except OSError:   # EIO: the child closed the pty
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    rc = proc.wait(timeout=harness.CHILD_TIMEOUT_S)
    text = b"".join(chunks).decode(errors="replace")
    print(f"--- pty output (rc={rc}):\n{text!r}", flush=True)
    return rc, text


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    server.rules.set([{"prefix": "/cu130/torch/", "delay_ms": 800}])
    argv = [harness.find_stackup(), "apply", manifest, "--state-dir", t.state_dir]

    def applied_then_rolled_back():
        check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
        check_rc(t.stackup("rollback", manifest), 0)

    env = harness.child_env({"STACKUP_UV": t.uv_path, "TERM": "xterm-256color"})
    env.pop("NO_COLOR", None)
    rc, text = run_in_pty(argv, env)
    check(rc == 0, f"apply under a pty failed (rc {rc})")
    check(CLEAR_LINE + "[1/2] torch" in text.replace("\x1b[1m", "").replace("\x1b[0m", ""),
          "no live status line for step 1")
    check(any(s in text for s in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"), "no spinner")
    check("\x1b[32m" in text, "no colour on a terminal")
    applied_then_rolled_back()

    rc, text = run_in_pty(argv, {**env, "NO_COLOR": "1"})
    check(rc == 0, f"apply with NO_COLOR failed (rc {rc})")
    check(CLEAR_LINE in text, "NO_COLOR must keep the status line")
    check("\x1b[3" not in text and "\x1b[1m" not in text, "colour despite NO_COLOR")
    applied_then_rolled_back()

    piped = t.stackup("apply", manifest)
    check_rc(piped, 0)
    check(ESC not in piped.output and "\r" not in piped.output, "control codes in piped output")
    check("[1/2] torch" in piped.stdout and "    | " in piped.stdout, "piped output lacks the step counter or uv's lines")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")


harness.main(scenario)

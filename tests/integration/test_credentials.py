"""An index that wants a password (HTTP Basic, enforced by the test server: without it, 401):
stackup uses the credentials written in the manifest's index URL, for its own page requests
and for uv, but they appear nowhere else: not on any process's command line while uv runs
(uv gets them as UV_INDEX_<NAME>_USERNAME/_PASSWORD in its environment), not in stdout or
stderr of any command, the verbose log file, the saved plan, or any file of the state dir.
The password holds a ':' and an '@', percent-encoded in the URL, as a real one might.
The apply is blue/green, so the uv looked at is the one installing into the next generation's
clone under the state dir (`--python <state>/.../ready/bin/python`), not into the live venv.
"""
import json
import os

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU130

USER = "alice"
PASSWORD = "pa:ss@w0rd-Z9"
ENCODED = "pa%3Ass%40w0rd-Z9"
SECRETS = (PASSWORD, ENCODED)


def leaks(text, where):
    for secret in SECRETS:
        check(secret not in text, f"the password appears in {where}")


def cmdlines():
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    out[int(entry)] = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                pass
    return out


def environ_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(kv.split("=", 1) for kv in f.read().decode(errors="replace").split("\0") if "=" in kv)


def scenario(t):
    server = t.serve_stack()
    (t.tmp / "indexes" / "sglang-cu130" / ".auth").write_text(f"{USER}:{PASSWORD}\n")
    venv = t.cu128_venv(server)
    doc = t.upgrade_doc(server, venv)
    plain = server.url("sglang-cu130")

    # Without credentials the index refuses: the test server really enforces them.
    refused = t.stackup("plan", t.manifest(doc, "no-password.yaml"))
    check_rc(refused, 3)
    check_says(refused, "401")

    doc["indexes"]["sglang"] = plain.replace("http://", f"http://{USER}:{ENCODED}@")
    manifest = t.manifest(doc)
    log_file = t.tmp / "stackup.log"
    plan_file = t.tmp / "plan.json"
    outputs = []

    planned = t.stackup("plan", manifest, "--out", plan_file, "--json", "-v", "--log-file", log_file)
    check_rc(planned, 0)
    outputs.append(planned)
    check(json.loads(planned.stdout)["ok"], "plan --json not ok")

    # Hold uv on the sgl-kernel file: look at every command line while it runs.
    proc, log = t.held_apply(server, plan_file, "/sglang-cu130/sgl-kernel/sgl_kernel-", "apply.log",
                             "-v", "--log-file", log_file)
    try:
        lines = cmdlines()
        state = str(t.state_dir.resolve())
        uv_pids = [pid for pid, line in lines.items() if "pip install" in line and state in line]
        check(len(uv_pids) == 1, f"not one uv running on the clone in {state}: {lines}")
        python = lines[uv_pids[0]].split(" --python ", 1)[1].split(" ", 1)[0]
        check(python.startswith(state + "/") and python.endswith("/ready/bin/python"),
              f"uv does not install into the clone: --python {python}")
        for pid, line in lines.items():
            leaks(line, f"the command line of pid {pid}: {line}")
        env = environ_of(uv_pids[0])
        check(env.get("UV_INDEX_SGLANG_PASSWORD") == PASSWORD and env.get("UV_INDEX_SGLANG_USERNAME") == USER,
              "uv did not get the credentials in its environment")
        check(f"sglang={plain}" in lines[uv_pids[0]], f"uv's --index is not the named URL: {lines[uv_pids[0]]}")
    finally:
        server.rules.clear()
        proc.wait(timeout=harness.CHILD_TIMEOUT_S)
        applied = harness.end_background(proc, log, "apply")
    check(proc.returncode == 0, f"the apply failed (rc {proc.returncode})")
    leaks(applied, "the output of apply")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check(t.probe(venv)["dists"].get("sgl-kernel", "").endswith("+cu130"), "sgl-kernel is not the cu130 build")

    for args in (("status", manifest, "--json"), ("snapshots", "list", manifest), ("verify", manifest, "-v"),
                 ("apply", "--dry-run", manifest, "-v")):
        r = t.stackup(*args)
        check_rc(r, 0)
        outputs.append(r)
    for r in outputs:
        leaks(r.output, f"the output of {' '.join(map(str, r.argv))}")
    log_text = log_file.read_text()
    check("running:" in log_text and "UV_INDEX_SGLANG_PASSWORD=***" in log_text,
          "the verbose log lacks uv's argv and masked environment")
    leaks(log_text, "the log file")
    leaks(plan_file.read_text(), "the saved plan")
    for path in t.state_dir.rglob("*"):
        if path.is_file() and not path.is_symlink():
            leaks(path.read_bytes().decode(errors="replace"), f"the state file {path}")


harness.main(scenario)

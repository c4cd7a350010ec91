"""(h) Manifest errors exit 2 with file:line:col, before anything is touched: the venv's
tree is unchanged and no snapshot was taken. Each case breaks one line of a good manifest.
Input is bounded: /dev/zero and a 20 MB manifest are exit 2 at once, in bounded memory (the
child's own peak RSS, from wait4); a manifest read through a pipe still works (read once).
"""
import os
import re
import subprocess
import threading

import harness
from harness import check, check_rc, check_says

GOOD = """\
version: 1
venv: {venv}
indexes:
  pytorch: http://127.0.0.1:9/cu130/
  pypi: http://127.0.0.1:9/pypi/
default_index: pypi
steps:
  - name: torch
    index: pytorch
    packages: [torch]
    expect:
      torch:
        local: cu130
env:
  UV_CACHE_DIR: {cache}
"""

# (line, replacement, location that must be reported, words the message must contain);
# a location without a column accepts any column (the key's or the value's).
CASES = [
    (6, "defualt_index: pypi", "6:1", ["defualt_index", "default_index"]),  # did you mean
    (13, "        locl: cu130", "13:9", ["locl"]),
    (13, '        version: ">>2.11"', "13", [">>2.11"]),
    (9, "    index: nightly", "9", ["nightly"]),
    (1, "version: 2", "1", []),
    (10, '    packages: ["torch=="]', "10", []),
    (10, "    packages: {torch: 1}", "10", []),
]


def scenario(t):
    venv = t.make_venv()
    before = t.tree(venv)
    good = GOOD.format(venv=venv, cache=t.cache_dir)
    for n, (line, text, where, words) in enumerate(CASES):
        lines = good.splitlines()
        lines[line - 1] = text
        manifest = t.manifest("\n".join(lines) + "\n", f"bad{n}.yaml")
        r = t.stackup("apply", manifest)
        check_rc(r, 2)
        at = re.escape(f"{manifest.name}:{where}") + ("" if ":" in where else r":\d+")
        check(re.search(at + r"\b", r.output), f"no {manifest.name}:{where} in the output", r)
        check_says(r, *words)
        t.assert_tree(venv, before, f"a bad manifest ({text.strip()})")
        left = sorted(os.listdir(t.state_dir)) if t.state_dir.exists() else []
        check(not left, f"a bad manifest left state behind: {left}")
    # The good manifest parses (it then fails later, on the closed port): not a manifest error.
    r = t.stackup("apply", t.manifest(good, "good.yaml"))
    check(r.rc != 2, "the unbroken manifest is reported as a manifest error", r)
    bounded_input(t, venv, good)
    t.assert_tree(venv, before, "unbounded or piped input")


def run_measured(argv, env):
    """(rc, output, peak RSS of the child itself in KiB), from wait4."""
    proc = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env)
    timer = threading.Timer(harness.CHILD_TIMEOUT_S, proc.kill)
    timer.start()
    out = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    print(f"$ {' '.join(map(str, argv))}\n[rc={proc.returncode}, peak RSS {usage.ru_maxrss} KiB]\n{out}", flush=True)
    return proc.returncode, out, usage.ru_maxrss


def bounded_input(t, venv, good):
    big = t.manifest(good + ("# padding padding padding padding padding padding padding\n" * 350_000),
                     "big.yaml")
    check(big.stat().st_size > 20_000_000, f"big.yaml is only {big.stat().st_size} bytes")
    env = harness.child_env({"STACKUP_UV": t.uv_path})
    # The baseline, measured the same way (a fork's RSS before exec counts too): a missing file.
    rc, out, floor = run_measured([harness.find_stackup(), "plan", t.tmp / "missing.yaml"], env)
    check(rc == 2, "a missing manifest is not exit 2", out)
    for source in ["/dev/zero", big]:
        for command in ["plan", "apply", "verify"]:
            rc, out, rss = run_measured([harness.find_stackup(), command, source, "--state-dir", t.state_dir], env)
            check(rc == 2, f"{command} {source}: exit {rc}, not 2", out)
            check("more than 1 MiB" in out and str(source) in out, f"{command} {source}: the cap is not named", out)
            # The cap is 1 MiB: reading 20 MB (or /dev/zero, endlessly) would show here.
            check(rss < floor + 8_000, f"{command} {source}: peak RSS {rss} KiB for a refused input, "
                  f"{floor} KiB for a missing one", out)
    # Through a pipe (what <(...) gives): read once, so apply's look at "manifest or plan?"
    # does not eat what the parser then needs. It fails later, on the closed port: not exit 2.
    fifo = t.tmp / "manifest.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(good))
    writer.start()
    r = t.stackup("apply", fifo)
    writer.join()
    check(r.rc != 2, "a manifest read through a pipe is refused", r)


harness.main(scenario)

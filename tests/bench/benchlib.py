"""What the benchmarks share: running a command (stopping the benchmark, with its output, when
it fails) and timing one. Imported by the scripts beside it (run as `python3 tests/bench/X.py`,
their folder is first on sys.path)."""
import signal
import subprocess
import sys
import time


def failed(argv, rc, output):
    how = f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}"
    sys.exit(f"failed ({how}): {' '.join(str(a) for a in argv)}\n{output[-4000:]}")


def run(argv, env=None, ok=True, stderr=subprocess.STDOUT):
    """stdout (with stderr, unless `stderr` says otherwise); exits the benchmark when the command
    fails and `ok`."""
    proc = subprocess.run([str(a) for a in argv], env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
    if ok and proc.returncode != 0:
        failed(argv, proc.returncode, proc.stdout)
    return proc.stdout


def timed(argv, env=None):
    """(seconds, stdout) of run(argv, env)."""
    start = time.monotonic()
    out = run(argv, env)
    return time.monotonic() - start, out

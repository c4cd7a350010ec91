"""What the benchmarks share: running a command (stopping the benchmark, with its output, when
it fails), timing one, and its peak RSS. Imported by the scripts beside it (run as `python3 tests/bench/X.py`,
their folder is first on sys.path)."""
import signal
import subprocess
import sys
import threading
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


def _poll_hwm(pid, box, done):
    path = f"/proc/{pid}/status"
    while True:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return
        at = data.find(b"VmHWM:")
        if at < 0:   # a zombie: its memory is gone
            return
        box[0] = int(data[at + 6:data.index(b"kB", at)])
        if done.wait(0.005):
            return


def timed_rss(argv, env=None):
    """(seconds, peak RSS of the process itself in KiB, stdout): stderr apart, so --json parses."""
    box, done = [0], threading.Event()
    start = time.monotonic()
    proc = subprocess.Popen([str(a) for a in argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    poller = threading.Thread(target=_poll_hwm, args=(proc.pid, box, done), daemon=True)
    poller.start()
    out, err = proc.communicate()
    elapsed = time.monotonic() - start
    done.set()
    poller.join()
    if proc.returncode != 0:
        failed(argv, proc.returncode, f"{err[-4000:]}\n{out[-4000:]}")
    return elapsed, box[0], out

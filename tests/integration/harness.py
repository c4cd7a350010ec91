"""Shared helpers for the integration tests: the real stackup, the real uv, real venvs and a
real PEP 503 index on 127.0.0.1. Nothing here may reach the internet.

A test script is `harness.main(scenario)`, where scenario(t) gets a Test: exit 0 when it
returns, 1 when an assertion fails (the temp dir is kept and named), 125 when a
prerequisite is missing (CTest reports it as skipped): raise Skip for the whole scenario, or
call skip_part for one part of it, the rest still run and judged, the exit then 125, not 0.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "support"))

import index_server  # noqa: E402
import treedigest  # noqa: E402
import wheels  # noqa: E402

SKIP = 125
CHILD_TIMEOUT_S = 240          # a hang guard only; no test asserts on time
HELD_WAIT_S = 120              # a hang guard for reaching a held request; nothing asserts on time
WAIT_GONE_S = 60               # a hang guard for a killed run's children to go; nothing asserts on time
# Anything that tries a host other than 127.0.0.1 meets a closed port instead of the internet.
OFFLINE_ENV = {
    "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
    "ALL_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1,localhost",
}

# The probe run in a venv's python: installed dists, and each module's versions.
_PROBE = r"""
import importlib, importlib.metadata as md, json, sys
out = {"dists": {}, "modules": {}}
for d in md.distributions():
    out["dists"][d.metadata["Name"].lower().replace("_", "-")] = d.version
for name in sys.argv[1:]:
    try:
        m = importlib.import_module(name)
        v = getattr(m, "version", None)
        out["modules"][name] = {"version": getattr(m, "__version__", None),
                                "cuda": getattr(v, "cuda", None)}
    except Exception as e:
        out["modules"][name] = {"error": repr(e)}
print(json.dumps(out))
"""


class Skip(Exception):
    pass


_skipped_parts = []


def skip_part(reason):
    """A part of the scenario that cannot run here: the rest goes on, and the test ends in a skip
    (exit 125) rather than a pass, unless something fails."""
    print(f"SKIP (part): {reason}", flush=True)
    _skipped_parts.append(reason)


def find_uv():
    uv = os.environ.get("STACKUP_UV") or str(REPO / ".tools" / "venv" / "bin" / "uv")
    if not os.access(uv, os.X_OK):
        raise Skip(f"no uv at {uv} (set STACKUP_UV, or run contrib/bootstrap.sh)")
    return uv


def find_stackup():
    exe = os.environ.get("STACKUP_BIN") or str(REPO / "build" / "stackup")
    if not os.access(exe, os.X_OK):
        raise Skip(f"no stackup binary at {exe} (set STACKUP_BIN, or build into build/)")
    return exe


def child_env(extra=None):
    """The caller's environment without UV_*, PIP_* and PYTHON* settings, plus OFFLINE_ENV."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("UV_", "PIP_", "PYTHON")) and k.lower() not in
           ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    env.update(OFFLINE_ENV)
    env.update(extra or {})
    return env


class Result:
    def __init__(self, argv, proc):
        self.argv, self.rc, self.stdout, self.stderr = argv, proc.returncode, proc.stdout, proc.stderr

    @property
    def output(self):
        return self.stdout + self.stderr

    def __str__(self):
        return (f"$ {' '.join(map(str, self.argv))}\n[rc={self.rc}]\n--- stdout\n{self.stdout}"
                f"--- stderr\n{self.stderr}")


def run(argv, env=None, echo=True):
    proc = subprocess.run([str(a) for a in argv], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, env=env if env is not None else child_env(),
                          timeout=CHILD_TIMEOUT_S)
    result = Result(argv, proc)
    if echo:
        print(result, flush=True)
    return result


def to_yaml(value, indent=0):
    """Block-style YAML for dicts, lists and scalars (scalars as JSON, which YAML reads)."""
    pad = "  " * indent
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{k}:\n{to_yaml(v, indent + 1)}")
            else:
                lines.append(f"{pad}{k}: {_scalar(v)}")
        return "\n".join(lines)
    if isinstance(value, list):
        lines = []
        for v in value:
            if isinstance(v, dict) and v:
                body = to_yaml(v, indent + 1)
                lines.append(f"{pad}- {body.lstrip()}")
            else:
                lines.append(f"{pad}- {_scalar(v)}")
        return "\n".join(lines)
    return pad + _scalar(value)


def _scalar(v):
    if v == {}:
        return "{}"
    if v == []:
        return "[]"
    return json.dumps(v)


class Test:
    def __init__(self, name):
        self.name = name
        base = os.environ.get("STACKUP_TEST_TMPDIR")
        if base:
            os.makedirs(base, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f"stackup-it-{name}-", dir=base))
        self.uv_path = find_uv()
        self.state_dir = self.tmp / "state"
        self.cache_dir = self.tmp / "uv-cache"
        # stackup's own page cache: one per test, never the developer's ~/.cache/stackup; every
        # child run (child_env copies os.environ) sees it unless a test sets its own.
        self.page_cache_dir = self.tmp / "stackup-cache"
        os.environ["STACKUP_CACHE_DIR"] = str(self.page_cache_dir)
        self._servers = []

    # --- fixtures -------------------------------------------------------------
    def serve_stack(self):
        """Builds the standard wheel set (wheels.build_stack) and serves it; returns the server."""
        root = wheels.build_stack(str(self.tmp / "indexes"))
        return self.serve(root)

    def serve(self, root):
        server = index_server.IndexServer(root).start()
        self._servers.append(server)
        return server

    def make_venv(self, name="venv"):
        path = self.tmp / name
        r = run([sys.executable, "-m", "venv", "--without-pip", path], echo=False)
        if r.rc != 0:
            raise AssertionError(f"could not make a venv:\n{r}")
        return path

    def uv(self, *args, venv=None):
        """The real uv with nothing taken from the user's config or the internet."""
        argv = [self.uv_path, *args, "--no-config", "--cache-dir", self.cache_dir]
        if venv is not None:
            argv += ["--python", Path(venv).resolve()]
        return run(argv)

    def uv_install(self, venv, *packages, index=None, default_index, extra=()):
        """uv pip install from local indexes only (`index` ranks above `default_index`)."""
        args = ["pip", "install", "--default-index", default_index, *extra, *packages]
        if index:
            args[2:2] = ["--index", index]
        r = self.uv(*args, venv=venv)
        if r.rc != 0:
            raise AssertionError(f"setting up the venv failed:\n{r}")
        return r

    def cu128_venv(self, server, name="venv"):
        """A venv holding the CUDA 12.8 stack: torch, torchvision (cu128), sgl-kernel from PyPI."""
        venv = self.make_venv(name)
        self.uv_install(venv, f"torch=={wheels.TORCH_CU128}", f"torchvision=={wheels.VISION_CU128}",
                        f"sgl-kernel=={wheels.SGL_KERNEL_PYPI}", index=server.url("cu128"),
                        default_index=server.url("pypi"))
        return venv

    def manifest(self, doc, name="manifest.yaml"):
        """Writes a manifest (a dict, or YAML text used as is); returns its path.
        A dict gets env.UV_CACHE_DIR (and the offline proxies) unless it sets env itself."""
        if isinstance(doc, dict):
            doc = dict(doc)
            doc.setdefault("env", {"UV_CACHE_DIR": str(self.cache_dir), **OFFLINE_ENV})
            doc = to_yaml(doc) + "\n"
        path = self.tmp / name
        path.write_text(doc)
        return path

    def upgrade_doc(self, server, venv, torch_cuda="13.0", later_steps=()):
        """The cu128 -> cu130 manifest: torch+torchvision from the PyTorch-like index,
        sgl-kernel from its own index with deps: false, then `later_steps`."""
        return {
            "version": 1,
            "name": f"it-{self.name}",
            "venv": str(venv),
            "indexes": {"pytorch": server.url("cu130"), "sglang": server.url("sglang-cu130"),
                        "pypi": server.url("pypi")},
            "default_index": "pypi",
            "steps": [
                {"name": "torch", "index": "pytorch", "packages": ["torch", "torchvision"],
                 "prerelease": True,
                 "expect": {"torch": {"version": ">=2.11.0.dev0", "local": "cu130",
                                      "cuda": torch_cuda},
                            "torchvision": {"local": "cu130"}}},
                {"name": "sgl-kernel", "index": "sglang", "packages": ["sgl-kernel"],
                 "deps": False, "expect": {"sgl-kernel": {"local": "cu130"}}},
                *later_steps,
            ],
            # the kernel's wheel declares a dependency that exists nowhere; deps: false leaves it out
            "allow_unmet": ["sgl-kernel"],
            "checks": [{"name": "torch reports CUDA 13.0",
                        "python": "import torch; assert torch.version.cuda == '13.0', "
                                  "torch.version.cuda"}],
        }

    # --- the tool -------------------------------------------------------------
    def held_apply(self, server, manifest, held, log_name, *extra):
        """Starts `stackup apply MANIFEST EXTRA...` in the background with every request under
        `held` hanging inside the index server; returns (process, log file) once the apply has
        reached it. `server.rules.clear()` releases it."""
        server.rules.set([{"prefix": held, "hang": True}])
        proc, log = self.background_apply(manifest, log_name, *extra)
        deadline = time.monotonic() + HELD_WAIT_S
        while not server.requests(held) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None and server.requests(held):
            return proc, log
        proc.kill()
        rc = proc.wait()
        server.rules.clear()
        log.seek(0)
        raise AssertionError(f"the apply never reached {held} (rc {rc})\n{log.read()}")

    def background_apply(self, manifest, log_name, *extra, env=None):
        """Starts `stackup apply MANIFEST EXTRA...` in the background, `env` added to its
        environment; returns (process, log file)."""
        argv = [find_stackup(), "apply", manifest, *extra, "--state-dir", self.state_dir]
        log = open(self.tmp / log_name, "w+")
        proc = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT,
                                env=child_env({"STACKUP_UV": self.uv_path, **(env or {})}))
        return proc, log

    def venv_state(self, venv):
        """The venv's own folder in the state dir (`<state>/<venv name>-<hash>`), or None."""
        found = list(self.state_dir.glob(f"{Path(venv).name}-*"))
        check(len(found) <= 1, f"more than one state folder for {venv}: {found}")
        return found[0] if found else None

    def assert_nothing_left(self, what):
        """No process but this one (zombies aside) still names this test's folder in its exe,
        cwd, cmdline, environment or open files: the venv, the state dir, uv's cache. A uv or
        python that stackup started always does (`--python VENV/bin/python`, VIRTUAL_ENV).
        Waits up to WAIT_GONE_S for them to go (a hang guard only); kills the ones left."""
        deadline = time.monotonic() + WAIT_GONE_S
        left = processes_naming(self.tmp)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = processes_naming(self.tmp)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        check(not left, f"{what}: processes still at work in {self.tmp} after {WAIT_GONE_S} s "
                        f"(killed now): " + "".join(f"\n  pid {p}: {why}" for p, why in left.items()))

    def stackup(self, *args, venv=None, state=True):
        argv = [find_stackup(), *args]
        if venv is not None:
            argv += ["--venv", venv]
        if state:
            argv += ["--state-dir", self.state_dir]
        return run(argv, env=child_env({"STACKUP_UV": self.uv_path}))

    # --- the venv's real state ------------------------------------------------
    def probe(self, venv, *modules):
        """{"dists": {name: version}, "modules": {module: {version, cuda} or {error}}},
        read by the venv's own python (-I -B: no env, no user site, no bytecode written)."""
        r = run([Path(venv) / "bin" / "python", "-I", "-B", "-c", _PROBE, *modules], echo=False)
        if r.rc != 0:
            raise AssertionError(f"probing the venv failed:\n{r}")
        return json.loads(r.stdout)

    def module(self, venv, name):
        info = self.probe(venv, name)["modules"][name]
        print(f"{venv}: {name} -> {info}", flush=True)
        return info

    def tree(self, venv):
        return treedigest.entries(venv)

    def assert_left_as_was(self, venv, before, root_before, mode, what):
        """After a failed apply in `mode` (MODES): the venv's tree is `before`, and the way it got
        there is the mode's own. Blue/green: the venv's root directory is the same inode (nothing
        was switched, the venv never touched). In place: the steps wrote the venv itself, so the
        same tree proves the snapshot's restore, and its root is a new inode (the restored tree
        was swapped in)."""
        self.assert_tree(venv, before, f"{what} ({mode})")
        root = os.stat(venv).st_ino
        if mode == "blue/green":
            check(root == root_before, f"{what} (blue/green): the venv's root changed "
                                       f"({root_before} -> {root}): something was switched")
        else:
            check(root != root_before, f"{what} (in place): the venv's root is still {root}: "
                                       f"its snapshot was never restored")

    def assert_tree(self, venv, before, what):
        after = treedigest.entries(venv)
        if after != before:
            raise AssertionError(f"{what}: {venv} differs from before:\n"
                                 f"{treedigest.diff(before, after)}")

    def close(self):
        for server in self._servers:
            server.stop()
        self._servers = []


def pid_alive(pid):
    """The process exists and is not a zombie (a zombie writes nothing)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def processes_naming(path):
    """{pid: where} for every live process but this one whose exe, cwd, cmdline, environment
    or open files name `path` or something below it (from /proc; unreadable ones skipped)."""
    needle = os.fsencode(str(path))
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        where = _naming(int(entry), needle)
        if where and pid_alive(int(entry)):
            found[int(entry)] = f"{where} ({_cmdline(int(entry))})"
    return found


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:200].strip()
    except OSError:
        return "?"


def _naming(pid, needle):
    base = f"/proc/{pid}"
    links = ["exe", "cwd"]
    try:
        links += [f"fd/{fd}" for fd in os.listdir(f"{base}/fd")]
    except OSError:
        pass
    for link in links:
        try:
            target = os.readlink(f"{base}/{link}")
        except OSError:
            continue
        if needle in os.fsencode(target):
            return f"{link} -> {target}"
    for name in ("cmdline", "environ"):
        try:
            with open(f"{base}/{name}", "rb") as f:
                text = f.read()
        except OSError:
            continue
        if needle in text:
            return f"its {name}"
    return None


def wait_for(predicate, what, timeout=HELD_WAIT_S, every=0.02):
    """Polls until predicate() holds; fails naming `what` after `timeout` s (a hang guard)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        check(time.monotonic() < deadline, f"waited {timeout} s for {what} in vain")
        time.sleep(every)


def end_background(proc, log, title):
    """Kills `proc` if it still runs, reaps it and prints its log under `title`; returns its log."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=CHILD_TIMEOUT_S)
    log.seek(0)
    text = log.read()
    print(f"--- {title} (rc={proc.returncode})\n{text}", flush=True)
    return text


def kill_9(proc):
    """kill -9 of stackup alone (what it started must end by itself); reaps it."""
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=CHILD_TIMEOUT_S)


def journal_records(path):
    """The journal's records; a torn last line (read while it is written) is left out."""
    out = []
    for line in Path(path).read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


# The two ways an apply runs (README, *Generations*): the extra arguments that choose each.
# `--snapshot-strategy copy` asks for a snapshot the venv cannot be switched with: in place.
MODES = (("blue/green", ()), ("in place", ("--snapshot-strategy", "copy")))


def check(cond, message, *results):
    if not cond:
        raise AssertionError(message + "".join(f"\n{r}" for r in results))


def check_rc(result, rc):
    check(result.rc == rc, f"expected exit {rc}, got {result.rc}", result)


def check_says(result, *words):
    """Every word appears in the tool's stdout+stderr (case-insensitive)."""
    text = result.output.lower()
    missing = [w for w in words if w.lower() not in text]
    check(not missing, f"output does not mention {missing}", result)


def check_module(info, version, cuda):
    check(info.get("version") == version and info.get("cuda") == cuda,
          f"expected version {version} cuda {cuda}, the module reports {info}")


def main(scenario, needs_stackup=True):
    name = Path(sys.argv[0]).stem.removeprefix("test_")
    t = None
    try:
        if needs_stackup:
            find_stackup()
        t = Test(name)
        scenario(t)
    except Skip as e:
        print(f"SKIP {name}: {e}", flush=True)
        _finish(t, keep=False)
        sys.exit(SKIP)
    except BaseException as e:  # noqa: B902 - the test's verdict, whatever went wrong
        if isinstance(e, SystemExit) and e.code == 0:
            _passed(t, name)
        traceback.print_exc()
        print(f"FAIL {name}: {e}", flush=True)
        _finish(t, keep=True)
        sys.exit(1)
    _passed(t, name)


def _passed(t, name):
    _finish(t, keep=False)
    if _skipped_parts:
        print(f"SKIP {name}: the rest passed, but not run here: {'; '.join(_skipped_parts)}", flush=True)
        sys.exit(SKIP)
    print(f"PASS {name}", flush=True)
    sys.exit(0)


def _finish(t, keep):
    if t is None:
        return
    t.close()
    if keep:
        print(f"kept temp dir of failed test: {t.tmp}", flush=True)
    elif not os.environ.get("STACKUP_KEEP_TMP"):
        shutil.rmtree(t.tmp, ignore_errors=True)

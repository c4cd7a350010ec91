"""Broken environments, each met by `stackup apply`: exit 3 naming the cause, and nothing touched
(the venv's tree digest; no snapshot or generation in the state dir).
1. The venv's base interpreter is gone: a venv made from a copy of the system's python binary,
   which is then deleted (bin/python dangles).
2. The venv is read-only: a read-only bind mount of it (as root, chmod leaves it writable); skips
   loudly when it cannot mount.
3. uv is missing: STACKUP_UV names nothing, or PATH has no uv.
4. uv is too old: a stand-in `uv` whose `--version` prints "uv 0.1.0", as the real one prints its
   version; and one that prints something that is no uv version at all.
"""
import os
import shutil
import subprocess
from pathlib import Path

import harness
from harness import check, check_rc, check_says

SYSTEM_PYTHON = "/usr/bin/python3"


def apply(t, manifest, uv=None, path=None):
    env = {"STACKUP_UV": uv if uv is not None else t.uv_path}
    if path is not None:
        env["PATH"] = path
    child = harness.child_env(env)
    if uv == "":
        del child["STACKUP_UV"]
    return harness.run([harness.find_stackup(), "apply", manifest, "--state-dir", t.state_dir], env=child)


def untouched(t, venv, before, what):
    t.assert_tree(venv, before, what)
    state = t.venv_state(venv)
    snaps = [p.name for p in (state / "snapshots").iterdir() if p.name != ".objects"] if state and \
        (state / "snapshots").exists() else []
    check(not snaps, f"{what}: the state dir holds snapshots or generations: {snaps}")


def gone_interpreter(t, server):
    real = Path(os.path.realpath(SYSTEM_PYTHON))
    if not real.is_file():
        raise harness.Skip(f"no {SYSTEM_PYTHON} to copy")
    interp = t.tmp / "interp" / "bin" / real.name
    interp.parent.mkdir(parents=True)
    shutil.copy2(real, interp)
    venv = t.tmp / "orphan"
    r = harness.run([interp, "-m", "venv", "--without-pip", venv])
    if r.rc != 0:
        raise harness.Skip(f"a copy of {real} cannot make a venv (no venv module?)")
    manifest = t.manifest(t.upgrade_doc(server, venv), "orphan.yaml")
    interp.unlink()
    before = t.tree(venv)
    r = apply(t, manifest)
    check_rc(r, 3)
    check_says(r, str(venv / "bin" / "python"))
    check_says(r, "interpreter")
    untouched(t, venv, before, "a venv whose interpreter is gone")


def read_only(t, server):
    venv = t.cu128_venv(server, "readonly")
    manifest = t.manifest(t.upgrade_doc(server, venv), "ro.yaml")
    before = t.tree(venv)
    if subprocess.run(["mount", "--bind", str(venv), str(venv)], capture_output=True).returncode != 0:
        raise harness.Skip(f"cannot bind-mount {venv} read-only (this part needs root; euid {os.geteuid()})")
    try:
        r = subprocess.run(["mount", "-o", "remount,bind,ro", str(venv)], capture_output=True, text=True)
        check(r.returncode == 0, f"cannot remount {venv} read-only: {r.stderr}")
        check(not os.access(venv, os.W_OK), f"{venv} is still writable after a read-only remount")
        r = apply(t, manifest)
    finally:
        subprocess.run(["umount", str(venv)])
    check_rc(r, 3)
    check_says(r, "read-only", str(venv))
    untouched(t, venv, before, "a read-only venv")


def missing_uv(t, venv, manifest, before):
    r = apply(t, manifest, uv=str(t.tmp / "no-such-uv"))
    check_rc(r, 3)
    check_says(r, "cannot run uv", str(t.tmp / "no-such-uv"), "STACKUP_UV")
    untouched(t, venv, before, "STACKUP_UV naming nothing")
    empty = t.tmp / "empty-bin"
    empty.mkdir()
    r = apply(t, manifest, uv="", path=str(empty))
    check_rc(r, 3)
    check_says(r, "uv", "PATH")
    untouched(t, venv, before, "no uv on PATH")


def stand_in_uv(t, venv, manifest, before, name, answer):
    folder = t.tmp / name
    folder.mkdir()
    uv = folder / "uv"
    uv.write_text(f"#!/bin/sh\nif [ \"$1\" = --version ]; then echo '{answer}'; exit 0; fi\n"
                  f"echo \"stand-in uv ran: $*\" >> {t.tmp / 'stand-in-uv.log'}\nexit 0\n")
    uv.chmod(0o755)
    r = apply(t, manifest, uv="", path=f"{folder}:{os.environ.get('PATH', '')}")
    check_rc(r, 3)
    untouched(t, venv, before, f"a uv answering {answer!r}")
    check(not (t.tmp / "stand-in-uv.log").exists(), "the stand-in uv was run for more than --version")
    return r


def scenario(t):
    server = t.serve_stack()
    gone_interpreter(t, server)

    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    before = t.tree(venv)
    missing_uv(t, venv, manifest, before)
    r = stand_in_uv(t, venv, manifest, before, "old-uv", "uv 0.1.0 (abc1234 2024-02-15)")
    check_says(r, "0.1.0, too old", "0.4.23")
    r = stand_in_uv(t, venv, manifest, before, "odd-uv", "not a uv at all")
    check_says(r, "not a uv at all", "uv X.Y.Z")
    read_only(t, server)


harness.main(scenario)

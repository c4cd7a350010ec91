"""What held when issue 32 was filed, kept as tests (the real uv, real venvs, the fixture stack):
- a venv whose path has spaces and non-ASCII: apply, its new console script runs, rollback;
- rollback back and forth six times: the tree alternates exactly between the two generations;
- one state dir shared by two venvs: each applies and rolls back alone, the other untouched;
- as an unprivileged user (`nobody`, through setpriv; needs root, else those parts skip loudly):
  someone else's venv is exit 3 with a clear message and nothing touched; the user's own venv,
  read-only, is exit 3 and untouched; writable again, it upgrades.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import harness
import wheels
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130

NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"   # a venv's interpreter nobody can run (the test's may live in /root)


def console_script_stack(t):
    root = t.tmp / "indexes"
    wheels.build_stack(str(root))
    wheels.clitool(str(root / "pypi" / "clitool"))
    return t.serve(root)


def odd_path(t, server):
    venv = t.cu128_venv(server, "my envs ü/ml env é")
    doc = t.upgrade_doc(server, venv, later_steps=[
        {"name": "cli", "index": "pypi", "packages": ["clitool==2.0"], "expect": {"clitool": {"version": "==2.0"}}}])
    manifest = t.manifest(doc, "odd.yaml")
    before = t.tree(venv)
    check_rc(t.stackup("apply", manifest), 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    r = harness.run([venv / "bin" / "clitool"])
    check(r.rc == 0 and "clitool 2.0 runs" in r.stdout, f"the console script under a path with spaces: {r}")
    check_rc(t.stackup("rollback", venv=venv), 0)
    t.assert_tree(venv, before, "after the rollback of the odd path's apply")


def back_and_forth(t, server):
    venv = t.cu128_venv(server, "pendulum")
    manifest = t.manifest(t.upgrade_doc(server, venv), "pendulum.yaml")
    old = t.tree(venv)
    check_rc(t.stackup("apply", manifest), 0)
    new = t.tree(venv)
    check(old != new, "the apply changed nothing")
    hist = harness.json.loads(t.stackup("history", "--json", venv=venv).stdout)
    applied = next(g for g in hist["generations"] if g["live"])
    for i in range(6):
        # back: rollback goes to the generation the live one was built from; forth: --to the applied one.
        if i % 2 == 0:
            check_rc(t.stackup("rollback", venv=venv), 0)
            t.assert_tree(venv, old, f"rollback {i + 1}")
        else:
            check_rc(t.stackup("rollback", "--to", str(applied["generation"]), venv=venv), 0)
            t.assert_tree(venv, new, f"roll forward {i + 1}")


def shared_state(t, server):
    a = t.cu128_venv(server, "shared-a")
    b = t.cu128_venv(server, "shared-b")
    ma = t.manifest(t.upgrade_doc(server, a), "a.yaml")
    mb = t.manifest(t.upgrade_doc(server, b), "b.yaml")
    a_old, b_old = t.tree(a), t.tree(b)
    check_rc(t.stackup("apply", ma), 0)
    t.assert_tree(b, b_old, "b after a's apply in the shared state dir")
    check_rc(t.stackup("apply", mb), 0)
    b_new = t.tree(b)
    check_rc(t.stackup("rollback", venv=a), 0)
    t.assert_tree(a, a_old, "a after its rollback")
    t.assert_tree(b, b_new, "b after a's rollback")
    check_rc(t.stackup("status", venv=b), 0)


def as_nobody(argv, home):
    return harness.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *map(str, argv)],
                       env=harness.child_env({"HOME": str(home), "STACKUP_UV": harness.find_uv()}))


def nobody_doc(t, server, venv, home):
    doc = t.upgrade_doc(server, venv)
    doc["env"] = {"UV_CACHE_DIR": str(home / "uv-cache"), **harness.OFFLINE_ENV}
    return doc


def unprivileged(t, server):
    if os.geteuid() != 0 or shutil.which("setpriv") is None or not os.path.exists(SYSTEM_PYTHON):
        harness.skip_part("the unprivileged-user cases need root, setpriv and /usr/bin/python3")
        return
    home = Path(tempfile.mkdtemp(prefix="stackup-nobody-"))
    try:
        os.chmod(home, 0o755)
        os.chown(home, NOBODY, NOBODY)
        stackup = harness.find_stackup()
        # Someone else's venv: root's, in a directory nobody can read.
        theirs = home / "root's venv"
        harness.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", theirs])
        t.uv_install(theirs, f"torch=={TORCH_CU128}", index=server.url("cu128"), default_index=server.url("pypi"))
        manifest = home / "theirs.yaml"
        manifest.write_text(harness.to_yaml(nobody_doc(t, server, theirs, home)) + "\n")
        os.chmod(manifest, 0o644)
        before = t.tree(theirs)
        r = as_nobody([stackup, "apply", manifest, "--state-dir", home / "state"], home)
        check_rc(r, 3)
        check_says(r, str(theirs))
        t.assert_tree(theirs, before, "someone else's venv after nobody's apply")

        # Nobody's own venv, read-only: exit 3, untouched; writable again: upgraded.
        own = home / "own"
        check(as_nobody([SYSTEM_PYTHON, "-m", "venv", "--without-pip", own], home).rc == 0, "nobody's venv")
        r = as_nobody([harness.find_uv(), "pip", "install", "--no-config", "--cache-dir", home / "uv-cache",
                       "--python", own / "bin" / "python", "--index", server.url("cu128"), "--default-index",
                       server.url("pypi"), f"torch=={TORCH_CU128}", f"torchvision=={wheels.VISION_CU128}",
                       f"sgl-kernel=={wheels.SGL_KERNEL_PYPI}"], home)
        check(r.rc == 0, f"nobody's uv install: {r}")
        manifest = home / "own.yaml"
        manifest.write_text(harness.to_yaml(nobody_doc(t, server, own, home)) + "\n")
        check(as_nobody(["chmod", "-R", "a-w", own], home).rc == 0, "chmod -R a-w")
        before = t.tree(own)
        r = as_nobody([stackup, "apply", manifest, "--state-dir", home / "state"], home)
        check_rc(r, 3)
        t.assert_tree(own, before, "nobody's read-only venv after its apply")
        check(as_nobody(["chmod", "-R", "u+w", own], home).rc == 0, "chmod -R u+w")
        r = as_nobody([stackup, "apply", manifest, "--state-dir", home / "state"], home)
        check_rc(r, 0)
        check_module(t.module(own, "torch"), TORCH_CU130, "13.0")
        for dirpath, dirnames, filenames in os.walk(own):
            for name in dirnames + filenames:
                st = os.lstat(os.path.join(dirpath, name))
                check(st.st_uid == NOBODY, f"{os.path.join(dirpath, name)} is not nobody's after nobody's apply")
    finally:
        subprocess.run(["chmod", "-R", "u+w", home], check=False)
        shutil.rmtree(home, ignore_errors=True)


def scenario(t):
    server = console_script_stack(t)
    odd_path(t, server)
    back_and_forth(t, server)
    shared_state(t, server)
    unprivileged(t, server)
    t.assert_nothing_left("at the end")


harness.main(scenario)

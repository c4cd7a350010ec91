"""`apply --dry-run` is the real pipeline with the install stage swapped for uv's own
--dry-run: the plan, the exact uv command of each step (pins included) and uv's report,
and nothing touched: the tree digest is unchanged, no snapshot, no journal, torch still cu128.
A step whose uv dry run fails exits 4 and still touches nothing. On a venv made by
`python -m venv` and pip (as servers are), where uv has never run, uv's dry run creates its
`.lock` in the venv: stackup removes it again, so the tree digest is unchanged there too.
"""
import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130


def untouched(t, venv, before, what):
    t.assert_tree(venv, before, what)
    check(not list(t.state_dir.glob("*/snapshots/*")), f"{what}: a snapshot was taken")
    check(not list(t.state_dir.glob("*/journal")), f"{what}: a journal was left")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    before = t.tree(venv)

    r = t.stackup("apply", "--dry-run", t.manifest(t.upgrade_doc(server, venv)))
    check_rc(r, 0)
    check_says(r, "$ ", "pip install", "--dry-run", f"torch=={TORCH_CU130}", "--reinstall-package torch",
               "Would install", "nothing was touched")
    untouched(t, venv, before, "after a dry run")

    broken = {"name": "broken", "index": "pypi", "packages": ["brokendep"]}
    r = t.stackup("apply", "--dry-run", t.manifest(t.upgrade_doc(server, venv, later_steps=[broken]), "broken.yaml"))
    check_rc(r, 4)
    check_says(r, "broken", "nothing was touched")
    untouched(t, venv, before, "after a failing dry run")


def pip_venv(t, server):
    """A venv made by python -m venv, its cu128 stack installed by its own pip: no uv has touched it."""
    venv = t.tmp / "pip-venv"
    r = harness.run([harness.sys.executable, "-m", "venv", venv], echo=False)
    check(r.rc == 0, f"python -m venv failed:\n{r}")
    r = harness.run([venv / "bin" / "pip", "install", "-q", "--no-cache-dir", "--disable-pip-version-check",
                     "--index-url", server.url("cu128"), "--extra-index-url", server.url("pypi"),
                     f"torch=={TORCH_CU128}", "torchvision==0.25.0+cu128"], echo=False)
    check(r.rc == 0, f"pip install failed:\n{r}")
    check(not (venv / ".lock").exists(), "setup: the pip venv already has uv's .lock")
    return venv


def scenario_pip(t, server):
    venv = pip_venv(t, server)
    before = t.tree(venv)
    r = t.stackup("apply", "--dry-run", t.manifest(t.upgrade_doc(server, venv), "pip.yaml"))
    check_rc(r, 0)
    check(not (venv / ".lock").exists(), "the dry run left uv's .lock in the venv")
    untouched(t, venv, before, "after a dry run on a pip-made venv")


def both(t):
    scenario(t)
    scenario_pip(t, t._servers[0])


harness.main(both)

"""(g) `stackup rollback` after a successful apply restores the pre-apply tree exactly:
once with the very command apply printed under "to undo:" (state dir and snapshot id
included), once as plain `stackup rollback --venv V` (the latest snapshot). The apply
left the snapshot's ready tree built, equal to the pre-apply venv (fails if apply stops
preparing it while uv runs, or prepares a wrong one). A venv changed by hand, a file replaced
included, is rolled back to its generation, whose bytes only the object store kept."""
import json
import os
import re
import shlex
from pathlib import Path

import harness
from harness import check, check_module, check_rc, find_stackup, run, child_env
from wheels import TORCH_CU128, TORCH_CU130


def undo_command(result):
    for line in result.stdout.splitlines():
        if line.startswith("to undo: "):
            argv = shlex.split(line[len("to undo: "):])
            check(argv[:2] == ["stackup", "rollback"], f"odd undo command: {line}", result)
            return [find_stackup(), *argv[1:]]
    raise AssertionError(f"apply printed no 'to undo:' line\n{result}")


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    manifest = t.manifest(t.upgrade_doc(server, venv))
    before = t.tree(venv)

    applied = t.stackup("apply", manifest)
    check_rc(applied, 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check(t.tree(venv) != before, "the apply changed nothing")
    (ready,) = t.state_dir.glob("*/snapshots/*/ready")
    t.assert_tree(ready, before, "the ready tree apply built while uv ran")

    check_rc(run(undo_command(applied), env=child_env({"STACKUP_UV": t.uv_path})), 0)
    t.assert_tree(venv, before, "after the printed undo command")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")

    check_rc(t.stackup("apply", manifest), 0)
    check_rc(t.stackup("rollback", venv=venv), 0)
    t.assert_tree(venv, before, "after stackup rollback (latest)")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")

    # A venv changed by hand since its generation: the rollback undoes the hand change (back to
    # the applied generation, not past it to cu128) and keeps the changed tree as a generation of
    # its own, which `rollback --to` brings back. Rollback judges the drift while it stages the
    # target it would take otherwise; this is the path where that guess is wrong.
    check_rc(t.stackup("apply", manifest), 0)
    applied_tree = t.tree(venv)
    # The hand change also replaces a file, as pip does (a new inode renamed over it). The live
    # generation, just switched in, has no tree but the venv (no ready/ of its own), so its
    # file's bytes live on only in the store's .objects: the rollback must bring them back.
    live = json.loads(t.stackup("history", "--json", venv=venv).stdout)["live"]
    check(live is not None and not list(t.state_dir.glob(f"*/snapshots/{live}/ready")),
          f"the switched-in generation {live} has a tree besides the venv")
    site = next(Path(venv).glob("lib/python3*/site-packages"))
    hand = site / "handmade.py"
    hand.write_text("made = 'by hand'\n")
    replaced = site / "torch" / "__init__.py"
    original = replaced.read_bytes()
    fresh = replaced.with_name(".hand-" + replaced.name)
    fresh.write_bytes(original + b"# changed by hand\n")
    os.replace(fresh, replaced)
    r = t.stackup("rollback", venv=venv)
    check_rc(r, 0)
    check("had changed since its last generation" in r.output, "the hand change was not kept as a generation", r)
    t.assert_tree(venv, applied_tree, "after the rollback of a venv changed by hand")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    kept = re.search(r"kept as generation (\d+)", r.output)
    check(kept is not None, "the rollback named no generation for the hand change", r)
    check_rc(t.stackup("rollback", "--to", kept.group(1), venv=venv), 0)
    check(hand.read_text() == "made = 'by hand'\n", "rollback --to the kept generation lost the hand change")
    check(replaced.read_bytes() == original + b"# changed by hand\n",
          "rollback --to the kept generation lost the hand-replaced file")


harness.main(scenario)

"""A hard-link snapshot shares its files' inodes with the venv, so a file written in place
changes the snapshot too: such a snapshot must never be restored (wrong bytes), and an apply
must tell the truth about it. Blue/green makes this sharper: the base snapshot, the clone the
steps and checks run in, and the live venv are hard links of one another.

1. Something outside writes the live venv's pyvenv.cfg in place while the apply builds the next
   generation (step 2 held in the index server): the apply refuses to switch (exit 9, "changed
   while the next generation was built", naming pyvenv.cfg, saying the venv keeps that change and
   never "nothing was changed") and leaves the venv exactly as that writer left it (tree, root inode, the old torch); the generation is discarded, so the base is
   the only snapshot; the base shares the written inode, so `rollback --to` it refuses with
   exit 5 naming pyvenv.cfg, leaving the venv as it is: never wrong bytes restored.
2. A copy snapshot shares nothing: `--snapshot-strategy copy` runs the apply in place (its
   `mode` says so, with the reason), the manifest's own check appends to the venv's pyvenv.cfg
   (in the venv itself: its root directory is the same inode after the commit), the snapshot
   stays whole (no `snapshot_damage`), and its rollback restores the venv exactly, pyvenv.cfg
   included.
3. The manifest's own check appends to pyvenv.cfg in a blue/green apply: it runs in the clone,
   whose pyvenv.cfg is the live venv's inode, so the write reaches the live venv and damages the
   base. The apply refuses to switch (exit 9, the old torch still imports, the generation
   discarded), `rollback --to` the base refuses with exit 5 naming pyvenv.cfg, and what the
   apply says must match the venv's real state: when the live venv's tree is not what it was,
   the apply may not claim "nothing was changed" (text) or `venv_changed: false` (--json), and
   it names the damaged base snapshot's file at once (`snapshot_damage`), as an in-place apply
   always has.
"""
import json
import os

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130

APPEND = "import sys; open(sys.prefix + '/pyvenv.cfg', 'a').write('# written in place\\n')"
HELD = "/sglang-cu130/sgl-kernel/sgl_kernel-"


def snapshots_of(t, venv):
    r = t.stackup("snapshots", "list", "--json", venv=venv)
    check_rc(r, 0)
    return [s["id"] for s in json.loads(r.stdout)["snapshots"]]


def refused_rollback(t, venv, snap, what):
    """`rollback --to snap` refuses with 5 naming pyvenv.cfg and leaves the venv as it is."""
    as_is = t.tree(venv)
    root = os.stat(venv).st_ino
    r = t.stackup("rollback", "--to", snap, venv=venv)
    check_rc(r, 5)
    check_says(r, "damaged", "pyvenv.cfg")
    t.assert_tree(venv, as_is, f"the refused rollback ({what})")
    check(os.stat(venv).st_ino == root, f"the refused rollback replaced the venv's root ({what})")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


def outside_write(t, server):
    venv = t.cu128_venv(server, name="venv-outside")
    manifest = t.manifest(t.upgrade_doc(server, venv), "outside.yaml")
    root = os.stat(venv).st_ino
    apply, log = t.held_apply(server, manifest, HELD, "outside.log")
    try:
        with open(venv / "pyvenv.cfg", "a") as f:   # in place: the same inode
            f.write("# written by someone else during the apply\n")
        written = t.tree(venv)
    finally:
        server.rules.clear()
        apply.wait(timeout=harness.CHILD_TIMEOUT_S)
        out = harness.end_background(apply, log, "apply during an outside write")
    check(apply.returncode == 9, f"expected exit 9 (stackup could not finish), got {apply.returncode}")
    for words in ("changed while the next generation was built", "pyvenv.cfg", "it keeps that change"):
        check(words in out, f"the apply does not say {words!r}")
    check(f"nothing was changed in {venv}" not in out, "the apply claims nothing was changed in the venv")
    t.assert_tree(venv, written, "the venv after the refused switch")
    check(os.stat(venv).st_ino == root, "the refused apply replaced the venv's root directory")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
    snaps = snapshots_of(t, venv)
    check(len(snaps) == 1, f"the discarded generation is still in the store: {snaps}")
    refused_rollback(t, venv, snaps[0], "base damaged by an outside write")


def copy_in_place(t, server):
    venv = t.cu128_venv(server, name="venv-copy")
    doc = t.upgrade_doc(server, venv)
    doc["checks"] = [*doc["checks"], {"name": "writes in place", "python": APPEND}]
    manifest = t.manifest(doc, "copy.yaml")
    before = t.tree(venv)
    root = os.stat(venv).st_ino
    r = t.stackup("apply", manifest, "--json", "--snapshot-strategy", "copy")
    check_rc(r, 0)
    out = json.loads(r.stdout)
    check(out["mode"] == "in-place" and "copy" in (out["mode_reason"] or ""), f"mode: {out['mode']}, "
                                                                                 f"{out['mode_reason']}")
    check(os.stat(venv).st_ino == root, "an in-place apply replaced the venv's root directory")
    check((venv / "pyvenv.cfg").read_text().endswith("# written in place\n"), "the check did not write the venv")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check(out["snapshot_damage"] == [], f"a copy snapshot reported damage: {out['snapshot_damage']}")
    check_rc(t.stackup("rollback", manifest, "--to", out["snapshot"]["id"]), 0)
    t.assert_tree(venv, before, "the rollback to the copy snapshot")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")


def check_writes_through_clone(t, server):
    venv = t.cu128_venv(server, name="venv-hardlink")
    doc = t.upgrade_doc(server, venv)
    doc["checks"] = [*doc["checks"], {"name": "writes in place", "python": APPEND}]
    manifest = t.manifest(doc, "hardlink.yaml")
    before = t.tree(venv)
    root = os.stat(venv).st_ino
    r = t.stackup("apply", manifest, "--json")
    check_rc(r, 9)  # stackup could not finish: the live venv changed under it
    out = json.loads(r.stdout)
    check(out["errors"][0]["code"] == "not_finished", f"errors: {out['errors']}")
    check(out["mode"] == "blue-green" and not out["switched"], f"mode {out['mode']}, switched {out['switched']}")
    check_says(r, "changed while the next generation was built", "pyvenv.cfg")
    check(os.stat(venv).st_ino == root, "the refused apply replaced the venv's root directory")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
    base = out["snapshot"]["id"]
    check(snapshots_of(t, venv) == [base], "the discarded generation is still in the store")
    now = t.tree(venv)
    refused_rollback(t, venv, base, "base damaged by the manifest's check")

    # The apply's words against the venv's real state.
    if now != before:
        print("the live venv changed during the failed apply:\n" + harness.treedigest.diff(before, now),
              flush=True)
        false_claims = []
        if f"nothing was changed in {venv}" in r.output:
            false_claims.append(f'says "nothing was changed in {venv}"')
        if out["venv_changed"] is False:
            false_claims.append("reports venv_changed: false in --json")
        if not any("pyvenv.cfg" in d for d in out["snapshot_damage"]):
            false_claims.append(f"names no damage of its base snapshot (snapshot_damage {out['snapshot_damage']})")
        check(not false_claims, "the manifest's check wrote pyvenv.cfg in place in the clone, which shares its "
                                "inode with the live venv and the base snapshot, so the live venv changed and the "
                                "base is damaged (its rollback refuses); yet the failed apply "
                                + "; ".join(false_claims))


def scenario(t):
    server = t.serve_stack()
    outside_write(t, server)
    copy_in_place(t, server)
    check_writes_through_clone(t, server)


harness.main(scenario)

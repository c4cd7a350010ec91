"""`--json` on every command, in success and in failure: stdout is exactly one JSON document
(json.loads of the whole stream), `ok` is true exactly when the exit code is 0, `exit_code`
is the process's, and the fields of each command are there. The venv's real state is checked
beside the documents (a document saying "applied" over an untouched venv would fail).

apply is blue/green: a failed apply's document says so (`mode` "blue-green", `rolled_back`,
`switched` and `venv_changed` false) over a venv whose tree and root inode are as before, and
it leaves only its base snapshot; a committed apply names that base (reused, not taken again)
and the new generation it switched in, and the old tree lies in the state dir, exactly as it
was. `snapshots delete` of the live generation is a mistake (2), and `rollback` switches back
to the generation the live one was built from."""
import json
import os
from pathlib import Path

import harness
from harness import check, check_module, check_rc, check_says
from wheels import TORCH_CU128, TORCH_CU130

COMMON = {"schema", "command", "ok", "exit_code", "venv", "errors"}


def doc_of(result, command, rc):
    check_rc(result, rc)
    try:
        doc = json.loads(result.stdout)
    except json.JSONDecodeError as e:
        raise AssertionError(f"stdout is not one JSON document ({e}):\n{result}")
    missing = COMMON - doc.keys()
    check(not missing, f"{command}: missing {missing}", result)
    check(doc["command"] == command, f"command {doc['command']!r}, expected {command!r}", result)
    check(doc["exit_code"] == rc and doc["ok"] == (rc == 0), f"ok/exit_code wrong: {doc}", result)
    check(doc["schema"] == 1, f"schema {doc['schema']}")
    for e in doc["errors"]:
        check({"code", "message"} <= e.keys(), f"error without code/message: {e}")
    check((rc == 0) == (not doc["errors"]), f"errors {doc['errors']} with exit {rc}")
    return doc


def step_fields(doc):
    for step in doc["steps"]:
        check({"name", "index", "status", "packages", "checks"} <= step.keys(), f"step fields: {step}")
        for p in step["packages"]:
            check({"name", "before", "after"} <= p.keys(), f"package fields: {p}")
        for c in step["checks"]:
            check({"dist", "field", "expected", "found", "ok"} <= c.keys(), f"check fields: {c}")


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    doc = t.upgrade_doc(server, venv)
    manifest = t.manifest(doc)
    venv_path = str(venv.resolve())

    # plan: the exact file of each package.
    plan = doc_of(t.stackup("plan", manifest, "--json"), "plan", 0)
    check(plan["venv"] == venv_path, f"venv {plan['venv']}")
    step_fields(plan)
    torch = plan["steps"][0]["packages"][0]
    check(torch["name"] == "torch" and torch["before"] == TORCH_CU128 and torch["after"] == TORCH_CU130
          and torch["file"].endswith(".whl") and len(torch["sha256"]) == 64, f"planned torch: {torch}")

    # plan failure: a package on none of the indexes.
    missing = dict(doc, steps=[*doc["steps"], {"name": "ghost", "index": "pypi", "packages": ["no-such-pkg"]}])
    failed = doc_of(t.stackup("plan", t.manifest(missing, "missing.yaml"), "--json"), "plan", 3)
    check(any(e["code"] == "preflight_failed" and e.get("dist") == "no-such-pkg" and e.get("step") == "ghost"
              for e in failed["errors"]), f"errors: {failed['errors']}")

    # apply --dry-run: the pins, touching nothing.
    before = t.tree(venv)
    dry = doc_of(t.stackup("apply", "--dry-run", manifest, "--json"), "apply", 0)
    check(dry["dry_run"] is True and dry["changed"] is False and dry["would_change"] is True
          and dry["snapshot"] is None, f"dry: {dry}")
    check(any(f"torch=={TORCH_CU130}" in line for line in dry["steps"][0]["requirements"]), "no pin")
    t.assert_tree(venv, before, "apply --dry-run --json")

    # apply that fails verification: built and verified beside the venv, never switched in;
    # errors carry step/dist/field/expected/found.
    root_inode = os.stat(venv).st_ino
    bad = t.manifest(t.upgrade_doc(server, venv, torch_cuda="13.1"), "bad.yaml")
    r = t.stackup("apply", bad, "--json")
    failed_apply = doc_of(r, "apply", 1)
    check(failed_apply["mode"] == "blue-green" and failed_apply["rolled_back"] is False
          and failed_apply["switched"] is False and failed_apply["venv_changed"] is False
          and failed_apply["changed"] is False and failed_apply["generation"] is None
          and failed_apply["venv_fate"] == "unchanged",
          f"failed apply: {failed_apply}")
    check_says(r, f"nothing was changed in {venv}")
    check(any(e.get("dist") == "torch" and e.get("field") == "cuda" and e.get("expected") == "13.1"
              and e.get("found") == "13.0" for e in failed_apply["errors"]), f"errors: {failed_apply['errors']}")
    step_fields(failed_apply)
    t.assert_tree(venv, before, "the failed apply")
    check(os.stat(venv).st_ino == root_inode, "the failed apply replaced the venv's root directory")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
    snap = failed_apply["snapshot"]["id"]
    check(Path(failed_apply["clone"]).is_relative_to(t.state_dir.resolve()),
          f"the clone is not in the state dir: {failed_apply['clone']}")
    left = doc_of(t.stackup("snapshots", "list", manifest, "--json"), "snapshots list", 0)
    check([s["id"] for s in left["snapshots"]] == [snap],
          f"a failed apply leaves its base snapshot alone: {left['snapshots']}")

    # apply: changed, switched in; the base named, every check listed with what was found.
    applied = doc_of(t.stackup("apply", manifest, "--json"), "apply", 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    step_fields(applied)
    check(applied["changed"] is True and applied["snapshot"]["id"] == snap, f"applied: {applied}")
    check(applied["mode"] == "blue-green" and applied["switched"] is True and applied["venv_changed"] is True
          and applied["rolled_back"] is False and applied["venv_fate"] == "switched", f"applied: {applied}")
    gen = applied["generation"]["id"]
    check(gen != snap and applied["generation"]["number"] >= 2, f"generation: {applied['generation']}")
    check(os.stat(venv).st_ino != root_inode, "the venv's root is the same directory: not switched")
    old_tree = Path(applied["clone"])
    check(os.stat(old_tree).st_ino == root_inode, f"{old_tree} is not the old venv directory")
    t.assert_tree(old_tree, before, "the old tree kept in the state dir")
    rows = {p["name"]: p for p in applied["steps"][0]["packages"]}
    check(rows["torch"]["before"] == TORCH_CU128 and rows["torch"]["after"] == TORCH_CU130, f"rows {rows}")
    check({"dist": "torch", "field": "cuda", "expected": "13.0", "found": "13.0", "ok": True}.items()
          <= next(c for c in applied["steps"][0]["checks"] if c["field"] == "cuda").items(), "cuda check")
    after = t.tree(venv)

    # verify: ok, then a failing expectation.
    verified = doc_of(t.stackup("verify", manifest, "--json"), "verify", 0)
    check(verified["checks"] and all(c["ok"] for c in verified["checks"]), f"checks: {verified['checks']}")
    failed = doc_of(t.stackup("verify", bad, "--json"), "verify", 1)
    check(any(not c["ok"] and c["field"] == "cuda" for c in failed["checks"]), f"checks: {failed['checks']}")

    # status, snapshots: the base and the live generation built from it.
    status = doc_of(t.stackup("status", manifest, "--json"), "status", 0)
    check(status["lock"]["state"] == "free" and status["interrupted"] is None, f"status: {status}")
    check({s["id"] for s in status["snapshots"] if "own_bytes" in s} == {snap, gen}, f"snapshots {status}")
    check(status["last_apply"]["result"] == "committed", f"last apply: {status['last_apply']}")
    check(status["live_generation"]["id"] == gen, f"live generation: {status['live_generation']}")
    listed = doc_of(t.stackup("snapshots", "list", manifest, "--json"), "snapshots list", 0)
    check([s["id"] for s in listed["snapshots"]] == [gen, snap], f"list: {listed}")
    shown = doc_of(t.stackup("snapshots", "show", snap, manifest, "--json"), "snapshots show", 0)
    check(shown["snapshot"]["distributions"].get("torch") == TORCH_CU128
          and shown["snapshot"]["outcome"] == "snapshot", f"show: {shown}")
    shown = doc_of(t.stackup("snapshots", "show", gen, manifest, "--json"), "snapshots show", 0)
    check(shown["snapshot"]["distributions"].get("torch") == TORCH_CU130 and shown["snapshot"]["parent"] == snap
          and shown["snapshot"]["outcome"] == "applied"
          and {"name": "torch", "before": TORCH_CU128, "after": TORCH_CU130} in shown["snapshot"]["changes"],
          f"show: {shown}")
    live = doc_of(t.stackup("snapshots", "delete", gen, manifest, "--json"), "snapshots delete", 2)
    check("live" in live["errors"][0]["message"], f"errors: {live['errors']}")
    # A copy snapshot is never the live generation: create and delete it.
    created = doc_of(t.stackup("snapshots", "create", "--label", "json", manifest, "--json",
                               "--snapshot-strategy", "copy"), "snapshots create", 0)
    check(created["snapshot"]["label"] == "json", f"create: {created}")
    deleted = doc_of(t.stackup("snapshots", "delete", created["snapshot"]["id"], manifest, "--json"),
                     "snapshots delete", 0)
    check(deleted["deleted"] == [created["snapshot"]["id"]], f"delete: {deleted}")
    listed = doc_of(t.stackup("snapshots", "list", manifest, "--json"), "snapshots list", 0)
    check([s["id"] for s in listed["snapshots"]] == [gen, snap], f"list after delete: {listed}")
    unknown = doc_of(t.stackup("snapshots", "show", "no-such-id", manifest, "--json"), "snapshots show", 2)
    check("no-such-id" in unknown["errors"][0]["message"], f"errors: {unknown['errors']}")
    t.assert_tree(venv, after, "the snapshots commands")

    # rollback: back to cu128, the generation the live one was built from, exactly.
    rolled_back = doc_of(t.stackup("rollback", manifest, "--json"), "rollback", 0)
    check(rolled_back["snapshot"]["id"] == snap and rolled_back["replaced"]["id"] == gen,
          f"rollback: {rolled_back}")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")
    t.assert_tree(venv, before, "the rollback")
    check(os.stat(venv).st_ino == root_inode, "rollback did not switch the old tree back in")

    # An interrupted run (a journal whose run died before its snapshot): status and apply exit 7.
    state = next(t.state_dir.glob("*/snapshots")).parent
    started = {"record": "started", "version": 1, "time": "2026-12-02T10:00:00Z",
               "manifest": str(manifest), "venv": venv_path, "pid": 424242, "host": "vm"}
    (state / "journal").write_text(json.dumps(started) + "\n")
    interrupted = doc_of(t.stackup("status", manifest, "--json"), "status", 7)
    check(interrupted["interrupted"]["pid"] == 424242 and interrupted["interrupted"]["touched"] is False,
          f"interrupted: {interrupted['interrupted']}")
    check(interrupted["errors"][0]["code"] == "interrupted", f"errors: {interrupted['errors']}")
    refused = doc_of(t.stackup("apply", manifest, "--json"), "apply", 7)
    check("424242" in refused["errors"][0]["message"], f"errors: {refused['errors']}")
    doc_of(t.stackup("rollback", manifest, "--json"), "rollback", 0)

    # An unknown snapshot is a mistake (2), not a failed restore (5).
    doc_of(t.stackup("rollback", manifest, "--to", "no-such-id", "--json"), "rollback", 2)

    # A manifest error names file, line and column; a usage error is a document too.
    broken = t.tmp / "broken.yaml"
    broken.write_text(manifest.read_text().replace("default_index:", "default_indx:"))
    bad_doc = doc_of(t.stackup("plan", broken, "--json"), "plan", 2)
    e = bad_doc["errors"][0]
    check(e["file"].endswith("broken.yaml") and e["line"] > 0 and e["column"] > 0, f"error: {e}")
    doc_of(t.stackup("plan", manifest, "--json", "--no-such-option"), "", 2)


harness.main(scenario)

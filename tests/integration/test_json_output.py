"""`--json` on every command, in success and in failure: stdout is exactly one JSON document
(json.loads of the whole stream), `ok` is true exactly when the exit code is 0, `exit_code`
is the process's, and the fields of each command are there. The venv's real state is checked
beside the documents (a document saying "applied" over an untouched venv would fail)."""
import json

import harness
from harness import check, check_module, check_rc
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

    # apply that fails verification: rolled back, errors carry step/dist/field/expected/found.
    bad = t.manifest(t.upgrade_doc(server, venv, torch_cuda="13.1"), "bad.yaml")
    rolled = doc_of(t.stackup("apply", bad, "--json"), "apply", 1)
    check(rolled["rolled_back"] is True and rolled["changed"] is False, f"rolled: {rolled}")
    check(any(e.get("dist") == "torch" and e.get("field") == "cuda" and e.get("expected") == "13.1"
              and e.get("found") == "13.0" for e in rolled["errors"]), f"errors: {rolled['errors']}")
    step_fields(rolled)
    t.assert_tree(venv, before, "the rolled-back apply")

    # apply: changed, the snapshot named, every check listed with what was found.
    applied = doc_of(t.stackup("apply", manifest, "--json"), "apply", 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    step_fields(applied)
    check(applied["changed"] is True and applied["snapshot"]["id"], f"applied: {applied}")
    rows = {p["name"]: p for p in applied["steps"][0]["packages"]}
    check(rows["torch"]["before"] == TORCH_CU128 and rows["torch"]["after"] == TORCH_CU130, f"rows {rows}")
    check({"dist": "torch", "field": "cuda", "expected": "13.0", "found": "13.0", "ok": True}.items()
          <= next(c for c in applied["steps"][0]["checks"] if c["field"] == "cuda").items(), "cuda check")
    snap = applied["snapshot"]["id"]

    # verify: ok, then a failing expectation.
    verified = doc_of(t.stackup("verify", manifest, "--json"), "verify", 0)
    check(verified["checks"] and all(c["ok"] for c in verified["checks"]), f"checks: {verified['checks']}")
    failed = doc_of(t.stackup("verify", bad, "--json"), "verify", 1)
    check(any(not c["ok"] and c["field"] == "cuda" for c in failed["checks"]), f"checks: {failed['checks']}")

    # status, snapshots.
    status = doc_of(t.stackup("status", manifest, "--json"), "status", 0)
    check(status["lock"]["state"] == "free" and status["interrupted"] is None, f"status: {status}")
    check(any(s["id"] == snap and "own_bytes" in s for s in status["snapshots"]), f"snapshots {status}")
    check(status["last_apply"]["result"] == "committed", f"last apply: {status['last_apply']}")
    listed = doc_of(t.stackup("snapshots", "list", manifest, "--json"), "snapshots list", 0)
    check([s["id"] for s in listed["snapshots"]][:1] == [snap], f"list: {listed}")
    shown = doc_of(t.stackup("snapshots", "show", snap, manifest, "--json"), "snapshots show", 0)
    check(shown["snapshot"]["distributions"].get("torch") == TORCH_CU128, f"show: {shown}")
    created = doc_of(t.stackup("snapshots", "create", "--label", "json", manifest, "--json"),
                     "snapshots create", 0)
    check(created["snapshot"]["label"] == "json", f"create: {created}")
    deleted = doc_of(t.stackup("snapshots", "delete", created["snapshot"]["id"], manifest, "--json"),
                     "snapshots delete", 0)
    check(deleted["deleted"] == [created["snapshot"]["id"]], f"delete: {deleted}")
    unknown = doc_of(t.stackup("snapshots", "show", "no-such-id", manifest, "--json"), "snapshots show", 2)
    check("no-such-id" in unknown["errors"][0]["message"], f"errors: {unknown['errors']}")

    # rollback: back to cu128.
    rolled_back = doc_of(t.stackup("rollback", manifest, "--json"), "rollback", 0)
    check(rolled_back["snapshot"]["id"] == snap, f"rollback: {rolled_back}")
    check_module(t.module(venv, "torch"), TORCH_CU128, "12.8")

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

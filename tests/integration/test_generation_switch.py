"""Blue/green apply with the real uv: every step runs in a clone beside the live venv, which
one RENAME_EXCHANGE switches in. Checks the venv's real state, not stackup's words:
- an observer polling the venv's site-packages during a 3-step apply (step 2's wheel held in
  the index server for a while) only ever sees the whole old set of distributions or the
  whole new one (fails if any step runs in the live venv);
- the live venv's root directory is another inode after the switch, and the old tree now
  lies in the state dir with the old tree digest (nothing was copied to keep it);
- a console script the upgrade installed runs, and no file anywhere under the venv names the
  clone's path (a grep of every byte), and its RECORD line matches the rewritten script;
- the verification's imports left bytecode in the new generation, naming the venv's path
  (`stackup verify` writes none: checked last);
- `history` lists both generations, the new one live, with what changed and the exact pins
  (with their sha256) each step installed;
- `rollback` switches back (the old digest, the old versions), `rollback --to` the newer one
  switches forward again (the new digest), each an exchange: the root inodes trade places.
"""
import base64
import hashlib
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import harness
from harness import check, check_rc, check_says
import wheels


def dists(venv):
    """The distributions site-packages lists now, in one directory read."""
    site = next(Path(venv).glob("lib/python3*/site-packages"))
    return frozenset(n for n in os.listdir(site) if n.endswith(".dist-info"))


def grep_tree(root, needle):
    hits = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as f:
                if needle in f.read():
                    hits.append(path)
    return hits


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def scenario(t):
    root = t.tmp / "indexes"
    wheels.build_stack(str(root))
    # A third step whose wheel has a console script: uv writes its shebang with the clone's path.
    wheels.clitool(str(root / "pypi" / "clitool"))
    server = t.serve(root)
    venv = t.cu128_venv(server)
    doc = t.upgrade_doc(server, venv, later_steps=[
        {"name": "cli", "index": "pypi", "packages": ["clitool==2.0"], "expect": {"clitool": {"version": "==2.0"}}}])
    manifest = t.manifest(doc)
    before = t.tree(venv)
    old_set = dists(venv)
    old_root = os.stat(venv).st_ino

    # The observer: a thread reading the venv's site-packages as fast as it can.
    seen = set()
    stop = threading.Event()

    def observe():
        while not stop.is_set():
            try:
                seen.add(dists(venv))
            except (StopIteration, FileNotFoundError):
                seen.add(frozenset({"<no venv>"}))

    watcher = threading.Thread(target=observe, daemon=True)
    watcher.start()
    held = "/sglang-cu130/sgl-kernel/sgl_kernel-"
    apply, log = t.held_apply(server, manifest, held, "apply.log", "--json")
    time.sleep(1.0)   # step 1 is installed in the clone by now; the live venv must not show it
    check(dists(venv) == old_set, "the live venv changed while step 2 was held")
    server.rules.clear()
    rc = apply.wait(timeout=300)
    stop.set()
    watcher.join()
    log.seek(0)
    out = log.read()
    check(rc == 0, f"apply failed (rc {rc})", out)
    doc_out = json.loads(out[out.index("{"):])
    new_set = dists(venv)
    check(new_set != old_set, "the apply changed nothing")
    check(seen <= {old_set, new_set},
          "the observer saw a venv that was neither the whole old nor the whole new one: " +
          str([sorted(s - old_set - new_set) or sorted(s) for s in seen - {old_set, new_set}]))
    print(f"observer: {len(seen)} distinct state(s) seen, all whole", flush=True)
    check(doc_out["mode"] == "blue-green" and doc_out["switched"], f"not a blue/green switch: {doc_out}")

    # The switch: another root inode; the old tree lies in the state dir, exactly the old one.
    new_root = os.stat(venv).st_ino
    check(new_root != old_root, "the venv's root is the same directory: it was changed in place")
    clone = Path(doc_out["clone"])
    check(os.stat(clone).st_ino == old_root, f"{clone} is not the old tree (root inode)")
    t.assert_tree(clone, before, "the old tree kept in the state dir")

    # No file names the clone's path; the console script runs; its RECORD line is right.
    hits = grep_tree(venv, str(clone).encode())
    check(not hits, f"files still name the clone's path {clone}: {hits}")
    script = Path(venv) / "bin" / "clitool"
    # `#!<venv>/bin/python`, or for a long path uv's `#!/bin/sh` + `exec '<venv>/bin/python'`.
    head = "\n".join(script.read_text().splitlines()[:3])
    check(f"{venv}/bin/python" in head, f"the script does not name the venv's python: {head}")
    r = subprocess.run([str(script)], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "clitool 2.0 runs" in r.stdout, f"the console script fails: {r}")
    record = next(Path(venv).glob("lib/python3*/site-packages/clitool-2.0.dist-info/RECORD")).read_text()
    line = next(l for l in record.splitlines() if l.startswith("../../../bin/clitool,"))
    data = script.read_bytes()
    check(line == f"../../../bin/clitool,{record_hash(data)},{len(data)}", f"RECORD line is stale: {line}")

    # The generation was built with bytecode: each module the verification imported has its
    # .pyc in the live venv, naming the venv's path (the grep above: never the clone's), so
    # the next import reads it instead of compiling torch again.
    site = next(Path(venv).glob("lib/python3*/site-packages"))
    pycs = sorted((site / "torch" / "__pycache__").glob("__init__.*.pyc"))
    check(pycs and f"{site}/torch/__init__.py".encode() in pycs[0].read_bytes(),
          f"no bytecode naming the venv's path for torch: {pycs}")
    r = subprocess.run([f"{venv}/bin/python", "-c", "import torch; print(torch.__spec__.cached)"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and r.stdout.strip() == str(pycs[0]), f"torch's bytecode is not where it is read: {r}")
    after = t.tree(venv)

    # History: two generations, the new one live, with its changes.
    h = t.stackup("history", "--venv", venv, "--json")
    check_rc(h, 0)
    gens = json.loads(h.stdout)["generations"]
    check(len(gens) == 2 and gens[-1]["live"] and not gens[0]["live"], f"history: {gens}")
    changed = {c["name"]: (c["before"], c["after"]) for c in gens[-1]["changes"]}
    check(changed.get("torch") == (wheels.TORCH_CU128, wheels.TORCH_CU130), f"history changes: {changed}")
    check(changed.get("clitool") == (None, "2.0"), f"history changes: {changed}")
    pins = {p["step"]: p["requirements"] for p in gens[-1]["plan"]}
    check(any(l.startswith(f"torch=={wheels.TORCH_CU130} --hash=sha256:") for l in pins.get("torch", [])),
          f"the generation does not record the pins its apply installed: {pins}")

    # Rollback: an exchange back (the old root inode again), exact; then forward again.
    r = t.stackup("rollback", "--venv", venv, "--json")
    check_rc(r, 0)
    check(os.stat(venv).st_ino == old_root, "rollback did not switch the old tree back in")
    t.assert_tree(venv, before, "after rollback")
    check(json.loads(r.stdout)["replaced"]["number"] == gens[-1]["generation"], f"rollback: {r.stdout}")
    r = t.stackup("rollback", "--venv", venv, "--to", str(gens[-1]["generation"]))
    check_rc(r, 0)
    check(os.stat(venv).st_ino == new_root, "rollback --to the newer generation did not switch it back in")
    t.assert_tree(venv, after, "after rolling forward")
    check(not grep_tree(venv, str(clone).encode()), "a rollback brought the clone's path back")
    check_says(t.stackup("verify", manifest), "verified")
    # `stackup verify` judges without writing: a .pyc removed stays removed.
    pycs[0].unlink()
    check_says(t.stackup("verify", manifest), "verified")
    check(not pycs[0].exists(), "stackup verify wrote bytecode into the venv")


harness.main(scenario)

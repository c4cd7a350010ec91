"""An index that misbehaves, in each way a real one does, against `stackup plan` and `stackup
apply` (the torch project page of the PyTorch-like index served as PEP 691 JSON, so a cut body
is a broken document, not a shorter list; `--no-cache`, so every run really asks):
- a connection reset mid-body, a truncated JSON body, a wrong Content-Type, a 50 MB page, a
  server that trickles one byte a second, 429 on every try: each command ends in bounded time
  (HANG_GUARD_S, a hang guard only), exits 3 naming the index and what happened, and the venv's
  tree digest is what it was;
- 301, 302 and 307 to another path that serves the real page: followed, plan and apply succeed
  (torch 13.0 imported), and the rollback brings the old tree back;
- 429 with Retry-After: 1 once, then 200: retried, the page asked twice, apply succeeds.
"""
import subprocess
import time

import harness
from harness import check, check_module, check_rc, check_says
import wheels

HANG_GUARD_S = 60
PAGE = "/cu130/torch/"


def timed(t, *args):
    """`stackup ARGS --no-cache`, which must end within HANG_GUARD_S."""
    argv = [harness.find_stackup(), *args, "--no-cache", "--state-dir", t.state_dir]
    start = time.monotonic()
    try:
        proc = subprocess.run([str(a) for a in argv], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              env=harness.child_env({"STACKUP_UV": t.uv_path}), timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"{' '.join(map(str, argv))} still ran after {HANG_GUARD_S} s (a hang):\n"
                             f"{e.stdout}\n{e.stderr}") from None
    result = harness.Result(argv, proc)
    print(f"{result}(took {time.monotonic() - start:.1f} s)", flush=True)
    return result


def refused(t, server, manifest, venv, before, rule, *words):
    """plan and apply, run together under `rule`: both exit 3 naming the index and `words`."""
    with server.rules.applied([rule]), open(t.tmp / "plan.out", "w+") as out:
        plan = subprocess.Popen([str(a) for a in [harness.find_stackup(), "plan", manifest, "--no-cache",
                                                  "--state-dir", t.state_dir]],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=harness.child_env())
        apply = timed(t, "apply", manifest)
        try:
            plan.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            plan.kill()
            plan.wait()
            raise AssertionError(f"plan still ran after {HANG_GUARD_S} s under {rule}") from None
        out.seek(0)
        plan_text = out.read()
    print(f"--- plan under {rule} (rc={plan.returncode})\n{plan_text}", flush=True)
    check(plan.returncode == 3, f"plan under {rule}: expected exit 3, got {plan.returncode}")
    missing = [w for w in ("'pytorch'", *words) if w.lower() not in plan_text.lower()]
    check(not missing, f"plan under {rule} does not mention {missing}")
    check_rc(apply, 3)
    check_says(apply, "'pytorch'", *words)
    t.assert_tree(venv, before, f"after the apply under {rule}")


def followed(t, server, venv, before, status):
    """The index root answers `status` to another path: plan and apply follow it and succeed."""
    doc = t.upgrade_doc(server, venv)
    doc["indexes"]["pytorch"] = server.url(f"moved-{status}")
    manifest = t.manifest(doc, f"moved-{status}.yaml")
    with server.rules.applied([{"prefix": f"/moved-{status}/", "redirect": status, "to": "/cu130/"}]):
        plan = timed(t, "plan", manifest)
        check_rc(plan, 0)
        check_says(plan, wheels.TORCH_CU130)
        apply = timed(t, "apply", manifest)
        check_rc(apply, 0)
    check((f"/moved-{status}/torch/", status) in server.answers(f"/moved-{status}/"),
          f"/moved-{status}/torch/ was never answered {status}: {server.answers(f'/moved-{status}/')}")
    check_module(t.module(venv, "torch"), wheels.TORCH_CU130, "13.0")
    check_rc(t.stackup("rollback", "--venv", venv), 0)
    t.assert_tree(venv, before, f"the rollback after the apply through a {status}")


def scenario(t):
    root = wheels.build_stack(str(t.tmp / "indexes"))
    (t.tmp / "indexes" / "cu130" / ".format").write_text("json\n")
    server = t.serve(root)
    venv = t.cu128_venv(server)
    doc = t.upgrade_doc(server, venv)
    manifest = t.manifest(doc)
    before = t.tree(venv)

    refused(t, server, manifest, venv, before, {"prefix": PAGE, "reset_at": 200}, "did not answer for torch", "reset")
    refused(t, server, manifest, venv, before, {"prefix": PAGE, "truncate_at": 300},
            "answered for torch with no page stackup can read", "json")
    refused(t, server, manifest, venv, before, {"prefix": PAGE, "content_type": "application/octet-stream"},
            "answered for torch with no page stackup can read", "content type", "application/octet-stream")
    refused(t, server, manifest, venv, before, {"prefix": PAGE, "pad_bytes": 50 * 1000 * 1000},
            "torch", "too large", "50")
    refused(t, server, manifest, venv, before, {"prefix": PAGE, "trickle_bps": 1}, "torch", "too slow")
    refused(t, server, manifest, venv, before, {"prefix": PAGE, "status": 429, "retry_after": 1},
            "torch", "429", "gave up after 3 tries")

    # 429 once, with a short Retry-After, then the page: waited for and read.
    asked = len(server.requests(PAGE))
    once_429 = [{"prefix": PAGE, "status": 429, "retry_after": 1, "times": 1}]
    with server.rules.applied(once_429):
        plan = timed(t, "plan", manifest)
    check_rc(plan, 0)
    check_says(plan, wheels.TORCH_CU130)
    check(len(server.requests(PAGE)) - asked == 2, f"{PAGE} asked {len(server.requests(PAGE)) - asked} times, "
                                                   "expected 2 (429, then 200)", plan)
    with server.rules.applied(once_429):
        apply = timed(t, "apply", manifest)
    check_rc(apply, 0)
    check(("/cu130/torch/", 429) in server.answers(PAGE), "the apply's first request was not answered 429")
    check_module(t.module(venv, "torch"), wheels.TORCH_CU130, "13.0")
    check_rc(t.stackup("rollback", "--venv", venv), 0)
    t.assert_tree(venv, before, "the rollback after the apply that waited out a 429")

    for status in (301, 302, 307):
        followed(t, server, venv, before, status)


harness.main(scenario)

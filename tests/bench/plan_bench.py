#!/usr/bin/env python3
"""`stackup plan` network benchmark, run by hand (not by CTest); prints, asserts nothing.

Serves 8 plain packages on 3 local indexes (one manifest step per index, as in
tests/integration/test_plan_network.py), delays every page 400 ms, runs `stackup plan`
--runs times (default 5) and prints the median wall time, the sequential floor (the page
requests the server logged for one plan x 0.4 s) and median/floor: far below 1 means the pages are fetched
concurrently. One plan with no delay is timed first as a baseline (its fixed cost, e.g. probing the
venv, is in the median too), and median - baseline is printed in units of the delay.

Then the page cache, on the same manifest without its default index (a fallback index's 404s are
not kept, so they would be asked again): the indexes' pages are served with `Cache-Control: max-age=600` (and, a second
time, with the test index's default `no-cache`: every page revalidated, a 304 without a body), and
--runs times a cold plan (an empty --cache-dir) is followed by a warm one (the same folder), the
delay still on; prints the medians and warm/cold for each.

    python3 tests/bench/plan_bench.py --stackup build/stackup --uv .tools/venv/bin/uv [--runs 5] [--json F]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "tests" / "integration"), str(REPO / "tests" / "support")]

DELAY_MS = 400


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stackup", default="build/stackup", help="the stackup binary")
    ap.add_argument("--uv", default=".tools/venv/bin/uv", help="the uv binary")
    ap.add_argument("--runs", type=int, default=5, help="delayed plans; the median is reported")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args()
    os.environ["STACKUP_BIN"] = os.path.abspath(args.stackup)
    os.environ["STACKUP_UV"] = os.path.abspath(args.uv)

    import harness
    import test_plan_network as net  # noqa: E402 - its module-level harness.main is guarded below

    t = harness.Test("plan-bench")
    try:
        tree = net.build_tree(str(t.tmp / "indexes"))
        server = t.serve(tree)
        venv = t.make_venv()
        doc = net.plan_doc(t, server, venv)
        manifest = t.manifest(doc)
        # Without a default index no step falls back to another: the fallback's pages are 404s,
        # which are not kept, so a warm plan would still wait for them.
        own_index_only = t.manifest({k: v for k, v in doc.items() if k != "default_index"}, name="own-index-only.yaml")

        def plan(extra=(), which=None):
            argv = [harness.find_stackup(), "plan", which or manifest, "--state-dir", t.state_dir, *extra]
            before = len(server.requests())
            start = time.monotonic()
            r = harness.run(argv, env=harness.child_env({"STACKUP_UV": t.uv_path}), echo=False)
            elapsed = time.monotonic() - start
            if r.rc != 0:
                sys.exit(f"stackup plan failed:\n{r}")
            return elapsed, len(server.requests()) - before

        base_s, base_n = plan()
        print(f"baseline (no delay): {base_s:.3f} s, {base_n} page requests")
        server.rules.set([{"prefix": f"/{index}/", "delay_ms": DELAY_MS} for index in net.INDEXES])
        runs = [plan() for _ in range(args.runs)]

        def cache_runs(cache_control):
            for index in net.INDEXES:
                Path(tree, index, ".cache-control").write_text(cache_control + "\n")
            cold, warm = [], []
            for n in range(args.runs):
                cache = t.tmp / f"page-cache-{cache_control}-{n}"
                cold.append(plan(["--cache-dir", cache], own_index_only)[0])
                warm.append(plan(["--cache-dir", cache], own_index_only)[0])
            return statistics.median(cold), statistics.median(warm)

        cached = {cc: cache_runs(cc) for cc in ("max-age=600", "no-cache")}
        server.rules.clear()
        times = [s for s, _ in runs]
        requests = runs[0][1]
        median = statistics.median(times)
        floor = requests * DELAY_MS / 1000.0
        print(f"delayed {DELAY_MS} ms: runs " + ", ".join(f"{s:.3f}" for s in times) + " s")
        print(f"median: {median:.3f} s")
        print(f"sequential floor: {requests} requests x {DELAY_MS / 1000:.1f} s = {floor:.3f} s")
        print(f"median/floor: {median / floor:.3f}")
        print(f"added by the delay (median - baseline): {median - base_s:.3f} s "
              f"= {(median - base_s) / (DELAY_MS / 1000.0):.2f} x {DELAY_MS} ms")
        for cc, (cold, warm) in cached.items():
            print(f"page cache, pages {cc}: cold plan {cold:.3f} s, warm plan {warm:.3f} s, warm/cold {warm / cold:.3f}")
        if args.json:
            Path(args.json).write_text(json.dumps({
                "runs": args.runs, "delay_ms": DELAY_MS, "requests": requests, "baseline_s": base_s,
                "median_s": median, "floor_s": floor, "ratio_to_floor": median / floor, "all": times,
                "cache": {cc: {"cold_s": cold, "warm_s": warm} for cc, (cold, warm) in cached.items()}},
                indent=1))
    finally:
        t.close()
        shutil.rmtree(t.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Turns the benchmarks' --json files into one table, printed and written to RESULTS.md with the
date and the machine's facts. Run by contrib/bench.sh:

    report.py DIR [--out tests/bench/RESULTS.md]    (DIR holds generation.json and plan.json)
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import subprocess


def sh(argv):
    try:
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
    except OSError:
        return "?"


def machine_facts(uv, stackup):
    cpu = "?"
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = next((line.split()[1] for line in pathlib.Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal:")), "0")
    tmp = os.environ.get("TMPDIR", "/tmp")
    fs = sh(["df", "--output=fstype", tmp]).splitlines()[-1:] or ["?"]
    return [
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
        ("cpu", f"{os.cpu_count()} x {cpu}"),
        ("memory", f"{int(mem) / 1024 / 1024:.1f} GiB"),
        ("kernel", platform.release()),
        ("os", sh(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"])),
        ("filesystem of the venvs", f"{fs[0].strip()} ({tmp})"),
        ("python", platform.python_version()),
        ("uv", sh([uv, "--version"])),
        ("stackup", f"{sh([stackup, '--version'])} (git {sh(['git', 'rev-parse', '--short', 'HEAD'])}, Release)"),
    ]


def cache_rows(plan):
    """A warm plan (stackup's page cache filled by the one before) against the cold one."""
    out = []
    for cc, fig in (plan.get("cache") or {}).items():
        why = "(none: no page asked)" if cc.startswith("max-age") else "(none: each page revalidated, a 304)"
        out.append((f"plan, warm page cache, pages `{cc}`", f"{fig['warm_s']:.3f} s",
                    f"the cold plan before it {fig['cold_s']:.3f} s", f"{fig['warm_s'] / fig['cold_s']:.3f}",
                    why, None))
    return out


def rows(gen, plan):
    m, r = gen["medians"], gen["ratios"]
    mb = 1024.0
    return [
        # figure, measured, baseline, ratio, target, met
        ("generation clone (apply's `clone`)", f"{m['clone']:.3f} s", f"cp -a {m['cp_a']:.3f} s",
         f"{r['clone_vs_cp_a']:.3f}", "(none)", None),
        ("generation clone", f"{m['clone']:.3f} s", f"cp -al {m['cp_al']:.3f} s (a per-file method's floor)",
         f"{r['clone_vs_cp_al']:.2f}", "(none)", None),
        ("rollback", f"{m['rollback']:.3f} s", f"cp -a {m['cp_a']:.3f} s",
         f"{r['rollback_vs_cp_a']:.4f}", "<= 0.02", r["rollback_vs_cp_a"] <= 0.02),
        ("rollback", f"{m['rollback']:.3f} s", f"uv pip sync (warm) {m['uv_sync']:.3f} s",
         f"{r['rollback_vs_uv_sync']:.3f}", "(none: sync restores dists, not the tree)", None),
        ("roll forward (`rollback --to`)", f"{m['forward']:.3f} s", f"cp -a {m['cp_a']:.3f} s",
         f"{r['forward_vs_cp_a']:.4f}", "<= 0.02", r["forward_vs_cp_a"] <= 0.02),
        ("switch (staged)", f"{m['switch']:.3f} s", f"cp -a {m['cp_a']:.3f} s",
         f"{r['switch_vs_cp_a']:.4f}", "<= 0.02", r["switch_vs_cp_a"] <= 0.02),
        (f"plan, 8 packages, 3 indexes, pages +{plan['delay_ms']} ms", f"{plan['median_s']:.3f} s",
         f"sequential floor {plan['floor_s']:.3f} s ({plan['requests']} pages)",
         f"{plan['ratio_to_floor']:.3f}", "< 0.5", plan["ratio_to_floor"] < 0.5),
        *cache_rows(plan),
        ("apply, 3 steps", f"{m['apply']:.3f} s", f"the same uv commands bare {m['bare']:.3f} s",
         f"{r['apply_vs_bare_uv']:.2f}", "<= 1.15", r["apply_vs_bare_uv"] <= 1.15),
        ("verify, 10 expectations", f"{m['verify']:.3f} s", f"python -c 'import ...' {m['import']:.3f} s",
         f"{r['verify_vs_import']:.2f}", "<= 1.1", r["verify_vs_import"] <= 1.1),
        ("peak RSS, plan", f"{m['plan_rss'] / mb:.1f} MB", "", "", "< 40 MB", m["plan_rss"] / mb < 40),
        ("peak RSS, apply", f"{m['apply_rss'] / mb:.1f} MB", "", "", "< 40 MB", m["apply_rss"] / mb < 40),
        ("peak RSS, rollback", f"{m['rollback_rss'] / mb:.1f} MB", "", "", "< 40 MB", m["rollback_rss"] / mb < 40),
    ]


def table(gen, plan):
    head = ("figure", "stackup", "baseline (same run)", "ratio", "target", "met")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows(gen, plan):
        met = "" if row[5] is None else ("yes" if row[5] else "**no**")
        lines.append("| " + " | ".join(list(row[:5]) + [met]) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=pathlib.Path)
    ap.add_argument("--out", type=pathlib.Path, default=None)
    ap.add_argument("--uv", default=".tools/venv/bin/uv")
    ap.add_argument("--stackup", default="build-release/stackup")
    args = ap.parse_args()
    gen = json.loads((args.dir / "generation.json").read_text())
    plan = json.loads((args.dir / "plan.json").read_text())
    text = table(gen, plan)
    print(text)
    if args.out:
        facts = "\n".join(f"- {k}: {v}" for k, v in machine_facts(args.uv, args.stackup))
        args.out.write_text(
            "# Benchmark results\n\n"
            "Written by `contrib/bench.sh` (tests/bench/report.py); every figure is the median of "
            f"{gen['runs']} runs (plan: {plan['runs']}), each against a baseline timed in the same run, "
            "the two sides alternating. Times are wall-clock; the venv is generated "
            f"({gen['entries']} entries, {gen['venv_mib']:.0f} MiB) and the indexes are local (127.0.0.1), "
            "so no network is involved.\n\n"
            f"{facts}\n\n{text}\n\n"
            f"Disk: the generations beside the live venv cost {gen['generations_mib']:.1f} MiB.\n")
        print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()

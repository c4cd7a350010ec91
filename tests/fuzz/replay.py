#!/usr/bin/env python3
"""Runs every fuzz target's replay binary over its seeds and its regression inputs.

    replay.py BUILD_DIR [--fixtures DIR]

A crash, a sanitizer report or a broken invariant in any input fails the test, naming the
target; a target without a replay binary fails too (the build lost it).
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import seeds  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=pathlib.Path)
    parser.add_argument("--fixtures", type=pathlib.Path, default=None)
    args = parser.parse_args()
    failed = []
    with tempfile.TemporaryDirectory(prefix="stackup-seeds-") as tmp:
        argv = [sys.executable, str(HERE / "seeds.py"), tmp]
        if args.fixtures:
            argv += ["--fixtures", str(args.fixtures)]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        for target in seeds.TARGETS:
            binary = args.build / f"stackup_replay_{target}"
            if not binary.exists():
                failed.append(f"{target}: no replay binary at {binary}")
                continue
            inputs = [pathlib.Path(tmp) / target, HERE / "regressions" / target]
            result = subprocess.run([str(binary)] + [str(p) for p in inputs if p.exists()],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace", timeout=240)
            print(f"{target}: {result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ''}"
                  f" (exit {result.returncode})")
            if result.returncode != 0:
                failed.append(f"{target}: exit {result.returncode}\n{result.stdout[-4000:]}")
    for failure in failed:
        print("FAILED", failure)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

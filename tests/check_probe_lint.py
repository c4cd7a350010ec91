#!/usr/bin/env python3
"""Lints src/venv/probe.py (or the files named) with pyflakes: unused imports, undefined
names, shadowed definitions. Run with Debian's python3 (/usr/bin/python3) and its
python3-pyflakes (contrib/bootstrap.sh installs it); exits 125 (a skip in CTest) without it."""
import sys
from pathlib import Path

PROBE = Path(__file__).resolve().parents[1] / "src" / "venv" / "probe.py"
SKIP = 125

try:
    from pyflakes import api
except ImportError:
    print(f"SKIP: pyflakes is missing for {sys.executable} (Debian's python3-pyflakes; "
          "contrib/bootstrap.sh installs it): src/venv/probe.py was NOT linted", flush=True)
    sys.exit(SKIP)


def main(paths):
    warnings = sum(api.checkPath(str(p)) for p in paths)
    print(f"probe_lint: {warnings} pyflakes warning(s) in {', '.join(str(p) for p in paths)}")
    return 1 if warnings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or [PROBE]))

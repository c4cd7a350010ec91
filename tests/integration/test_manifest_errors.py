"""(h) Manifest errors exit 2 with file:line:col, before anything is touched: the venv's
tree is unchanged and no snapshot was taken. Each case breaks one line of a good manifest.
"""
import os
import re

import harness
from harness import check, check_rc, check_says

GOOD = """\
version: 1
venv: {venv}
indexes:
  pytorch: http://127.0.0.1:9/cu130/
  pypi: http://127.0.0.1:9/pypi/
default_index: pypi
steps:
  - name: torch
    index: pytorch
    packages: [torch]
    expect:
      torch:
        local: cu130
env:
  UV_CACHE_DIR: {cache}
"""

# (line, replacement, location that must be reported, words the message must contain);
# a location without a column accepts any column (the key's or the value's).
CASES = [
    (6, "defualt_index: pypi", "6:1", ["defualt_index", "default_index"]),  # did you mean
    (13, "        locl: cu130", "13:9", ["locl"]),
    (13, '        version: ">>2.11"', "13", [">>2.11"]),
    (9, "    index: nightly", "9", ["nightly"]),
    (1, "version: 2", "1", []),
    (10, '    packages: ["torch=="]', "10", []),
    (10, "    packages: {torch: 1}", "10", []),
]


def scenario(t):
    venv = t.make_venv()
    before = t.tree(venv)
    good = GOOD.format(venv=venv, cache=t.cache_dir)
    for n, (line, text, where, words) in enumerate(CASES):
        lines = good.splitlines()
        lines[line - 1] = text
        manifest = t.manifest("\n".join(lines) + "\n", f"bad{n}.yaml")
        r = t.stackup("apply", manifest)
        check_rc(r, 2)
        at = re.escape(f"{manifest.name}:{where}") + ("" if ":" in where else r":\d+")
        check(re.search(at + r"\b", r.output), f"no {manifest.name}:{where} in the output", r)
        check_says(r, *words)
        t.assert_tree(venv, before, f"a bad manifest ({text.strip()})")
        left = sorted(os.listdir(t.state_dir)) if t.state_dir.exists() else []
        check(not left, f"a bad manifest left state behind: {left}")
    # The good manifest parses (it then fails later, on the closed port): not a manifest error.
    r = t.stackup("apply", t.manifest(good, "good.yaml"))
    check(r.rc != 2, "the unbroken manifest is reported as a manifest error", r)


harness.main(scenario)

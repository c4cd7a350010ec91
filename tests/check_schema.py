#!/usr/bin/env python3
"""Keeps manifests/schema-v1.json in step with the manifest parser.

Every manifest in manifests/ (and every file named on the command line, e.g. what
`stackup init` wrote) must be valid under the schema and accepted by the parser; every
bad manifest below must be refused by both: the schema, and `stackup plan` with exit 2
naming file:line:col. Needs Debian's python3-jsonschema and python3-yaml (the bootstrap
installs them); exits 125 (a skip in CTest) without them, or without the stackup binary.

    check_schema.py [MANIFEST...]     STACKUP_BIN: the stackup binary (default build/stackup)
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP = 125

try:
    import jsonschema
    import yaml
except ImportError as e:
    print(f"SKIP: {e.name} is missing (Debian's python3-jsonschema / python3-yaml; contrib/bootstrap.sh installs them)")
    sys.exit(SKIP)

HEAD = """version: 1
venv: /srv/env
indexes:
  pypi: https://pypi.example/simple
"""
STEP = "steps:\n  - name: one\n    index: pypi\n"

GOOD = {
    "minimal": HEAD + STEP + "    packages: [six]\n",
    "remove only": HEAD + STEP + "    remove: [\"nvidia-*-cu12\", cupy-cuda12x]\n",
    "expect only": HEAD + STEP + "    expect:\n      torch: {version: \"==2.10.0+cu128\", local: cu128}\n",
    "unquoted numbers": HEAD.replace("venv", "python: 3.12\nvenv") + "cuda: {toolkit: 13.0}\n" + STEP
    + "    packages: [torch]\n    expect:\n      torch: {cuda: 13.0, attrs: {version.cuda: 13.0}}\n"
    + "env: {A: 1, B: true}\n",
    "everything": HEAD + "name: x\ndefault_index: pypi\n" + STEP
    + "    packages: [torch]\n    prerelease: true\n    deps: false\n    remove: [torch]\n"
    + "checks:\n  - {name: c, python: 'import torch'}\nallow_mixed: [flashinfer-python]\n"
    + "allow_unmet: [sgl-kernel]\nsnapshot: {keep: 2}\n",
    "cuda.arch": HEAD + "cuda: {toolkit: '13.0', arch: ['9.0', 12.0, '10.3']}\n" + STEP + "    packages: [six]\n",
}

# name -> manifest text; each must be refused by the schema and by the parser (exit 2).
BAD = {
    "unknown top-level key": HEAD + STEP + "    packages: [six]\nsnapshots: {keep: 1}\n",
    "unknown step key": HEAD + STEP + "    packages: [six]\n    package: [six]\n",
    "unknown expectation field": HEAD + STEP + "    packages: [six]\n    expect:\n      six: {versoin: '>=1'}\n",
    "schema version 2": HEAD.replace("version: 1", "version: 2") + STEP + "    packages: [six]\n",
    "no steps": HEAD,
    "empty steps": HEAD + "steps: []\n",
    "a step without an index": HEAD + "steps:\n  - name: one\n    packages: [six]\n",
    "a step without a name": HEAD + "steps:\n  - index: pypi\n    packages: [six]\n",
    "a step that does nothing": HEAD + STEP + "    packages: []\n",
    "a step with no packages at all": HEAD + STEP,
    "an empty remove": HEAD + STEP + "    packages: [six]\n    remove: []\n",
    "a remove of everything": HEAD + STEP + "    remove: ['*']\n",
    "a remove with a slash": HEAD + STEP + "    remove: ['nvidia/*']\n",
    "packages not a list": HEAD + STEP + "    packages: six\n",
    "deps not a boolean": HEAD + STEP + "    packages: [six]\n    deps: maybe\n",
    "no indexes": "version: 1\nvenv: /srv/env\n" + STEP + "    packages: [six]\n",
    "an index that is not a URL": HEAD.replace("https://pypi.example/simple", "pypi.example/simple")
    + STEP + "    packages: [six]\n",
    "python not MAJOR.MINOR": HEAD + "python: '3'\n" + STEP + "    packages: [six]\n",
    "require_driver not a boolean": HEAD + "cuda: {toolkit: '13.0', require_driver: sometimes}\n" + STEP
    + "    packages: [six]\n",
    "cuda.arch as an SM name": HEAD + "cuda: {toolkit: '13.0', arch: [sm_90]}\n" + STEP + "    packages: [six]\n",
    "cuda.arch not a list": HEAD + "cuda: {toolkit: '13.0', arch: '9.0'}\n" + STEP + "    packages: [six]\n",
    "unknown cuda key": HEAD + "cuda: {toolkit: '13.0', drivers: '>=1'}\n" + STEP + "    packages: [six]\n",
    "a check without python": HEAD + STEP + "    packages: [six]\nchecks:\n  - {name: c}\n",
    "allow_mixed of a non-name": HEAD + STEP + "    packages: [six]\nallow_mixed: [-x]\n",
    "allow_unmet of a non-name": HEAD + STEP + "    packages: [six]\nallow_unmet: [-x]\n",
    "env with a bad variable name": HEAD + STEP + "    packages: [six]\nenv: {1X: a}\n",
    "snapshot.keep of 0": HEAD + STEP + "    packages: [six]\nsnapshot: {keep: 0}\n",
}


def schema_errors(validator, text):
    return [e.message for e in validator.iter_errors(yaml.safe_load(text))]


def parser_exit(stackup, path):
    r = subprocess.run([stackup, "plan", str(path), "--venv", "/nonexistent-venv-for-the-schema-test"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def main():
    stackup = os.environ.get("STACKUP_BIN") or str(REPO / "build" / "stackup")
    if not os.access(stackup, os.X_OK):
        print(f"SKIP: no stackup binary at {stackup}")
        return SKIP
    schema = json.loads((REPO / "manifests" / "schema-v1.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []
    files = sorted((REPO / "manifests").glob("*.yaml")) + [Path(a) for a in sys.argv[1:]]
    for path in files:
        for error in schema_errors(validator, path.read_text()):
            failures.append(f"{path}: valid for the parser, refused by the schema: {error}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in GOOD.items():
            path = Path(tmp) / "good.yaml"
            path.write_text(text)
            for error in schema_errors(validator, text):
                failures.append(f"good manifest '{name}': refused by the schema: {error}")
            rc, output = parser_exit(stackup, path)
            if rc == 2:
                failures.append(f"good manifest '{name}': refused by the parser: {output.strip()}")
        for name, text in BAD.items():
            path = Path(tmp) / "bad.yaml"
            path.write_text(text)
            if not schema_errors(validator, text):
                failures.append(f"bad manifest '{name}': the schema accepts it")
            rc, output = parser_exit(stackup, path)
            if rc != 2 or f"{path}:" not in output:
                failures.append(f"bad manifest '{name}': the parser did not refuse it with 2 and file:line:col "
                                f"(exit {rc}): {output.strip()}")
    for f in failures:
        print("FAIL " + f)
    checked = len(files) + len(GOOD) + len(BAD)
    print(f"schema: {checked - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

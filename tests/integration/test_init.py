"""`stackup init`: on the demo's cu128 venv it writes a baseline that parses and that
`stackup verify` passes at once, touching nothing; it never overwrites a file without
--force; `--target-cuda 13.0` drafts the upgrade, which, with the test server's index URLs
put in for the placeholders, `stackup plan` accepts and `stackup apply` applies (torch then
reports cu130 by the venv's own python).
"""
import json
import re

import harness
from harness import OFFLINE_ENV, check, check_module, check_rc, check_says
from wheels import SGL_KERNEL_CU130, SGL_KERNEL_PYPI, TORCH_CU128, TORCH_CU130, VISION_CU128


def fill(text, key, value):
    """The line `  key: URL   # ...` (or `key: ...` at the top) with `value` put in for what follows the key."""
    pattern = re.compile(rf"^(\s*{re.escape(key)}: )\S+(.*)$", re.M)
    check(pattern.search(text) is not None, f"the draft has no '{key}:' line:\n{text}")
    return pattern.sub(lambda m: m.group(1) + value + m.group(2), text, count=1)


def scenario(t):
    server = t.serve_stack()
    venv = t.cu128_venv(server)
    before = t.tree(venv)

    # The baseline, on stdout: every CUDA-flavoured dist pinned as installed.
    r = t.stackup("init", "--venv", venv, state=False)
    check_rc(r, 0)
    text = r.stdout
    check(f'torch: {{version: "=={TORCH_CU128}", local: cu128}}' in text, "torch is not pinned as installed", r)
    check(f'torchvision: {{version: "=={VISION_CU128}", local: cu128}}' in text, "torchvision is not pinned", r)
    check(f'sgl-kernel: {{version: "=={SGL_KERNEL_PYPI}"}}' in text, "the unlabelled sgl-kernel is not pinned", r)
    check(re.search(r"^#\s+filelock 3\.20\.0$", text, re.M), "filelock is not in the installed list", r)
    check(re.search(r"^\s+filelock:", text, re.M) is None, "filelock (no CUDA) was pinned", r)
    check(f"venv: {venv}" in text, "the venv is not the absolute path", r)
    schema = harness.REPO / "manifests" / "schema-v1.json"
    check(text.startswith(f"# yaml-language-server: $schema={schema}\n"), "no $schema line for editors", r)
    t.assert_tree(venv, before, "stackup init changed the venv")

    # --out writes the same text; verify passes on it at once.
    baseline = t.tmp / "baseline.yaml"
    r = t.stackup("init", "--venv", venv, "--out", baseline, state=False)
    check_rc(r, 0)
    check(baseline.read_text() == text, "--out wrote something else than stdout showed", r)
    r = t.stackup("verify", baseline, state=False)
    check_rc(r, 0)
    check_says(r, "verified", "3 expectation(s)")   # the CUDA line depends on the host's /usr/local/cuda
    t.assert_tree(venv, before, "stackup verify of the baseline changed the venv")

    # ... and it fails once the venv is not as it was: the pins mean something.
    other = t.cu128_venv(server, name="other")
    t.uv_install(other, "sgl-kernel==0.3.20+cu130", index=server.url("sglang-cu130"),
                 default_index=server.url("pypi"), extra=["--no-deps"])
    r = t.stackup("verify", baseline, "--venv", other, state=False)
    check_rc(r, 1)
    check_says(r, "sgl-kernel")

    # Never over an existing file without --force.
    baseline.write_text("# mine\n")
    r = t.stackup("init", "--venv", venv, "--out", baseline, state=False)
    check_rc(r, 2)
    check_says(r, "exists", "--force")
    check(baseline.read_text() == "# mine\n", "init overwrote the file without --force", r)
    r = t.stackup("init", "--venv", venv, "--out", baseline, "--force", "--json", state=False)
    check_rc(r, 0)
    doc = json.loads(r.stdout)
    check(doc["command"] == "init" and doc["ok"] and doc["exit_code"] == 0 and doc["errors"] == [],
          "the JSON document is wrong", r)
    check(doc["venv"] == str(venv) and doc["saved_to"] == str(baseline), "venv or saved_to is wrong", r)
    check(doc["manifest"] == text and baseline.read_text() == text, "--force did not write the baseline", r)

    # The upgrade draft: filled in with the test server's indexes and a toolkit that reports 13.0.
    r = t.stackup("init", "--venv", venv, "--target-cuda", "13.0", state=False)
    check_rc(r, 0)
    draft = r.stdout
    check("local: cu130" in draft and "prerelease: true" in draft, "the draft does not move torch to cu130", r)
    check(f"=={TORCH_CU128}" not in draft, "the draft kept the old version pins", r)
    cuda_home = t.tmp / "cuda-13.0"
    (cuda_home / "bin").mkdir(parents=True)
    nvcc = cuda_home / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    nvcc.chmod(0o755)
    draft = fill(draft, "pytorch", server.url("cu130"))
    draft = fill(draft, "sglang", server.url("sglang-cu130"))
    draft = fill(draft, "pypi", server.url("pypi"))
    draft = fill(draft, "home", str(cuda_home))
    draft += "env:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in
                                {"UV_CACHE_DIR": str(t.cache_dir), **OFFLINE_ENV}.items())
    upgrade = t.tmp / "upgrade.yaml"
    upgrade.write_text(draft)
    print(draft, flush=True)

    schema_check = harness.run(["/usr/bin/python3", harness.REPO / "tests" / "check_schema.py", baseline, upgrade],
                               env=harness.child_env({"STACKUP_BIN": harness.find_stackup()}))
    check(schema_check.rc in (0, 125), "the schema refuses what init wrote", schema_check)
    if schema_check.rc == 125:
        harness.skip_part("the schema check of init's manifests: " + schema_check.stdout.strip())

    check_rc(t.stackup("plan", upgrade), 0)
    t.assert_tree(venv, before, "stackup plan of the draft changed the venv")
    check_rc(t.stackup("apply", upgrade), 0)
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    check_module(t.module(venv, "sgl_kernel"), SGL_KERNEL_CU130, "13.0")

    # The old baseline no longer holds; a new one does.
    check_rc(t.stackup("verify", baseline, state=False), 1)
    r = t.stackup("init", "--venv", venv, "--out", t.tmp / "after.yaml", state=False)
    check_rc(r, 0)
    check_rc(t.stackup("verify", t.tmp / "after.yaml", state=False), 0)


harness.main(scenario)

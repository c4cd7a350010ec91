#!/usr/bin/python
# -*- coding: utf-8 -*-
# An Ansible module that runs `stackup ... --json` on the managed host and turns its one JSON
# document into a task result. Standard library and AnsibleModule only: it runs with the host's python.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: stackup
short_description: Upgrade the GPU stack of a Python venv with stackup, never leaving it broken
description:
  - Runs C(stackup COMMAND ... --json) on the managed host and reports its JSON document.
  - C(apply) locks the venv, snapshots it, installs each step of the manifest with uv, verifies
    each step by importing the packages, and rolls the venv back on any failure.
  - C(changed) is true only when C(apply) committed and a package's version changed
    (C(rollback) reports changed when it restored a snapshot; C(plan), C(verify) and C(status)
    never change anything).
  - A non-zero exit of stackup fails the task, with C(msg) from the first error, every error in
    C(errors) and the whole document in C(stackup).
  - The C(stackup) binary (and the C(uv) it runs) must be installed on the managed host.
version_added: "1.0.0"
options:
  command:
    description:
      - The stackup command to run.
    type: str
    choices: [apply, plan, verify, rollback, status]
    default: apply
  manifest:
    description:
      - The manifest (YAML) on the managed host; for C(apply) also a plan saved by C(stackup plan --out).
      - Required for C(apply), C(plan) and C(verify).
      - For C(rollback) and C(status), either I(manifest) or I(venv) names the venv.
    type: path
  venv:
    description:
      - The venv, overriding the manifest's C(venv) (C(--venv)).
    type: path
  state_dir:
    description:
      - Where locks, journals and snapshots live (C(--state-dir)); default a C(.stackup/)
        folder beside the venv.
    type: path
  stackup:
    description:
      - The stackup binary, a name looked up on the host's PATH or a path.
    type: str
    default: stackup
  uv:
    description:
      - The uv binary stackup runs (C(--uv)); default C(STACKUP_UV), else C(uv) on PATH.
    type: path
  snapshot_id:
    description:
      - For C(rollback), the snapshot to restore (C(--to ID)); default the latest one, or the
        interrupted run's own.
    type: str
  extra_args:
    description:
      - More arguments for stackup, passed as they are (for example C([--http-timeout, "60"])).
    type: list
    elements: str
    default: []
notes:
  - Check mode runs C(apply --dry-run), which touches nothing; C(changed) then says whether the
    plan would change a package's version. C(plan), C(verify) and C(status) run as usual.
    C(rollback) is not run in check mode and reports C(changed).
  - Diff mode shows each package's version before and after.
  - stackup is run from an argv list, never through a shell.
requirements:
  - stackup on the managed host
author:
  - stackup maintainers
"""

EXAMPLES = r"""
- name: Upgrade the venv's GPU stack
  stackup:
    manifest: /etc/stackup/cuda13.yaml
    venv: /srv/ml-env
  register: upgrade

- name: Only say what would change (also what --check does)
  stackup:
    command: plan
    manifest: /etc/stackup/cuda13.yaml

- name: Check the venv against the manifest
  stackup:
    command: verify
    manifest: /etc/stackup/cuda13.yaml

- name: Restore a named snapshot
  stackup:
    command: rollback
    venv: /srv/ml-env
    snapshot_id: "{{ upgrade.snapshot.id }}"

- name: A stackup and uv that are not on PATH
  stackup:
    manifest: /etc/stackup/cuda13.yaml
    stackup: /opt/stackup/bin/stackup
    uv: /opt/uv/bin/uv
    extra_args: [--http-timeout, "60"]
"""

RETURN = r"""
exit_code:
  description: stackup's exit code (0 success, 1 verification failed and rolled back, 2 usage or
    manifest error, 3 preflight failed, 4 installer failed and rolled back, 5 rollback failed,
    6 venv locked, 7 interrupted run found).
  returned: always, when stackup ran
  type: int
  sample: 0
rc:
  description: the same as I(exit_code), under the name Ansible's callbacks show.
  returned: always, when stackup ran
  type: int
errors:
  description: stackup's errors, each with C(code) and C(message), and where they apply C(step),
    C(dist), C(field), C(expected), C(found), C(file), C(line), C(column).
  returned: always, when stackup printed its document (empty on success)
  type: list
  elements: dict
  sample: [{"code": "verification_failed", "step": "torch", "dist": "torch", "field": "cuda",
            "expected": "13.1", "found": "13.0", "message": "step 'torch': torch: cuda: expected 13.1, found 13.0"}]
venv:
  description: the venv's absolute path.
  returned: when stackup printed its document
  type: str
snapshot:
  description: for C(apply), the snapshot taken before the first step (C(id), C(path)); for
    C(rollback), the one restored (C(id), C(path), C(created)). Null when none.
  returned: apply, rollback
  type: dict
  sample: {"id": "20261203T073442Z-97f1", "path": "/srv/.stackup/ml-env-40cf9061/snapshots/20261203T073442Z-97f1"}
rolled_back:
  description: whether apply restored the snapshot after a failure.
  returned: apply
  type: bool
dry_run:
  description: whether apply ran as C(--dry-run) (check mode).
  returned: apply
  type: bool
steps:
  description: each step of the manifest with its C(status), its C(packages) (C(name), C(before),
    C(after), C(change)) and its C(checks).
  returned: apply and plan, on success (on failure, in I(stackup))
  type: list
  elements: dict
checks:
  description: for apply, the manifest's python checks; for verify, every expectation's check.
  returned: apply and verify, on success (on failure, in I(stackup))
  type: list
  elements: dict
changes:
  description: the packages whose version the apply changed, or would change in check mode and
    for C(plan) (C(step), C(name), C(before), C(after); C(before) null for a new one).
  returned: apply and plan, on success
  type: list
  elements: dict
  sample: [{"step": "torch", "name": "torch", "before": "2.10.0+cu128", "after": "2.11.0.dev20251230+cu130"}]
stackup:
  description: stackup's whole JSON document, as it printed it.
  returned: when stackup printed its document
  type: dict
cmd:
  description: the argv that was run.
  returned: when stackup ran
  type: list
  elements: str
stderr:
  description: stackup's log (and uv's lines), shown when the task fails.
  returned: failure
  type: str
stdout:
  description: stackup's stdout, shown when it was not one JSON document.
  returned: failure, when the document could not be read
  type: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

NEEDS_MANIFEST = ("apply", "plan", "verify")
READ_ONLY = ("plan", "verify", "status")
# Fields of the document lifted to the top of the task result: the small ones always, the rest on
# success only (a failure already carries the whole document in `stackup`).
ALWAYS_FIELDS = ("venv", "snapshot", "rolled_back", "dry_run")
SUCCESS_FIELDS = ("steps", "checks", "python_checks", "closed", "lock", "interrupted", "last_apply",
                  "snapshots", "warnings")


def find_stackup(module, name):
    if "/" in name:
        if not os.access(name, os.X_OK):
            module.fail_json(msg="stackup binary %s is not an executable file" % name)
        return name
    found = module.get_bin_path(name)
    if not found:
        module.fail_json(msg="no %s on the host's PATH: install stackup or set the stackup option to its path" % name)
    return found


def build_argv(binary, params, dry_run):
    argv = [binary, params["command"]]
    if params["manifest"]:
        argv.append(params["manifest"])
    argv.append("--json")
    if dry_run:
        argv.append("--dry-run")
    for option, key in (("--venv", "venv"), ("--state-dir", "state_dir"), ("--uv", "uv"),
                        ("--to", "snapshot_id")):
        if params[key]:
            argv += [option, params[key]]
    return argv + list(params["extra_args"])


def package_changes(doc):
    """The packages of the document's steps whose version differs before and after."""
    out = []
    for step in doc.get("steps") or []:
        for p in step.get("packages") or []:
            if isinstance(p, dict) and p.get("before") != p.get("after"):
                out.append({"step": step.get("name"), "name": p.get("name"),
                            "before": p.get("before"), "after": p.get("after")})
    return out


def version_diff(doc):
    """Ansible's diff: one `name==version` line per package, before and after."""
    before, after = [], []
    for step in doc.get("steps") or []:
        for p in step.get("packages") or []:
            if isinstance(p, dict):
                before.append("%s==%s\n" % (p.get("name"), p.get("before") or "(absent)"))
                after.append("%s==%s\n" % (p.get("name"), p.get("after") or "(absent)"))
    return {"before": "".join(before), "after": "".join(after),
            "before_header": "installed", "after_header": "after apply"}


def read_document(module, argv, rc, stdout, stderr):
    try:
        doc = json.loads(stdout)
    except ValueError as e:
        module.fail_json(msg="stackup exited %d without one JSON document on stdout (%s)" % (rc, e),
                         cmd=argv, rc=rc, exit_code=rc, stdout=stdout, stderr=stderr)
    if not isinstance(doc, dict):
        module.fail_json(msg="stackup's JSON document is not an object", cmd=argv, rc=rc,
                         exit_code=rc, stdout=stdout, stderr=stderr)
    return doc


def main():
    module = AnsibleModule(
        argument_spec=dict(
            command=dict(type="str", default="apply", choices=["apply", "plan", "verify", "rollback", "status"]),
            manifest=dict(type="path"),
            venv=dict(type="path"),
            state_dir=dict(type="path"),
            stackup=dict(type="str", default="stackup"),
            uv=dict(type="path"),
            snapshot_id=dict(type="str"),
            extra_args=dict(type="list", elements="str", default=[]),
        ),
        required_if=[("command", c, ["manifest"]) for c in NEEDS_MANIFEST],
        supports_check_mode=True,
    )
    params = module.params
    command = params["command"]
    if command not in NEEDS_MANIFEST and not (params["manifest"] or params["venv"]):
        module.fail_json(msg="command %s needs manifest or venv" % command)
    if params["snapshot_id"] and command != "rollback":
        module.fail_json(msg="snapshot_id is only for command rollback")

    dry_run = module.check_mode and command == "apply"
    argv = build_argv(find_stackup(module, params["stackup"]), params, dry_run)
    if module.check_mode and command == "rollback":
        module.exit_json(changed=True, cmd=argv, msg="check mode: stackup rollback not run")

    rc, stdout, stderr = module.run_command(argv, check_rc=False, expand_user_and_vars=False)
    doc = read_document(module, argv, rc, stdout, stderr)
    errors = doc.get("errors") or []
    result = dict(cmd=argv, rc=rc, exit_code=rc, errors=errors, stackup=doc)
    for key in ALWAYS_FIELDS + (SUCCESS_FIELDS if rc == 0 else ()):
        if key in doc:
            result[key] = doc[key]
    if doc.get("exit_code") != rc or bool(doc.get("ok")) != (rc == 0):
        module.warn("stackup exited %d but its document says exit_code %r, ok %r"
                    % (rc, doc.get("exit_code"), doc.get("ok")))

    # After a failed apply stackup has restored the snapshot: nothing changed, whatever the steps say.
    changes = package_changes(doc) if rc == 0 else []
    if command == "apply":
        result["changed"] = bool(changes) if dry_run else doc.get("changed") is True
        if module._diff and rc == 0:
            result["diff"] = version_diff(doc)
    else:
        result["changed"] = command == "rollback" and rc == 0
    if command in ("apply", "plan") and rc == 0:
        result["changes"] = changes

    if rc != 0:
        first = errors[0].get("message") if errors and isinstance(errors[0], dict) else None
        module.fail_json(msg=first or "stackup %s exited %d" % (command, rc), stderr=stderr, **result)
    module.exit_json(msg="stackup %s: ok" % command, **result)


if __name__ == "__main__":
    main()

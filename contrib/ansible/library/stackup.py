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
  - C(apply) builds the next generation of the venv beside it (a hard-link clone in the state
    dir), installs each step of the manifest there with uv, verifies each step by importing the
    packages, and switches the verified generation in with one rename. A failed apply never
    touches the live venv.
  - C(stage) (C(stackup apply --stage)) does all of that but the switch; C(switch) puts the
    staged generation in later, and is refused (exit 3, nothing touched) when the live venv
    changed since it was staged. Stage on every host in parallel, then switch in small batches.
  - C(changed) is true only when the live venv changed and a package's version with it
    (C(apply) or C(switch)); C(stage) never changes the venv, and reports in C(changes) what its
    switch will change. C(rollback) reports changed when it switched to another generation;
    C(plan), C(verify) and C(status) never change anything.
  - Where the venv cannot be exchanged (a mount point, a state dir on another filesystem, a
    C(--snapshot-strategy) of reflink or copy), C(apply) runs in place and rolls back on failure
    (C(mode) says which); C(stage) is then refused with exit 3.
  - A non-zero exit of stackup fails the task, with C(msg) from the first error, every error in
    C(errors) and the whole document in C(stackup).
  - The C(stackup) binary (and the C(uv) it runs) must be installed on the managed host.
version_added: "1.0.0"
options:
  command:
    description:
      - The stackup command to run; C(stage) is C(stackup apply --stage).
    type: str
    choices: [apply, stage, switch, plan, verify, rollback, status]
    default: apply
  manifest:
    description:
      - The manifest (YAML) on the managed host; for C(apply) and C(stage) also a plan saved by
        C(stackup plan --out).
      - Required for C(apply), C(stage), C(plan) and C(verify).
      - For C(switch), C(rollback) and C(status), either I(manifest) or I(venv) names the venv.
    type: path
  venv:
    description:
      - The venv, overriding the manifest's C(venv) (C(--venv)).
    type: path
  state_dir:
    description:
      - Where locks, journals and generations live (C(--state-dir)); default a C(.stackup/)
        folder beside the venv. It must be on the venv's filesystem for blue/green.
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
      - For C(rollback), the generation to switch to (C(--to ID)), a generation number or a
        snapshot id from C(stackup history); default the generation the live one was built
        from, or the interrupted run's own.
    type: str
    aliases: [to]
  extra_args:
    description:
      - More arguments for stackup, passed as they are (for example C([--http-timeout, "60"])).
    type: list
    elements: str
    default: []
notes:
  - Check mode runs C(apply --dry-run) for C(apply) and C(stage), which touches nothing;
    C(changed) then says whether the plan would change a package's version. C(switch) is not
    run in check mode; the module reads C(stackup history) instead and reports whether the
    staged generation would change a version (not changed when nothing is staged, as after a
    C(stage) in check mode).
    C(plan), C(verify) and C(status) run as usual. C(rollback) is not run in check mode and
    reports C(changed).
  - Diff mode shows each package's version before and after (C(apply), C(switch), check mode).
  - stackup is run from an argv list, never through a shell.
requirements:
  - stackup on the managed host
author:
  - stackup maintainers
"""

EXAMPLES = r"""
- name: Upgrade the venv's GPU stack (build beside it, verify, switch in one rename)
  stackup:
    manifest: /etc/stackup/cuda13.yaml
    venv: /srv/ml-env
  register: upgrade

- name: Build and verify the next generation now; the live venv is untouched
  stackup:
    command: stage
    manifest: /etc/stackup/cuda13.yaml
    venv: /srv/ml-env

- name: Later, switch the staged generation in (refused if the venv changed since)
  stackup:
    command: switch
    venv: /srv/ml-env

- name: Only say what would change (also what --check does)
  stackup:
    command: plan
    manifest: /etc/stackup/cuda13.yaml

- name: Check the venv against the manifest
  stackup:
    command: verify
    manifest: /etc/stackup/cuda13.yaml

- name: Switch back to the generation before the upgrade (the replaced one is kept)
  stackup:
    command: rollback
    venv: /srv/ml-env
    to: "{{ upgrade.snapshot.id }}"

- name: A stackup and uv that are not on PATH
  stackup:
    manifest: /etc/stackup/cuda13.yaml
    stackup: /opt/stackup/bin/stackup
    uv: /opt/uv/bin/uv
    extra_args: [--http-timeout, "60"]
"""

RETURN = r"""
exit_code:
  description: stackup's exit code (0 success, 1 verification failed, 2 usage or manifest error
    or nothing staged, 3 preflight failed or switch refused, 4 installer failed, 5 rollback
    failed, 6 venv locked, 7 interrupted run found, 8 staged (processes use the venv), 9 stackup
    could not finish: clone, relocation, live venv check or switch). After 1, 4 or 9 a blue/green
    apply has changed nothing in the venv; an in-place one has restored it.
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
mode:
  description: C(blue-green) (built beside the venv, switched in with one rename) or C(in-place).
  returned: apply, stage (not in check mode), switch
  type: str
  sample: blue-green
switched:
  description: whether the live venv is now the new generation (one rename).
  returned: apply, stage, switch
  type: bool
staged:
  description: for C(apply) and C(stage), whether a generation was built, verified and left for
    C(switch); for C(switch), whether one is still waiting (a refused switch leaves it staged).
  returned: apply, stage, switch
  type: bool
venv_changed:
  description: whether the live venv changed at all (a switch, or an in-place apply that
    committed); false after any failed blue/green apply and after C(stage).
  returned: apply, stage, switch
  type: bool
generation:
  description: for C(apply) and C(stage), the generation built (C(id), C(number)), null when
    none; for C(switch), the one switched in; for C(rollback), the number of the one switched to.
  returned: apply, stage, switch, rollback
  type: raw
  sample: {"id": "20261203T201010Z-8bef", "number": 2}
previous:
  description: for C(switch), the generation the venv was before (C(id), C(number)).
  returned: switch, on success
  type: dict
snapshot:
  description: for C(apply) and C(stage), the generation the venv was before the run (C(id),
    C(path)); for C(rollback), the one switched to (C(id), C(path), C(created)). Null when none.
  returned: apply, stage, rollback
  type: dict
  sample: {"id": "20261203T073442Z-97f1", "path": "/srv/.stackup/ml-env-40cf9061/snapshots/20261203T073442Z-97f1"}
rolled_back:
  description: whether an in-place apply restored the venv after a failure (a blue/green apply
    never needs to).
  returned: apply, stage
  type: bool
dry_run:
  description: whether apply ran as C(--dry-run) (check mode).
  returned: apply, stage
  type: bool
steps:
  description: each step of the manifest with its C(status), its C(packages) (C(name), C(before),
    C(after), C(change)) and its C(checks).
  returned: apply, stage and plan, on success (on failure, in I(stackup))
  type: list
  elements: dict
checks:
  description: for apply, the manifest's python checks; for verify, every expectation's check.
  returned: apply, stage and verify, on success (on failure, in I(stackup))
  type: list
  elements: dict
changes:
  description: the packages whose version the apply or switch changed, the staged generation
    will change when switched in, or (check mode, C(plan)) would change (C(name), C(before),
    C(after), and C(step) where known; C(before) null for a new one).
  returned: apply, stage, switch and plan, on success
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

COMMANDS = ["apply", "stage", "switch", "plan", "verify", "rollback", "status"]
NEEDS_MANIFEST = ("apply", "stage", "plan", "verify")
BUILDS = ("apply", "stage")  # both run `stackup apply`
# Fields of the document lifted to the top of the task result: the small ones always, the rest on
# success only (a failure already carries the whole document in `stackup`).
ALWAYS_FIELDS = ("venv", "snapshot", "rolled_back", "dry_run", "mode", "switched", "staged", "venv_changed",
                 "generation", "previous")
SUCCESS_FIELDS = ("steps", "checks", "python_checks", "closed", "lock", "interrupted", "last_apply",
                  "snapshots", "warnings", "replaced")


def find_stackup(module, name):
    if "/" in name:
        if not os.access(name, os.X_OK):
            module.fail_json(msg="stackup binary %s is not an executable file" % name)
        return name
    found = module.get_bin_path(name)
    if not found:
        module.fail_json(msg="no %s on the host's PATH: install stackup or set the stackup option to its path" % name)
    return found


def build_argv(binary, params, command, extra=True):
    """`stackup COMMAND [MANIFEST] --json` and the options; command as stackup spells it."""
    argv = [binary, command]
    if params["manifest"]:
        argv.append(params["manifest"])
    argv.append("--json")
    options = (("--venv", "venv"), ("--state-dir", "state_dir"), ("--uv", "uv"))
    if command == "rollback":
        options += (("--to", "snapshot_id"),)
    for option, key in options:
        if params[key]:
            argv += [option, params[key]]
    return argv + (list(params["extra_args"]) if extra else [])


def package_changes(doc):
    """The packages of the document's steps whose version differs before and after."""
    out = []
    for step in doc.get("steps") or []:
        for p in step.get("packages") or []:
            if isinstance(p, dict) and p.get("before") != p.get("after"):
                out.append({"step": step.get("name"), "name": p.get("name"),
                            "before": p.get("before"), "after": p.get("after")})
    return out


def version_diff(packages, after_header):
    """Ansible's diff: one `name==version` line per package, before and after."""
    before, after = [], []
    for p in packages:
        before.append("%s==%s\n" % (p.get("name"), p.get("before") or "(absent)"))
        after.append("%s==%s\n" % (p.get("name"), p.get("after") or "(absent)"))
    return {"before": "".join(before), "after": "".join(after),
            "before_header": "installed", "after_header": after_header}


def step_packages(doc):
    return [p for step in doc.get("steps") or [] for p in step.get("packages") or [] if isinstance(p, dict)]


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


def staged_generation(module, binary, params):
    """(`stackup history --json`'s document, its staged generation or None), read-only; the
    document is {} when history could not say."""
    argv = build_argv(binary, params, "history", extra=False)
    rc, stdout, _ = module.run_command(argv, check_rc=False, expand_user_and_vars=False)
    try:
        doc = json.loads(stdout)
    except ValueError:
        return {}, None
    if rc != 0 or not isinstance(doc, dict):
        return {}, None
    if not doc.get("staged"):
        return doc, None
    for g in doc.get("generations") or []:
        if isinstance(g, dict) and g.get("id") == doc["staged"]:
            return doc, g
    return doc, {"id": doc["staged"]}


def generation_changes(generation):
    """The versions a generation changes against the one it was built from, or None if unknown."""
    changes = generation.get("changes") if generation else None
    if not isinstance(changes, list):
        return None
    return [{"name": c.get("name"), "before": c.get("before"), "after": c.get("after")}
            for c in changes if isinstance(c, dict)]


def switch_check_mode(module, binary, params):
    """Check mode: stackup switch is not run; history says what it would switch in."""
    history, staged = staged_generation(module, binary, params)
    changes = generation_changes(staged) or []
    result = dict(changed=bool(changes), switched=False, staged=staged is not None, venv_changed=False,
                  mode="blue-green", changes=changes, venv=history.get("venv"))
    if staged is None:
        module.exit_json(msg="check mode: nothing is staged (a real switch needs a stage first); "
                             "stackup switch not run", **result)
    if module._diff:
        result["diff"] = version_diff(changes, "after switch")
    module.exit_json(msg="check mode: stackup switch not run; it would switch in generation %s"
                         % staged.get("id"), generation={"id": staged.get("id"), "number": staged.get("generation")},
                     **result)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            command=dict(type="str", default="apply", choices=COMMANDS),
            manifest=dict(type="path"),
            venv=dict(type="path"),
            state_dir=dict(type="path"),
            stackup=dict(type="str", default="stackup"),
            uv=dict(type="path"),
            snapshot_id=dict(type="str", aliases=["to"]),
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
        module.fail_json(msg="snapshot_id (to) is only for command rollback")

    binary = find_stackup(module, params["stackup"])
    dry_run = module.check_mode and command in BUILDS
    argv = build_argv(binary, params, "apply" if command in BUILDS else command)
    if dry_run:
        argv.append("--dry-run")
    elif command == "stage":
        argv.append("--stage")
    if module.check_mode and command == "rollback":
        module.exit_json(changed=True, cmd=argv, msg="check mode: stackup rollback not run")
    if module.check_mode and command == "switch":
        switch_check_mode(module, binary, params)

    # The versions a switch changes are the staged generation's own changes, recorded when it was built.
    staged = staged_generation(module, binary, params)[1] if command == "switch" else None
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

    if command in BUILDS:
        for key in ("switched", "staged", "venv_changed"):
            result[key] = doc.get(key) is True
        # A failed blue/green apply never touched the venv; a failed in-place one restored it.
        changes = package_changes(doc) if rc == 0 else []
        if dry_run:
            result["changed"] = bool(changes)
        else:
            result["changed"] = result["venv_changed"] and doc.get("changed") is True
        if rc == 0:
            result["changes"] = changes
            if module._diff and (dry_run or command == "apply"):
                result["diff"] = version_diff(step_packages(doc),
                                              "after apply" if command == "apply" else "after switch")
    elif command == "switch":
        switched = rc == 0
        result.update(switched=switched, venv_changed=switched, mode="blue-green")
        if switched:
            result["staged"] = False
            known = staged is not None and staged.get("id") == (doc.get("generation") or {}).get("id")
            changes = generation_changes(staged) if known else None
            # Unknown changes: the venv did change, so say so.
            result["changed"] = changes is None or bool(changes)
            result["changes"] = changes or []
            if module._diff and changes:
                result["diff"] = version_diff(changes, "after switch")
        else:
            # exit 3 leaves the staged generation for a later try; exit 2 has none (or it is gone).
            result["staged"] = staged_generation(module, binary, params)[1] is not None
            result["changed"] = False
    elif command == "plan":
        result["changed"] = False
        if rc == 0:
            result["changes"] = package_changes(doc)
    else:
        result["changed"] = command == "rollback" and rc == 0 and bool(doc.get("snapshot"))

    if rc != 0:
        first = errors[0].get("message") if errors and isinstance(errors[0], dict) else None
        module.fail_json(msg=first or "stackup %s exited %d" % (command, rc), stderr=stderr, **result)
    module.exit_json(msg="stackup %s: ok" % command, **result)


if __name__ == "__main__":
    main()

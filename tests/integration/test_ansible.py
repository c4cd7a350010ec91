"""Fleet rollout through Ansible: contrib/ansible's two-phase playbook and `stackup` module,
run by the real ansible-playbook against inventory hosts that are all this machine (connection:
local), each with its own venv and manifest. Play 1 stages (`apply --stage`) on every host at
once; play 2 switches (`switch`) one batch at a time, max_fail_percentage 0. Checked against
the venvs' real state (what their python imports, tree digests, `stackup history`):
- a1..a3, all good, one host per batch: every host stages before any switches, then each is
  switched in host order; each imports the cu130 torch and its staged generation is live; the
  switch is the only "changed" task. a1 once more: a new generation, but no version changed,
  so nothing is "changed". Then the module's rollback `to` a generation number: a1 is its
  cu128 tree again, exactly.
- b1..b3, b2's manifest expects torch cuda "13.1": b2's stage fails with stackup's errors,
  and the playbook ends before any switch: all three venvs are exactly as before (b1 and b3
  keep a staged generation, b2 none).
- c1..c3, two hosts per batch: `--tags stage`, then uv changes c1's venv by hand, then
  `--tags switch`: c1's switch is refused (exit 3, c1 as uv left it), c2 of the same batch
  switches, and max_fail_percentage 0 keeps batch 2 (c3) from running at all (ansible-core
  2.14 goes on to the next batch after a partly failed one without it): c3 keeps its old venv
  and its staged generation.
- `--check --diff` on a fresh venv: the stage runs `apply --dry-run` (changed: torch would
  change), the switch is not run; the venv is untouched and nothing is staged.
"""
import json
import os
import re
import shutil

import harness
from harness import check, check_module
from wheels import SGL_KERNEL_CU130, TORCH_CU128, TORCH_CU130

PLAYBOOK = harness.REPO / "contrib" / "ansible" / "upgrade.yml"
# A playbook of one task: the module's rollback to the generation `-e stackup_to=...` names.
ROLLBACK = """
- hosts: gpu
  gather_facts: false
  tasks:
    - name: Roll back
      stackup:
        command: rollback
        venv: "{{ stackup_venv }}"
        state_dir: "{{ stackup_state_dir }}"
        stackup: "{{ stackup_bin }}"
        to: "{{ stackup_to }}"
"""
# The playbook's tasks, by name.
STAGE = "Build and verify the next generation beside the venv"
STAGE_SHOW = "Show what the switch will change"
SWITCH = "Switch the staged generation in"
SWITCH_SHOW = "Show what changed"

# A callback that writes every task result and the recap to a JSON file. ansible-core alone has
# no `json` stdout callback (that one is in the ansible.posix collection).
RECORDER = '''
import json
import os

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "stackup_record"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.results = []

    def _record(self, status, result):
        self.results.append({"host": result._host.get_name(), "task": result._task.get_name(),
                             "status": status, "result": result._result})

    def v2_runner_on_ok(self, result):
        self._record("ok", result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record("failed", result)

    def v2_runner_on_skipped(self, result):
        self._record("skipped", result)

    def v2_runner_on_unreachable(self, result):
        self._record("unreachable", result)

    def v2_playbook_on_stats(self, stats):
        recap = {h: stats.summarize(h) for h in stats.processed}
        with open(os.environ["STACKUP_TEST_ANSIBLE_RECORD"], "w") as f:
            json.dump({"results": self.results, "recap": recap}, f, default=str)
'''


def find_ansible_playbook():
    exe = shutil.which("ansible-playbook")
    if not exe:
        raise harness.Skip("!!! no ansible-playbook on PATH: the Ansible rollout is NOT tested "
                           "(contrib/bootstrap.sh installs Debian's ansible-core) !!!")
    return exe


def host_python(exe):
    """The python ansible-playbook itself runs (its shebang): the module runs with it too."""
    with open(exe) as f:
        words = f.readline().removeprefix("#!").split()
    if words and os.path.basename(words[0]) == "env":
        words = [shutil.which(words[-1]) or "/usr/bin/python3"]
    return words[0] if words else "/usr/bin/python3"


class Ansible:
    """ansible-playbook with nothing from the caller's Ansible settings: its own HOME, temp dirs
    and empty config in the test's folder, the recorder callback beside the default one. The
    module comes from contrib/ansible/library beside the playbook, as it does for users."""

    def __init__(self, t):
        self.t, self.exe = t, find_ansible_playbook()
        self.python = host_python(self.exe)
        plugins = t.tmp / "ansible-callbacks"
        plugins.mkdir()
        (plugins / "stackup_record.py").write_text(RECORDER)
        (t.tmp / "ansible-home").mkdir()
        config = t.tmp / "ansible.cfg"
        config.write_text("[defaults]\n")
        self.env = {k: v for k, v in harness.child_env().items() if not k.startswith("ANSIBLE_")}
        self.env.update({
            "HOME": str(t.tmp / "ansible-home"), "ANSIBLE_CONFIG": str(config),
            "ANSIBLE_LOCAL_TEMP": str(t.tmp / "ansible-local"),
            "ANSIBLE_REMOTE_TEMP": str(t.tmp / "ansible-remote"),
            "ANSIBLE_CALLBACK_PLUGINS": str(plugins), "ANSIBLE_CALLBACKS_ENABLED": "stackup_record",
            "ANSIBLE_STDOUT_CALLBACK": "default", "ANSIBLE_HOST_KEY_CHECKING": "False",
            "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "False",
        })

    def inventory(self, name, hosts):
        """A `gpu` group of local hosts, in this order; hosts: {host: (manifest, venv)}."""
        common = {"ansible_connection": "local", "ansible_python_interpreter": self.python,
                  # absolute: the module runs in Ansible's temp dir, not here
                  "stackup_bin": os.path.abspath(harness.find_stackup()),
                  "stackup_uv": os.path.abspath(self.t.uv_path),
                  "stackup_state_dir": str(self.t.state_dir)}
        doc = {"gpu": {"vars": common, "hosts": {
            host: {"stackup_manifest": str(m), "stackup_venv": str(v)} for host, (m, v) in hosts.items()}}}
        path = self.t.tmp / f"{name}.json"
        path.write_text(json.dumps(doc, indent=2))
        return path

    def playbook(self, inventory, *args, run="all", playbook=PLAYBOOK):
        """Runs the example playbook (or another that uses the module); returns
        (Result, {"results": [...], "recap": {...}})."""
        record = self.t.tmp / f"{inventory.stem}-{run}-record.json"
        env = dict(self.env, STACKUP_TEST_ANSIBLE_RECORD=str(record))
        if playbook != PLAYBOOK:  # elsewhere the module is not beside the playbook
            env["ANSIBLE_LIBRARY"] = str(PLAYBOOK.parent / "library")
        r = harness.run([self.exe, "-i", inventory, playbook, *args], env=env)
        check(record.exists(), "the recorder callback wrote nothing", r)
        return r, json.loads(record.read_text())


def results_of(record, host):
    return {x["task"]: x for x in record["results"] if x["host"] == host}


def recap_lines(result):
    """{host: {ok: n, changed: n, failed: n, ...}} from the PLAY RECAP printed on stdout."""
    recap = result.stdout.rsplit("PLAY RECAP", 1)[-1]
    return {m[1]: {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m[2])}
            for m in re.finditer(r"^(\S+)\s+:\s+(.*)$", recap, re.M)}


def history(t, venv):
    """`stackup history --json` of the venv: {"generations", "live", "staged"}."""
    r = t.stackup("history", "--json", venv=venv)
    harness.check_rc(r, 0)
    return json.loads(r.stdout)


def fleet(t, server, names, failing=None):
    """Fresh cu128 venvs and their cu130 manifests, `failing`'s expecting torch cuda "13.1".
    Returns ({name: (manifest, venv)}, {name: tree before})."""
    hosts = {}
    for h in names:
        venv = t.cu128_venv(server, f"{h}-venv")
        doc = t.upgrade_doc(server, venv, torch_cuda="13.1" if h == failing else "13.0")
        hosts[h] = (t.manifest(doc, f"{h}.yaml"), venv)
    return hosts, {h: t.tree(v) for h, (_, v) in hosts.items()}


def check_staged(record, host):
    """host's stage task: ok, not changed, a generation staged that upgrades torch (the callers
    check the venv's tree); returns its generation ({id, number})."""
    staged = results_of(record, host).get(STAGE, {})
    res = staged.get("result", {})
    check(staged.get("status") == "ok" and res.get("exit_code") == 0 and res.get("changed") is False
          and res.get("staged") is True and res.get("switched") is False and res.get("venv_changed") is False
          and res.get("mode") == "blue-green" and os.path.isdir(res["snapshot"]["path"]),
          f"{host}'s stage: {staged}")
    check(any(c["name"] == "torch" and c["before"] == TORCH_CU128 and c["after"] == TORCH_CU130
              for c in res["changes"]), f"{host}'s staged changes: {res['changes']}")
    return res["generation"]


def check_switched(t, record, host, venv, generation):
    """host's switch task: ok and changed; the venv is that generation and imports the cu130 torch."""
    switched = results_of(record, host).get(SWITCH, {})
    res = switched.get("result", {})
    check(switched.get("status") == "ok" and res.get("exit_code") == 0 and res.get("changed") is True
          and res.get("switched") is True and res.get("venv_changed") is True and res.get("staged") is False
          and res.get("generation") == generation, f"{host}'s switch (staged {generation}): {switched}")
    check(any(c["name"] == "torch" and c["after"] == TORCH_CU130 for c in res["changes"]),
          f"{host}'s switch changes: {res['changes']}")
    check_module(t.module(venv, "torch"), TORCH_CU130, "13.0")
    h = history(t, venv)
    check(h["live"] == generation["id"] and h["staged"] is None, f"{host}'s history after its switch: {h}")


def rollout(t, ansible, server):
    """a1..a3, all good, one host per batch (the playbook's default)."""
    names = ("a1", "a2", "a3")
    hosts, before = fleet(t, server, names)
    r, record = ansible.playbook(ansible.inventory("rollout", hosts))
    harness.check_rc(r, 0)
    record_first = record
    generations = {h: check_staged(record, h) for h in names}
    # Play 1 on every host before play 2 on any; play 2 one host at a time, in inventory order.
    order = [(x["task"], x["host"]) for x in record["results"]]
    stage_at = [i for i, (task, _) in enumerate(order) if task == STAGE]
    switch_play = [x for x in order if x[0] in (SWITCH, SWITCH_SHOW)]
    check(len(stage_at) == 3 and max(stage_at) < min(i for i, x in enumerate(order) if x in switch_play),
          f"a switch ran before every host had staged: {order}")
    check(switch_play == [(task, h) for h in names for task in (SWITCH, SWITCH_SHOW)],
          f"the switch play did not run one host at a time: {switch_play}")
    for h in names:
        check_switched(t, record, h, hosts[h][1], generations[h])
        check(t.tree(hosts[h][1]) != before[h], f"{h}'s venv is as before")
    recap = recap_lines(r)
    check(all(recap.get(h, {}).get("changed") == 1 and recap[h].get("failed") == 0 for h in names),
          f"recap (only the switch changes a venv): {recap}", r)

    # a1 again: a new generation is staged and switched in, but no version changed: not "changed".
    r, record = ansible.playbook(ansible.inventory("again", {"a1": hosts["a1"]}))
    harness.check_rc(r, 0)
    stage = results_of(record, "a1").get(STAGE, {}).get("result", {})
    switch = results_of(record, "a1").get(SWITCH, {}).get("result", {})
    check(stage.get("changed") is False and stage.get("staged") is True and stage.get("changes") == []
          and switch.get("changed") is False and switch.get("switched") is True and switch.get("changes") == []
          and switch.get("generation", {}).get("id") not in (None, generations["a1"]["id"]),
          f"a1's second rollout: stage {stage}, switch {switch}")
    check(recap_lines(r).get("a1", {}).get("changed") == 0, f"recap: {recap_lines(r)}", r)
    check(history(t, hosts["a1"][1])["live"] == switch["generation"]["id"], "a1's second generation is not live")
    check_module(t.module(hosts["a1"][1], "torch"), TORCH_CU130, "13.0")

    # The module's rollback, to a generation number: a1 is the cu128 venv it was before the rollout.
    first = results_of(record_first, "a1")[SWITCH]["result"]["previous"]
    rollback = t.tmp / "rollback.yml"
    rollback.write_text(ROLLBACK)
    r, record = ansible.playbook(ansible.inventory("rollback", {"a1": hosts["a1"]}), "-e",
                                 json.dumps({"stackup_to": first["number"]}), playbook=rollback)
    harness.check_rc(r, 0)
    back = results_of(record, "a1").get("Roll back", {})
    check(back.get("status") == "ok" and back["result"].get("changed") is True
          and back["result"]["snapshot"]["id"] == first["id"] and not back["result"].get("warnings"),
          f"a1's rollback to generation {first}: {back}")
    t.assert_tree(hosts["a1"][1], before["a1"], "a1, rolled back to the generation before the rollout")
    check_module(t.module(hosts["a1"][1], "torch"), TORCH_CU128, "12.8")
    check(history(t, hosts["a1"][1])["live"] == first["id"], "a1's first generation is not live after the rollback")


def stage_fails(t, ansible, server):
    """b2's stage fails: the playbook ends before any switch, every venv as before."""
    names = ("b1", "b2", "b3")
    hosts, before = fleet(t, server, names, failing="b2")
    r, record = ansible.playbook(ansible.inventory("stage-fails", hosts))
    check(r.rc != 0, "ansible-playbook passed although b2's stage failed", r)

    failed = results_of(record, "b2").get(STAGE, {})
    res = failed.get("result", {})
    check(failed.get("status") == "failed" and res.get("exit_code") == 1 and res.get("changed") is False
          and res.get("switched") is False and res.get("venv_changed") is False and res.get("staged") is False
          and res.get("rolled_back") is False and res.get("mode") == "blue-green", f"b2's stage: {failed}")
    check(all(w in res["msg"] for w in ("torch", "cuda", "13.1", "13.0")), f"b2's msg: {res['msg']}")
    check(any(e.get("dist") == "torch" and e.get("field") == "cuda" and e.get("expected") == "13.1"
              and e.get("found") == "13.0" for e in res["errors"]), f"b2's errors: {res['errors']}")
    check(res["stackup"]["command"] == "apply" and res["stackup"]["ok"] is False
          and res["stackup"]["errors"] == res["errors"], f"b2's document: {res['stackup']}")
    check("nothing was changed in " + str(hosts["b2"][1]) in res["stderr"], f"b2's stderr: {res['stderr']}")
    staged = {h: check_staged(record, h) for h in ("b1", "b3")}

    # No switch anywhere: every venv exactly as before, the good hosts' generations still staged.
    switch_play = [x for x in record["results"] if x["task"] in (SWITCH, SWITCH_SHOW)]
    check(not switch_play, f"the switch play ran after b2's stage failed: {switch_play}")
    for h in names:
        t.assert_tree(hosts[h][1], before[h], f"{h}, after b2's stage failed")
        check_module(t.module(hosts[h][1], "torch"), TORCH_CU128, "12.8")
    for h in ("b1", "b3"):
        check(history(t, hosts[h][1])["staged"] == staged[h]["id"], f"{h}'s staged generation is gone")
    check(history(t, hosts["b2"][1])["staged"] is None, "b2 has a staged generation")
    recap = recap_lines(r)
    check(recap.get("b2", {}).get("failed") == 1
          and all(recap.get(h, {}).get("failed") == 0 and recap[h].get("changed") == 0 for h in ("b1", "b3")),
          f"recap: {recap}", r)


def switch_refused(t, ansible, server):
    """Two hosts per batch; c1 changed by hand after its stage: its switch is refused, c2 of its
    batch switches, batch 2 (c3) never runs."""
    names = ("c1", "c2", "c3")
    hosts, before = fleet(t, server, names)
    inventory = ansible.inventory("switch-refused", hosts)
    r, record = ansible.playbook(inventory, "--tags", "stage", run="stage")
    harness.check_rc(r, 0)
    staged = {h: check_staged(record, h) for h in names}
    check(not [x for x in record["results"] if x["task"] in (SWITCH, SWITCH_SHOW)],
          f"--tags stage switched: {record['results']}")
    for h in names:
        t.assert_tree(hosts[h][1], before[h], f"{h}, after --tags stage")

    c1 = hosts["c1"][1]
    t.uv_install(c1, f"sgl-kernel=={SGL_KERNEL_CU130}", index=server.url("sglang-cu130"),
                 default_index=server.url("pypi"), extra=["--no-deps"])
    moved_on = t.tree(c1)
    r, record = ansible.playbook(inventory, "--tags", "switch", "-e", "stackup_batch=2", run="switch")
    check(r.rc != 0, "ansible-playbook passed although c1's switch was refused", r)

    refused = results_of(record, "c1").get(SWITCH, {})
    res = refused.get("result", {})
    check(refused.get("status") == "failed" and res.get("exit_code") == 3 and res.get("changed") is False
          and res.get("switched") is False and res.get("venv_changed") is False and res.get("staged") is True
          and all(w in res["msg"] for w in ("no longer", "nothing was touched")), f"c1's switch: {refused}")
    t.assert_tree(c1, moved_on, "c1, after its refused switch")
    check_module(t.module(c1, "torch"), TORCH_CU128, "12.8")
    check(history(t, c1)["staged"] == staged["c1"]["id"], "c1's staged generation is gone")

    check_switched(t, record, "c2", hosts["c2"][1], staged["c2"])

    check(not results_of(record, "c3"), f"c3 (batch 2) ran: {list(results_of(record, 'c3'))}")
    t.assert_tree(hosts["c3"][1], before["c3"], "c3, after the playbook stopped")
    check_module(t.module(hosts["c3"][1], "torch"), TORCH_CU128, "12.8")
    check(history(t, hosts["c3"][1])["staged"] == staged["c3"]["id"], "c3's staged generation is gone")
    recap = recap_lines(r)
    check(recap.get("c1", {}).get("failed") == 1 and recap.get("c2", {}).get("changed") == 1
          and recap.get("c3", {}).get("ok", 0) == 0, f"recap: {recap}", r)


def check_mode(t, ansible, server):
    """--check --diff: apply --dry-run says torch would change; nothing is staged or switched."""
    canary = t.cu128_venv(server, "canary-venv")
    before = t.tree(canary)
    inventory = ansible.inventory("check", {"canary": (t.manifest(t.upgrade_doc(server, canary), "canary.yaml"),
                                                       canary)})
    r, record = ansible.playbook(inventory, "--check", "--diff")
    harness.check_rc(r, 0)
    dry = results_of(record, "canary").get(STAGE, {})
    res = dry.get("result", {})
    check(dry.get("status") == "ok" and res.get("changed") is True and res.get("dry_run") is True
          and res.get("staged") is False and res.get("snapshot") is None, f"canary's check-mode stage: {dry}")
    check(any(c["name"] == "torch" and c["after"] == TORCH_CU130 for c in res["changes"]),
          f"canary's changes: {res['changes']}")
    check("torch==" + TORCH_CU130 in res["diff"]["after"], f"canary's diff: {res.get('diff')}")
    switch = results_of(record, "canary").get(SWITCH, {})
    check(switch.get("status") == "ok" and switch["result"].get("changed") is False
          and switch["result"].get("switched") is False, f"canary's check-mode switch: {switch}")
    t.assert_tree(canary, before, "ansible-playbook --check")
    check_module(t.module(canary, "torch"), TORCH_CU128, "12.8")
    check(history(t, canary)["staged"] is None, "--check staged a generation")


def scenario(t):
    ansible = Ansible(t)
    server = t.serve_stack()
    rollout(t, ansible, server)
    stage_fails(t, ansible, server)
    switch_refused(t, ansible, server)
    check_mode(t, ansible, server)


harness.main(scenario)

"""Fleet rollout through Ansible (issue 5 item 5): contrib/ansible's playbook and `stackup`
module, run by the real ansible-playbook against three inventory hosts that are all this
machine (connection: local), each with its own venv and manifest, one host per batch.
host1 upgrades cu128 -> cu130 (changed); host2's manifest expects torch cuda "13.1", so its
apply fails verification and stackup rolls it back (the task fails carrying stackup's JSON
errors); the play stops there: host3's venv is untouched and stackup never ran for it.
host1 once more: stackup reinstalls the same versions, so the task is not "changed". The
same fleet again two hosts per batch (`-e stackup_batch=2`): max_fail_percentage 0 stops it.
Then `--check` on a fresh venv: changed (the dry run would upgrade torch), the venv untouched.
"""
import json
import os
import re
import shutil

import harness
from harness import check, check_module
from wheels import TORCH_CU128, TORCH_CU130

PLAYBOOK = harness.REPO / "contrib" / "ansible" / "upgrade.yml"

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
                  "stackup_bin": harness.find_stackup(), "stackup_uv": self.t.uv_path,
                  "stackup_state_dir": str(self.t.state_dir)}
        doc = {"gpu": {"vars": common, "hosts": {
            host: {"stackup_manifest": str(m), "stackup_venv": str(v)} for host, (m, v) in hosts.items()}}}
        path = self.t.tmp / f"{name}.json"
        path.write_text(json.dumps(doc, indent=2))
        return path

    def playbook(self, inventory, *args):
        """Runs the example playbook; returns (Result, {"results": [...], "recap": {...}})."""
        record = self.t.tmp / f"{inventory.stem}-record.json"
        env = dict(self.env, STACKUP_TEST_ANSIBLE_RECORD=str(record))
        r = harness.run([self.exe, "-i", inventory, PLAYBOOK, *args], env=env)
        check(record.exists(), "the recorder callback wrote nothing", r)
        return r, json.loads(record.read_text())


def results_of(record, host):
    return {x["task"]: x for x in record["results"] if x["host"] == host}


def recap_lines(result):
    """{host: {ok: n, changed: n, failed: n, ...}} from the PLAY RECAP printed on stdout."""
    recap = result.stdout.rsplit("PLAY RECAP", 1)[-1]
    return {m[1]: {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m[2])}
            for m in re.finditer(r"^(\S+)\s+:\s+(.*)$", recap, re.M)}


def state_folders(t, venv):
    return list(t.state_dir.glob(f"{venv.name}-*")) if t.state_dir.exists() else []


def fleet(t, ansible, server, names, *args):
    """Runs the playbook over three fresh cu128 venvs, names[1]'s manifest expecting torch cuda
    "13.1": names[0] upgrades, names[1] fails and is rolled back, the play stops before names[2].
    Returns (result, record, names[0]'s apply result, {name: (manifest, venv)})."""
    first, failing, last = names
    venvs = {h: t.cu128_venv(server, f"{h}-venv") for h in names}
    manifests = {h: t.manifest(t.upgrade_doc(server, v, torch_cuda="13.1" if h == failing else "13.0"),
                               f"{h}.yaml") for h, v in venvs.items()}
    before = {h: t.tree(v) for h, v in venvs.items()}
    r, record = ansible.playbook(ansible.inventory(first, {h: (manifests[h], venvs[h]) for h in names}), *args)
    check(r.rc != 0, f"ansible-playbook passed although {failing}'s apply failed", r)

    # The first host: upgraded, changed, its snapshot named.
    applied = results_of(record, first).get("Apply the manifest", {})
    res = applied.get("result", {})
    check(applied.get("status") == "ok" and res.get("changed") is True and res.get("exit_code") == 0
          and res.get("rolled_back") is False and os.path.isdir(res["snapshot"]["path"]),
          f"{first}'s apply: {applied}")
    check(any(c["name"] == "torch" and c["before"] == TORCH_CU128 and c["after"] == TORCH_CU130
              for c in res["changes"]), f"{first}'s changes: {res['changes']}")
    check_module(t.module(venvs[first], "torch"), TORCH_CU130, "13.0")

    # The failing host: the task failed with stackup's errors; stackup rolled the venv back.
    failed = results_of(record, failing)
    res = failed.get("Apply the manifest", {}).get("result", {})
    check(failed.get("Apply the manifest", {}).get("status") == "failed" and res.get("exit_code") == 1
          and res.get("rolled_back") is True and res.get("changed") is False, f"{failing}'s apply: {failed}")
    check(all(w in res["msg"] for w in ("torch", "cuda", "13.1", "13.0")), f"{failing}'s msg: {res['msg']}")
    check(any(e.get("dist") == "torch" and e.get("field") == "cuda" and e.get("expected") == "13.1"
              and e.get("found") == "13.0" for e in res["errors"]), f"{failing}'s errors: {res['errors']}")
    check(res["stackup"]["command"] == "apply" and res["stackup"]["ok"] is False
          and res["stackup"]["errors"] == res["errors"], f"{failing}'s document: {res['stackup']}")
    check("Show what changed" not in failed, f"{failing} went on after its failure: {list(failed)}")
    t.assert_tree(venvs[failing], before[failing], f"{failing} after its rollback")
    check_module(t.module(venvs[failing], "torch"), TORCH_CU128, "12.8")

    # The last host: the play stopped before it; stackup never ran for it.
    check(not results_of(record, last), f"{last} ran: {list(results_of(record, last))}")
    t.assert_tree(venvs[last], before[last], f"{last}, after the play stopped")
    check(not state_folders(t, venvs[last]), f"stackup kept state for {last}: {state_folders(t, venvs[last])}")

    # The recap, as people read it, says the same.
    recap = recap_lines(r)
    check(recap.get(first, {}).get("changed") == 1 and recap[first].get("failed") == 0
          and recap.get(failing, {}).get("failed") == 1 and last not in recap, f"recap: {recap}", r)
    check(set(record["recap"]) == {first, failing}, f"recorded recap: {record['recap']}")
    return r, record, applied["result"], {h: (manifests[h], venvs[h]) for h in names}


def scenario(t):
    ansible = Ansible(t)
    server = t.serve_stack()

    # One host per batch (the playbook's default): host1 finishes its play before host2 starts.
    r, record, applied, hosts = fleet(t, ansible, server, ("host1", "host2", "host3"))
    check("Show what changed" in results_of(record, "host1"), f"host1 never reached the summary: {record}")

    # host1 again: stackup reinstalls and verifies, but no version changed, so nothing "changed".
    r, record = ansible.playbook(ansible.inventory("again", {"host1": hosts["host1"]}))
    harness.check_rc(r, 0)
    again = results_of(record, "host1").get("Apply the manifest", {})
    check(again.get("status") == "ok" and again["result"]["changed"] is False
          and again["result"]["snapshot"]["id"] != applied["snapshot"]["id"], f"host1's second apply: {again}")
    check(recap_lines(r).get("host1", {}).get("changed") == 0, f"recap: {recap_lines(r)}", r)
    check_module(t.module(hosts["host1"][1], "torch"), TORCH_CU130, "13.0")

    # Two hosts per batch: wide2 fails beside wide1, and max_fail_percentage 0 ends the play
    # there (without it, Ansible goes on to the next batch while a batch has a host left).
    r, record, _, _ = fleet(t, ansible, server, ("wide1", "wide2", "wide3"), "-e", "stackup_batch=2")
    check("Show what changed" not in results_of(record, "wide1"),
          f"wide1 went on although wide2 of its batch failed: {record}")

    # --check on a fresh venv: apply --dry-run says torch would change; the venv is untouched.
    canary = t.cu128_venv(server, "canary-venv")
    canary_before = t.tree(canary)
    check_inventory = ansible.inventory("check", {"canary": (t.manifest(t.upgrade_doc(server, canary),
                                                                        "canary.yaml"), canary)})
    r, record = ansible.playbook(check_inventory, "--check", "--diff")
    harness.check_rc(r, 0)
    dry = results_of(record, "canary").get("Apply the manifest", {})
    res = dry.get("result", {})
    check(dry.get("status") == "ok" and res.get("changed") is True and res.get("dry_run") is True
          and res.get("snapshot") is None, f"canary's check-mode apply: {dry}")
    check(any(c["name"] == "torch" and c["after"] == TORCH_CU130 for c in res["changes"]),
          f"canary's changes: {res['changes']}")
    check("torch==" + TORCH_CU130 in res["diff"]["after"], f"canary's diff: {res.get('diff')}")
    t.assert_tree(canary, canary_before, "ansible-playbook --check")
    check_module(t.module(canary, "torch"), TORCH_CU128, "12.8")


harness.main(scenario)

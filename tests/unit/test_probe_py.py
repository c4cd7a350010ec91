"""src/venv/probe.py run directly, as src/venv/probe.cpp runs it: `python -I -B -c SCRIPT REQUEST
OUT` in a real venv, OUT an anonymous memfd opened through /proc. The venv gets pip (ensurepip)
and a few wheels built here; every fact in the probe's JSON answer is compared with what that
venv's python says through the stdlib (importlib.metadata, sysconfig, platform), and the venv's
tree must be the same after a -B run. Exit 0: pass, 1: fail (the temp dir is kept and named),
125: no venv with pip can be made here (a skip in CTest).
"""
import json
import marshal
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "src" / "venv" / "probe.py"
sys.path.insert(0, str(REPO / "tests" / "support"))

import wheels  # noqa: E402

SKIP = 125
TIMEOUT_S = 240  # a hang guard only
NO_MODULE = "no importable module in RECORD: judged by its metadata only"

# What the venv's python says of itself, through the stdlib: the reference for the probe.
REFERENCE = r"""
import importlib.metadata as md, json, os, platform, re, sys, sysconfig
dists = {}
for d in md.distributions():
    key = re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower()
    dists.setdefault(key, {"name": d.metadata["Name"], "normalized": key, "version": d.version,
                           "requires": d.requires or []})
print(json.dumps({
    "executable": sys.executable, "version_info": list(sys.version_info[:3]),
    "implementation": sys.implementation.name, "soabi": sysconfig.get_config_var("SOABI") or "",
    "machine": platform.machine(), "libc": os.confstr("CS_GNU_LIBC_VERSION") or "",
    "prefix": sys.prefix, "base_prefix": sys.base_prefix,
    "python_full_version": platform.python_version(), "platform_release": platform.release(),
    "sys_platform": sys.platform, "site": sysconfig.get_paths()["purelib"],
    "dists": [dists[k] for k in sorted(dists)],
}))
"""

FIXTURE_INIT = '''print("probe_fixture: on stdout at import")
from . import version
__version__ = "1.2.3"
answer = 42
'''


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def check_equal(got, want, what):
    check(got == want, f"{what}: the probe says {got!r}, expected {want!r}")


def run(argv, env=None):
    r = subprocess.run([str(a) for a in argv], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       env=env, timeout=TIMEOUT_S)
    if r.returncode != 0:
        raise Failure(f"{argv[:4]} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def build_wheels(out):
    """The dists the probe is asked about, one shape each; returns their paths."""
    return [
        # The module is found from RECORD: probe_fixture, not the private module nor tests/.
        wheels.build_wheel(out, "Probe_Fixture", "1.2.3", {
            "probe_fixture/__init__.py": FIXTURE_INIT,
            "probe_fixture/version.py": 'cuda = "12.8"\n',
            "probe_fixture/sub.py": 'VALUE = "sub-value"\n',
            "_probe_fixture_native.py": "",
            "tests/__init__.py": "",
        }, requires=["six>=1.0", 'colorama; sys_platform == "win32"'],
            top_level=["_probe_fixture_native", "probe_fixture", "tests"]),
        # __version__ other than the dist's: the probe checks the files against RECORD.
        wheels.build_wheel(out, "Stale_Fixture", "2.0.0", {"stale_fixture/__init__.py": '__version__ = "1.9.0"\n'}),
        wheels.build_wheel(out, "Lagging_Fixture", "3.0.0", {"lagging_fixture/__init__.py": '__version__ = "2.9"\n'}),
        wheels.build_wheel(out, "Broken_Fixture", "0.1", {
            "broken_fixture/__init__.py": 'raise ImportError("broken on purpose")\n'}),
        wheels.build_wheel(out, "Data_Only", "1.0", {"data_only/README.txt": "no code here\n"}),
    ]


def make_venv(tmp):
    venv = tmp / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    if made.returncode != 0:
        raise Skip(f"{sys.executable} -m venv (with ensurepip) failed:\n{made.stdout}{made.stderr}")
    python = venv / "bin" / "python"
    env = dict(child_env(venv), PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1")
    run([python, "-I", "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
         "--no-cache-dir", "--disable-pip-version-check", *build_wheels(tmp / "wheels")], env)
    return venv, python


def child_env(venv):
    """What stackup gives the probe (manifest::child_environment): no PYTHON*, VIRTUAL_ENV set."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "PIP_", "UV_")) and k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    return dict(env, VIRTUAL_ENV=str(venv), NO_COLOR="1")


def run_probe(venv, python, request, bytecode=False, as_file=False):
    """The probe's answer, with its stdout and stderr; as_file: `python -I -B probe.py ...`."""
    fd = os.memfd_create("stackup-probe", os.MFD_CLOEXEC)
    try:
        out = f"/proc/{os.getpid()}/fd/{fd}"
        argv = [python, "-I"] + ([] if bytecode else ["-B"])
        argv += [PROBE] if as_file else ["-c", PROBE.read_text()]
        r = run(argv + [json.dumps(request), out], child_env(venv))
        with open(out) as f:  # a new open of the memfd: from its start
            return json.load(f), r.stdout, r.stderr
    finally:
        os.close(fd)


def tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


REQUEST = {"imports": [
    {"dist": "probe-fixture", "module": "", "attrs": ["answer", "sub.VALUE", "nothing_here"]},
    {"dist": "stale-fixture", "module": "stale_fixture", "attrs": []},
    {"dist": "lagging-fixture", "module": "", "attrs": []},
    {"dist": "broken-fixture", "module": "", "attrs": []},
    {"dist": "data-only", "module": "", "attrs": []},
    {"dist": "absent-dist", "module": "", "attrs": []},
    {"dist": "pip", "module": "pip", "attrs": ["__name__"]},
]}


def check_interpreter(got, ref):
    want = {
        "executable": ref["executable"],
        "version": "%d.%d.%d" % tuple(ref["version_info"]),
        "major": ref["version_info"][0],
        "minor": ref["version_info"][1],
        "implementation": ref["implementation"],
        "soabi": ref["soabi"],
        "machine": ref["machine"],
        "libc": ref["libc"],
        "is_venv": True,
    }
    check_equal(got, want, "interpreter")
    check(ref["prefix"] != ref["base_prefix"], f"the reference python is not in a venv: {ref}")


def check_markers(got, ref):
    for key, want in (("implementation_name", ref["implementation"]), ("os_name", "posix"),
                      ("platform_machine", ref["machine"]), ("platform_release", ref["platform_release"]),
                      ("platform_system", "Linux"), ("python_full_version", ref["python_full_version"]),
                      ("python_version", "%d.%d" % tuple(ref["version_info"][:2])),
                      ("sys_platform", ref["sys_platform"])):
        check_equal(got.get(key), want, f"markers[{key}]")


def check_distributions(got, ref):
    # The probe reads the dist-info folders by hand; importlib.metadata is the reference.
    check_equal(got, ref["dists"], "distributions")
    fixture = next((d for d in got if d["normalized"] == "probe-fixture"), None)
    check_equal(fixture, {"name": "Probe_Fixture", "normalized": "probe-fixture", "version": "1.2.3",
                          "requires": ["six>=1.0", 'colorama; sys_platform == "win32"']}, "the fixture dist")
    check(any(d["normalized"] == "pip" for d in got), f"pip is not listed: {got}")


def check_imports(got, ref, site):
    by_dist = {r["dist"]: r for r in got}
    check_equal([r["dist"] for r in got], [r["dist"] for r in REQUEST["imports"]], "the imports' order")
    fixture = by_dist["probe-fixture"]
    check_equal({k: fixture.get(k) for k in ("module", "version", "cuda", "attrs")},
                {"module": "probe_fixture", "version": "1.2.3", "cuda": "12.8",
                 "attrs": {"answer": "42", "sub.VALUE": "sub-value"}}, "probe-fixture's import")
    check_equal(list(fixture["attr_errors"]), ["nothing_here"], "probe-fixture's attr_errors")
    check(fixture["attr_errors"]["nothing_here"].startswith("ModuleNotFoundError: "),
          f"nothing_here: {fixture['attr_errors']}")
    check("file_record" not in fixture, f"__version__ is the dist's, yet RECORD was checked: {fixture}")

    stale = by_dist["stale-fixture"]
    check_equal((stale.get("version"), stale.get("file_record")), ("1.9.0", "differs"), "stale-fixture")
    check(os.path.samefile(stale["file"], site / "stale_fixture" / "__init__.py"), f"stale-fixture: {stale}")
    lagging = by_dist["lagging-fixture"]
    check_equal((lagging["module"], lagging.get("version"), lagging.get("file_record")),
                ("lagging_fixture", "2.9", "matches"), "lagging-fixture")

    check_equal(by_dist["broken-fixture"].get("error"), "ImportError: broken on purpose", "broken-fixture")
    check_equal(by_dist["data-only"], {"dist": "data-only", "module": "", "skipped": NO_MODULE}, "data-only")
    absent = by_dist["absent-dist"]
    check_equal((absent["module"], absent.get("error")),
                ("absent_dist", "ModuleNotFoundError: No module named 'absent_dist'"), "absent-dist")
    pip = by_dist["pip"]
    pip_version = next(d["version"] for d in ref["dists"] if d["normalized"] == "pip")
    check_equal((pip.get("error"), pip.get("version"), pip["attrs"]), (None, pip_version, {"__name__": "pip"}),
                "pip's import")


def check_bytecode_names(venv, python, site):
    """Without -B the imports write .pyc files, each naming `to` instead of the venv (bytecode_names)."""
    to = "/srv/stackup-elsewhere/venv"
    request = {"imports": [{"dist": "probe-fixture", "module": "", "attrs": []}],
               "bytecode_names": {"from": str(venv), "to": to}}
    facts, _, _ = run_probe(venv, python, request, bytecode=True)
    check_equal(facts["imports"][0].get("version"), "1.2.3", "the import with bytecode written")
    pycs = sorted((site / "probe_fixture" / "__pycache__").glob("__init__.*.pyc"))
    check(len(pycs) == 1, f"without -B the import wrote no probe_fixture/__pycache__/__init__.*.pyc: {pycs}")
    code = marshal.loads(pycs[0].read_bytes()[16:])
    want = to + "/" + str((site / "probe_fixture" / "__init__.py").relative_to(venv))
    check_equal(code.co_filename, want, "the .pyc's co_filename")


def scenario(tmp):
    venv, python = make_venv(tmp)
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    # Edited after the install: the file no longer has RECORD's hash.
    with open(site / "stale_fixture" / "__init__.py", "a") as f:
        f.write("# edited after the install\n")
    ref = json.loads(run([python, "-I", "-c", REFERENCE], child_env(venv)).stdout)
    check(Path(ref["site"]) == site, f"the venv's site-packages is {ref['site']}, not {site}")
    check(not (site / "probe_fixture" / "__pycache__").exists(), "pip compiled the fixture (--no-compile)")

    before = tree(venv)
    facts, stdout, stderr = run_probe(venv, python, REQUEST)
    check_equal(stdout, "", "the probe's stdout (an import's print goes to stderr)")
    check("probe_fixture: on stdout at import" in stderr, f"the import's print is not on stderr: {stderr!r}")
    check_equal(sorted(facts), ["distributions", "imports", "interpreter", "markers"], "the answer's keys")
    check_interpreter(facts["interpreter"], ref)
    check_markers(facts["markers"], ref)
    check_distributions(facts["distributions"], ref)
    check_imports(facts["imports"], ref, site)
    check_equal(tree(venv), before, "the venv's files after a -B run (no __pycache__, nothing else)")

    as_file, _, _ = run_probe(venv, python, REQUEST, as_file=True)
    check_equal(as_file, facts, "the answer of `python -I -B probe.py` against that of `-c`")
    check_equal(tree(venv), before, "the venv's files after a -B run of probe.py as a file")

    check_bytecode_names(venv, python, site)


def main():
    base = os.environ.get("STACKUP_TEST_TMPDIR")
    if base:
        os.makedirs(base, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="stackup-probe-direct-", dir=base)).resolve()
    try:
        scenario(tmp)
    except Skip as e:
        print(f"SKIP probe_direct: {e}", flush=True)
        shutil.rmtree(tmp, ignore_errors=True)
        return SKIP
    except BaseException as e:  # the test's verdict, whatever went wrong
        traceback.print_exc()
        print(f"FAIL probe_direct: {e}\nkept temp dir of failed test: {tmp}", flush=True)
        return 1
    print("PASS probe_direct", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

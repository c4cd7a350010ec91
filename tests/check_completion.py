#!/usr/bin/env python3
"""Shell completion (contrib/completion/) and the man page (contrib/man/stackup.1),
checked against the stackup binary so that they cannot drift from it.

- Every command and long option that `stackup --help` and each command's
  `--help` list must be named in the bash completion, the zsh completion and
  the man page (options the binary does not have yet may be there already);
  each command's `--help` lists the common options too.
- The bash completion is driven for real (COMP_WORDS, COMP_CWORD, then its
  function): commands, the snapshots commands, each command's options,
  the --snapshot-strategy values, manifest and plan files, directories, and
  snapshot ids of a snapshot that the binary itself takes of a real venv.
- zsh: syntax, loaded by compinit, and the same cases driven in a pty.
- The man page renders with groff without a warning and has its sections,
  every exit code and every environment variable the binary reads.

STACKUP_BIN names the binary (CTest sets it); without it: exit 125 (skip).
A missing zsh or groff is reported loudly as SKIPPED and the rest still runs;
the exit code is 1 when anything that ran failed, else 125 (a skip) when a part
was skipped.
"""
import os
import pathlib
import pty
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BASH_COMPLETION = ROOT / "contrib" / "completion" / "stackup.bash"
ZSH_COMPLETION = ROOT / "contrib" / "completion" / "_stackup"
MAN_PAGE = ROOT / "contrib" / "man" / "stackup.1"
MAN_SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "MANIFEST", "EXIT STATUS",
                "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"]
EXIT_CODES = range(8)  # PRODUCT.md: 0 success ... 7 interrupted transaction
# The --snapshot-strategy values when the binary's help does not list them.
STRATEGIES_FALLBACK = {"automatic", "reflink", "hardlink", "copy"}

failures = []
skipped = []


def check(ok, what, detail=""):
    print(("ok    " if ok else "FAIL  ") + what + ("" if ok or not detail else "\n      " + detail))
    if not ok:
        failures.append(what)
    return ok


def skip(what):
    print("SKIPPED: " + what, file=sys.stderr, flush=True)
    skipped.append(what)


# ---------------------------------------------------------------- the binary's help

class Help:
    """What one `stackup ... --help` lists (CLI11's layout)."""

    def __init__(self, text):
        self.long_options = set()
        self.subcommands = []
        self.envs = set()
        self.choices = {}
        section = None
        for line in text.splitlines():
            header = re.match(r"^(\w[\w ]*?)(?: \(.*\))?:\s*$", line)
            if header:
                # "Options", "Subcommands", "Common options (before or after the command)".
                section = "options" if header.group(1).lower() == "common options" else header.group(1).lower()
                continue
            entry = re.match(r"^  (\S+)", line)
            if not entry:
                continue
            if section == "options":
                names = entry.group(1).split(",")
                longs = [n for n in names if n.startswith("--")]
                self.long_options.update(longs)
                self.envs.update(re.findall(r"\(Env:(\w+)\)", line))
                choice = re.search(r":\{([^}]*)\}", line)
                if choice and longs:
                    self.choices[longs[0]] = set(choice.group(1).split(","))
            elif section == "subcommands":
                self.subcommands.append(entry.group(1))


def collect_help(binary):
    """{command path (tuple): Help}, walking every nested command."""
    out = {}

    def walk(path):
        proc = subprocess.run([binary, *path, "--help"], capture_output=True, text=True, timeout=30)
        if proc.returncode != 0:
            check(False, f"`stackup {' '.join(path + ('--help',))}` exits 0", proc.stderr.strip())
            return
        out[path] = Help(proc.stdout)
        for sub in out[path].subcommands:
            walk(path + (sub,))

    walk(())
    return out


def check_common_options(helps):
    """Each command's --help lists the options every command takes, as `stackup --help` does."""
    common = helps[()].long_options - {"--help", "--version"}
    check(common, "`stackup --help` lists common options")
    for path, help_ in helps.items():
        if path:
            missing = common - help_.long_options
            check(not missing, f"`stackup {' '.join(path)} --help` lists the common options",
                  f"missing: {sorted(missing)}")


# ---------------------------------------------------------------- bash

BASH_DRIVER = r'''
source "$1" || exit 3
func=$(complete -p stackup 2>/dev/null | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
[[ -n $func ]] || { echo "no 'complete -F ... stackup' after sourcing $1" >&2; exit 4; }
cword=$2
shift 2
COMP_WORDS=("$@")
COMP_CWORD=$cword
COMP_LINE="${COMP_WORDS[*]:0:cword+1}"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
"$func" stackup "${COMP_WORDS[cword]}" "${COMP_WORDS[cword-1]}" || exit 5
printf '%s\n' "${COMPREPLY[@]}"
'''


def bash_complete(words, cword, cwd, env):
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", BASH_DRIVER, "bash", str(BASH_COMPLETION),
                           str(cword), *words], capture_output=True, text=True, cwd=cwd, env=env, timeout=30)
    if proc.returncode != 0:
        return None, proc.stderr.strip() or f"exit {proc.returncode}"
    return [line for line in proc.stdout.splitlines() if line], ""


# ---------------------------------------------------------------- zsh, in a pty

ZSH_SETUP = r'''
PS1='' PROMPT='' RPROMPT='' PS2=''
fpath=(%(compdir)s $fpath)
autoload -Uz compinit && compinit -u -D
zstyle ':completion:*' insert-tab false
_check_done() { print -r -- '<<DONE>>'; exit }
comppostfuncs=(_check_done)
# Every candidate that reaches the completion list, as it is added.
compadd() {
  if [[ " ${@[1,(i)--]} " == *\ -[OAD]* ]]; then builtin compadd "$@"; return; fi
  local -a __found
  builtin compadd -O __found "$@"
  (( $#__found )) && print -rl -- "<<M>>"${^__found}
  builtin compadd "$@"
}
print -r -- '<<READY>>'
'''


def zsh_complete(line, cwd, env, timeout=20):
    """The candidates zsh offers for `line` + TAB, in an interactive zsh in a pty."""
    with tempfile.TemporaryDirectory() as tmp:
        setup = pathlib.Path(tmp) / "setup.zsh"
        setup.write_text(ZSH_SETUP % {"compdir": shlex.quote(str(ZSH_COMPLETION.parent))})
        pid, fd = pty.fork()
        if pid == 0:  # the child: exec or die, never return into the test
            try:
                os.chdir(cwd)
                os.execvpe("zsh", ["zsh", "-f", "-i"], env)
            finally:
                os._exit(127)
        seen = b""
        deadline = time.monotonic() + timeout

        def read_until(marker):
            nonlocal seen
            while marker not in seen:
                ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    return False
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    return False
                if not chunk:
                    return False
                seen += chunk
            return True

        try:
            os.write(fd, f"source {shlex.quote(str(setup))}\n".encode())
            if not read_until(b"<<READY>>\r"):
                return None, "zsh did not start: " + seen.decode(errors="replace")[-400:]
            seen = b""
            os.write(fd, line.encode() + b"\t")
            if not read_until(b"<<DONE>>"):
                return None, "no completion ran: " + seen.decode(errors="replace")[-400:]
            return re.findall(r"<<M>>([^\r\n]*)", seen.decode(errors="replace")), ""
        finally:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            os.close(fd)


# ---------------------------------------------------------------- man page

def render_man():
    """The page as plain text (None without groff) and groff's warnings."""
    if shutil.which("groff") is None:
        return None, None
    lint = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(MAN_PAGE)], capture_output=True,
                          text=True, timeout=60)
    warnings = (lint.stderr.strip() or ("" if lint.returncode == 0 else f"exit {lint.returncode}"))
    # One paragraph per line (LL), no hyphenation, no bold or underline: text to search.
    text = subprocess.run(["groff", "-man", "-Tutf8", "-rLL=2000n", "-rHY=0", "-P-cbou", str(MAN_PAGE)],
                          capture_output=True, text=True, timeout=60).stdout
    return text, warnings


def man_source_text():
    """Without groff: the page's source laid out as rendered text, roughly
    (section headers flush left, the rest indented, macros and escapes gone)."""
    lines = []
    for line in MAN_PAGE.read_text().splitlines():
        line = re.sub(r"\\f[BIRP]|\\&|\\:", "", line).replace("\\-", "-").replace("\\(ti", "~")
        if line.startswith('.\\"'):
            continue
        header = re.match(r"^\.SH\s+\"?([^\"]*)\"?$", line)
        if header:
            lines.append(header.group(1))
        elif line.startswith("."):
            words = line.split(None, 1)
            if len(words) == 2:
                lines.append("       " + words[1].replace('"', ""))
        else:
            lines.append("       " + line)
    return "\n".join(lines) + "\n"


def man_section(text, name):
    match = re.search(rf"^{re.escape(name)}\n(.*?)(?=^[A-Z][A-Z ]+\n|\Z)", text, re.M | re.S)
    return match.group(1) if match else ""


# ---------------------------------------------------------------- the checks

def named_in(text, token):
    return re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", text) is not None


def check_coverage(helps, man_text):
    bash_text = BASH_COMPLETION.read_text()
    zsh_text = ZSH_COMPLETION.read_text()
    docs = {"bash completion": bash_text, "zsh completion": zsh_text, "man page": man_text}
    for path, help_ in sorted(helps.items()):
        where = "stackup " + " ".join(path) if path else "stackup"
        for option in sorted(help_.long_options):
            for doc, text in docs.items():
                check(named_in(text, option), f"{doc} names {option} ({where})")
        if path:
            for doc, text in docs.items():
                wanted = " ".join(path) if doc == "man page" else path[-1]
                check(named_in(text, wanted), f"{doc} names the command `{where}`")


def check_man(helps, man_text, warnings):
    if warnings is not None:
        check(warnings == "", "groff -man -Tutf8 -ww -z renders the man page without a warning", warnings)
    for name in MAN_SECTIONS:
        check(re.search(rf"^{name}$", man_text, re.M) is not None, f"man page has the section {name}")
    exit_status = man_section(man_text, "EXIT STATUS")
    for code in EXIT_CODES:
        check(re.search(rf"^\s+{code}\s", exit_status, re.M) is not None, f"man page EXIT STATUS lists {code}")
    environment = man_section(man_text, "ENVIRONMENT")
    envs = set().union(*(h.envs for h in helps.values())) | {"NO_COLOR"}
    for env in sorted(envs):
        check(named_in(environment, env), f"man page ENVIRONMENT names {env}")
    for prefix in ("PIP_", "UV_"):
        check(prefix in environment, f"man page ENVIRONMENT says the caller's {prefix}* are not passed on")
    check(named_in(man_section(man_text, "SEE ALSO"), "uv"), "man page SEE ALSO names uv(1)")
    # An option written with a plain '-' may render as a hyphen (U+2010) that no
    # one can paste or search for; options are written \-\-like\-this.
    plain = [f"{n}: {line}" for n, line in enumerate(MAN_PAGE.read_text().splitlines(), 1)
             if not line.startswith('.\\"') and re.search(r"(?<![\\\w-])--?[A-Za-z]", line)]
    check(not plain, "man page writes every option with \\- (no plain '-')", "\n      ".join(plain))


def make_fixture(binary, tmp):
    """A work dir with files to complete, a real venv, and snapshots the binary takes of it."""
    work = tmp / "work"
    (work / "sub").mkdir(parents=True)
    for name in ("m.yaml", "n.yml", "saved-plan.json", "notes.txt"):
        (work / name).write_text("")
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "stackup").symlink_to(pathlib.Path(binary).resolve())
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKUP_")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", HOME=str(tmp), TERM="dumb")

    venv = tmp / "venvs" / "env"
    made = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], capture_output=True,
                          text=True, timeout=120)
    if not check(made.returncode == 0, "a real venv to snapshot", made.stdout + made.stderr):
        return None
    ids = {}
    for where, extra in (("beside", []), ("state-dir", ["--state-dir", str(tmp / "state")])):
        proc = subprocess.run([binary, "snapshots", "create", "--venv", str(venv), "--label", where, *extra],
                              capture_output=True, text=True, env=env, timeout=120)
        found = re.search(r"snapshot (\S+) created", proc.stdout)
        if not check(proc.returncode == 0 and found is not None, f"the binary snapshots a real venv ({where})",
                     proc.stdout + proc.stderr):
            return None
        ids[where] = found.group(1)
    (work / "venv.yaml").write_text(
        f"version: 1\nname: t\nvenv: {venv}\nindexes:\n  pypi: http://127.0.0.1:9/simple\n"
        "steps:\n  - name: a\n    index: pypi\n    packages: [a]\n")
    return {"work": work, "env": env, "venv": venv, "state": tmp / "state", "ids": ids}


def cases(helps, fx):
    """(words with the one being completed last, how to judge the candidates, what[, environment])."""
    top = helps.get((), Help(""))
    strategies = top.choices.get("--snapshot-strategy", STRATEGIES_FALLBACK)
    out = [
        (["stackup", "ap"], ("exactly", {"apply"}), "a command from its prefix"),
        (["stackup", ""], ("exactly", set(top.subcommands)), "every command"),
        (["stackup", "-v", "st"], ("exactly", {"status"}), "a command after an option"),
        (["stackup", "snapshots", ""], ("exactly", set(helps.get(("snapshots",), Help("")).subcommands)),
         "every snapshots command"),
        (["stackup", "apply", "--dry"], ("exactly", {"--dry-run"}), "a command's option from its prefix"),
        (["stackup", "--snapshot-strategy", ""], ("exactly", strategies), "the snapshot strategies"),
        (["stackup", "plan", ""], ("has", {"m.yaml", "n.yml", "sub"}, {"notes.txt", "saved-plan.json"}),
         "plan MANIFEST: YAML files and directories"),
        (["stackup", "plan", "m"], ("exactly", {"m.yaml"}), "plan MANIFEST from its prefix"),
        (["stackup", "apply", ""], ("has", {"m.yaml", "saved-plan.json", "sub"}, {"notes.txt"}),
         "apply MANIFEST|PLAN: YAML and JSON files"),
        (["stackup", "--venv", ""], ("has", {"sub"}, {"m.yaml"}), "--venv DIR: directories only"),
        (["stackup", "--state-dir", "s"], ("exactly", {"sub"}), "--state-dir DIR: directories only"),
    ]
    for path, help_ in sorted(helps.items()):
        if path and not help_.subcommands:
            wanted = help_.long_options | top.long_options
            out.append((["stackup", *path, "--"], ("has", wanted, set()), f"`stackup {' '.join(path)}` options"))
    if fx is not None:
        venv, state, ids = str(fx["venv"]), str(fx["state"]), fx["ids"]
        out += [
            (["stackup", "--venv", venv, "rollback", "--to", ""], ("exactly", {ids["beside"]}),
             "rollback --to ID: the snapshots beside --venv"),
            (["stackup", "rollback", "--venv", venv, "--state-dir", state, "--to", ""],
             ("exactly", {ids["state-dir"]}), "rollback --to ID: the snapshots in --state-dir"),
            (["stackup", "--state-dir", state, "snapshots", "show", ""], ("exactly", {ids["state-dir"]}),
             "snapshots show ID: the snapshots in --state-dir"),
            (["stackup", "rollback", "venv.yaml", "--to", ""], ("exactly", {ids["beside"]}),
             "rollback MANIFEST --to ID: the manifest's venv's snapshots"),
            (["stackup", "snapshots", "delete", "--venv", venv, ""], ("exactly", {ids["beside"]}),
             "snapshots delete ID"),
            (["stackup", "snapshots", "show", ""], ("exactly", {ids["state-dir"]}),
             "snapshots show ID: the snapshots in STACKUP_STATE_DIR", {"STACKUP_STATE_DIR": state}),
        ]
    return out


def judge(found, how):
    found = set(found)
    if how[0] == "exactly":
        return found == how[1], f"wanted exactly {sorted(how[1])}"
    missing, unwanted = how[1] - found, how[2] & found
    return not missing and not unwanted, f"missing {sorted(missing)}, unwanted {sorted(unwanted)}"


def run_cases(shell, complete, table, env):
    for words, how, what, *extra in table:
        found, error = complete(words, {**env, **extra[0]} if extra else env)
        if found is None:
            check(False, f"{shell}: {what}: `{' '.join(words)}<TAB>`", error)
            continue
        ok, wanted = judge(found, how)
        check(ok, f"{shell}: {what}: `{' '.join(words)}<TAB>`", f"{wanted}; got {sorted(set(found))}")


def check_zsh(table, work, env):
    if shutil.which("zsh") is None:
        skip("zsh is not installed: the zsh completion was not checked (apt-get install zsh)")
        return
    syntax = subprocess.run(["zsh", "-n", str(ZSH_COMPLETION)], capture_output=True, text=True, timeout=30)
    check(syntax.returncode == 0, "zsh -n accepts the zsh completion", syntax.stderr.strip())
    compdir = shlex.quote(str(ZSH_COMPLETION.parent))
    load = subprocess.run(["zsh", "-f", "-c", f"fpath=({compdir} $fpath); autoload -Uz compinit; "
                           "compinit -u -D; print -r -- $_comps[stackup]"],
                          capture_output=True, text=True, env=env, timeout=60)
    check(load.stdout.strip() == "_stackup", "compinit binds stackup to _stackup", (load.stdout + load.stderr).strip())
    run_cases("zsh", lambda words, env: zsh_complete(" ".join(words), work, env), table, env)


def main():
    binary = os.environ.get("STACKUP_BIN", "")
    if not binary or not os.access(binary, os.X_OK):
        print(f"SKIP: STACKUP_BIN ({binary!r}) is not an executable stackup; build it first", file=sys.stderr)
        return 125
    if shutil.which("bash") is None:
        print("SKIP: bash is not installed", file=sys.stderr)
        return 125

    helps = collect_help(binary)
    check_common_options(helps)
    man_text, warnings = render_man()
    if man_text is None:
        skip("groff is not installed: the man page was neither rendered nor linted; "
             "checking its source text only (apt-get install groff-base)")
        man_text = man_source_text()
    check_coverage(helps, man_text)
    check_man(helps, man_text, warnings)

    with tempfile.TemporaryDirectory(prefix="stackup-completion-") as tmp_name:
        fx = make_fixture(binary, pathlib.Path(tmp_name))
        env = fx["env"] if fx else dict(os.environ)
        work = fx["work"] if fx else ROOT
        table = cases(helps, fx)

        run_cases("bash", lambda words, env: bash_complete(words, len(words) - 1, work, env), table, env)
        # The cursor before the last words: what they name still counts.
        if fx is not None:
            for after in (["--venv", str(fx["venv"])], ["venv.yaml"]):
                words = ["stackup", "snapshots", "show", "", *after]
                found, error = bash_complete(words, 3, work, env)
                check(found is not None and set(found) == {fx["ids"]["beside"]},
                      f"bash: `stackup snapshots show <TAB> {' '.join(after)}`: the snapshots of that venv",
                      error or f"got {found}")

        check_zsh(table, work, env)

    print(f"\n{len(failures)} failed" + (f", skipped: {'; '.join(skipped)}" if skipped else ""))
    for what in failures:
        print("  FAILED: " + what)
    if failures:
        return 1
    return 125 if skipped else 0   # a part not checked is a skip (CTest's 125), never a pass


if __name__ == "__main__":
    sys.exit(main())

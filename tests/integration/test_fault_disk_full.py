"""The disk fills while apply takes its snapshot or builds its generation (tmpfs mounts, so the
test needs root: it skips loudly without). Each time: exit 3 before anything in the venv
changed (tree digest and root inode), a message naming the lack of space and the path, no
half-made snapshot or generation left in the state dir (no folder `snapshots list` does not know,
no clone), and `status` clean (exit 0). A whole generation of the venv as it is may stay.
1. The snapshot: the state dir is a tmpfs of 256 KiB, another filesystem than the venv's (so the
   apply runs in place, copying the venv, some MB, into it).
2. The generation's clone: the venv and its default state dir (`.stackup/` beside it) on one tmpfs
   whose inodes the venv nearly fills: the clone (hard links, but a new inode per directory)
   runs out of them.
"""
import json
import os
import subprocess
from pathlib import Path

import harness
from harness import check, check_rc, check_says


class Tmpfs:
    """A tmpfs mounted at `path` for a `with` block; unmounted (lazily if busy) at its end."""

    def __init__(self, path, options):
        self.path, self.options = Path(path), options

    def __enter__(self):
        self.path.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", self.options, "tmpfs", str(self.path)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise harness.Skip(f"cannot mount a tmpfs (this test needs root; euid {os.geteuid()}): "
                               f"{r.stderr.strip()}")
        return self.path

    def __exit__(self, *exc):
        if subprocess.run(["umount", str(self.path)]).returncode != 0:
            subprocess.run(["umount", "-l", str(self.path)])


def bulk(venv, dirs, files, size):
    site = next(Path(venv).glob("lib/python3*/site-packages"))
    for d in range(dirs):
        folder = site / "bulk_data" / f"d{d:03d}"
        folder.mkdir(parents=True)
        for i in range(files):
            (folder / f"f{i:03d}.dat").write_bytes(b"x" * size)


def leftovers(state, venv, extra):
    """What a failed apply left half-made in `state`'s snapshot store: a folder that is no
    snapshot `snapshots list` knows, a ready tree (a clone), an object when there is no snapshot."""
    r = harness.run([harness.find_stackup(), "snapshots", "list", "--json", "--venv", venv, *extra],
                    env=harness.child_env())
    check_rc(r, 0)
    known = {s["id"] for s in json.loads(r.stdout)["snapshots"]}
    left = []
    for store in Path(state).glob("*/snapshots"):
        for entry in store.iterdir():
            if entry.name == ".objects":
                if not known:
                    left += [str(p) for p in entry.rglob("*") if not p.is_dir()]
            elif entry.name not in known:
                left.append(str(entry))
            elif (entry / "ready").exists():
                left.append(str(entry / "ready"))
    return sorted(left)


def refused(t, manifest, venv, state, what, *extra):
    before = t.tree(venv)
    root = os.stat(venv).st_ino
    argv = [harness.find_stackup(), "apply", manifest, *extra]
    r = harness.run(argv, env=harness.child_env({"STACKUP_UV": t.uv_path}))
    check_rc(r, 3)
    check_says(r, "no space left on device")
    check(str(state) in r.output, f"the message names no path in {state}", r)
    t.assert_tree(venv, before, f"after running out of space during {what}")
    check(os.stat(venv).st_ino == root, f"the venv's root directory was replaced ({what})")
    left = leftovers(state, venv, extra)
    check(not left, f"a half-made snapshot or generation is left in {state}: {left}")
    status = harness.run([harness.find_stackup(), "status", "--venv", venv, *extra],
                         env=harness.child_env({"STACKUP_UV": t.uv_path}))
    check_rc(status, 0)
    return r


def scenario(t):
    server = t.serve_stack()

    # 1. The snapshot, into a small state dir on its own filesystem.
    venv = t.cu128_venv(server, "venv-snapshot")
    bulk(venv, 8, 32, 16 * 1024)   # 4 MB: far more than the state dir holds
    manifest = t.manifest(t.upgrade_doc(server, venv), "snapshot.yaml")
    state = t.tmp / "small-state"
    with Tmpfs(state, "size=256k,mode=0755"):
        refused(t, manifest, venv, state, "the snapshot", "--state-dir", state)

    # 2. The clone, in the default state dir beside the venv, on a filesystem short of inodes.
    # On tmpfs a hard link takes an inode too: the base generation links each of the venv's
    # files once (its object store), then the clone makes every directory and links every file
    # again. The inodes left let the first through and stop the second halfway.
    disk = t.tmp / "disk"
    with Tmpfs(disk, "size=64m,mode=0755") as mounted:
        venv = t.cu128_venv(server, "disk/venv")
        bulk(venv, 120, 1, 16)
        fs = os.statvfs(disk)
        dirs = sum(1 for p in venv.rglob("*") if p.is_dir() and not p.is_symlink()) + 1
        files = sum(1 for p in venv.rglob("*") if not p.is_dir() or p.is_symlink())
        inodes = (fs.f_files - fs.f_ffree) + files + 40 + dirs // 2
        print(f"{disk}: the venv has {dirs} directories and {files} files; {inodes} inodes in all", flush=True)
        r = subprocess.run(["mount", "-o", f"remount,nr_inodes={inodes}", str(mounted)], capture_output=True,
                           text=True)
        check(r.returncode == 0, f"cannot limit the tmpfs's inodes: {r.stderr}")
        manifest = t.manifest(t.upgrade_doc(server, venv), "clone.yaml")
        r = refused(t, manifest, venv, disk / ".stackup", "the generation's clone")
        check("/ready" in r.output, "the apply did not run out of inodes in its clone (no .../ready path named)", r)

harness.main(scenario)

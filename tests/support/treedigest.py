"""An independent digest of a directory tree, to prove a restore is exact.

Each entry (the root included, as ".") is: relative path, type, permission bits, mtime_ns,
and for files their size and sha256, for symlinks their target. Symlinks are not followed.
Directory sizes are left out: they depend on the filesystem's history, not on the tree.

  treedigest.py DIR          prints one hex digest
  treedigest.py --list DIR   prints one line per entry (diff two of these to see what moved)
"""
import hashlib
import os
import stat
import sys


def entries(root):
    """Sorted entry lines of the tree under `root`."""
    lines = []

    def visit(path, rel):
        st = os.lstat(path)
        mode = stat.S_IMODE(st.st_mode)
        head = f"{rel}\t{_kind(st.st_mode)}\t{mode:04o}\t{st.st_mtime_ns}"
        if stat.S_ISREG(st.st_mode):
            lines.append(f"{head}\t{st.st_size}\t{_file_sha256(path)}")
        elif stat.S_ISLNK(st.st_mode):
            lines.append(f"{head}\t->\t{os.readlink(path)}")
        else:
            lines.append(head)
        if stat.S_ISDIR(st.st_mode):
            for name in sorted(os.listdir(path)):
                visit(os.path.join(path, name), name if rel == "." else f"{rel}/{name}")

    visit(os.fspath(root), ".")
    return lines


def digest(root):
    """The sha256 (hex) of the tree's entry lines."""
    return hashlib.sha256("\n".join(entries(root)).encode("utf-8", "surrogateescape")).hexdigest()


def diff(before, after, limit=40):
    """Human-readable difference of two entries() lists, at most `limit` lines."""
    old, new = set(before), set(after)
    out = [f"- {e}" for e in before if e not in new] + [f"+ {e}" for e in after if e not in old]
    if len(out) > limit:
        out = out[:limit] + [f"... and {len(out) - limit} more"]
    return "\n".join(out)


def _kind(mode):
    for test, name in ((stat.S_ISDIR, "dir"), (stat.S_ISREG, "file"), (stat.S_ISLNK, "link"),
                       (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "sock")):
        if test(mode):
            return name
    return "other"


def _file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main(argv):
    args = argv[1:]
    listing = bool(args) and args[0] == "--list"
    if listing:
        args = args[1:]
    if len(args) != 1 or not os.path.isdir(args[0]):
        print(__doc__, file=sys.stderr)
        return 2
    if listing:
        print("\n".join(entries(args[0])))
    else:
        print(digest(args[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

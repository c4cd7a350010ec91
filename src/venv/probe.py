# The Python side of the venv probe, run as `python -I -B -c SCRIPT REQUEST OUT` (-B: judging a
# venv must not write .pyc files into it), or without -B where the venv is being built (probe.hpp's
# Bytecode); then REQUEST's "bytecode_names" {from, to} makes each .pyc it writes name `to`, the
# path the venv will have, while the code it runs names where it is.
# It must work on any CPython >= 3.8 with the stdlib only, print nothing that matters (imports
# may print; stdout is sent to stderr while they run) and write one JSON document to OUT.
# Built in as venv::kProbeScript (cmake/embed_text.cmake: ASCII, no NUL, < 128 KiB: one argv
# string); tests/probe.cmake compiles, lints (pyflakes) and runs it directly.
import contextlib, importlib, json, os, platform, posixpath, re, sys, sysconfig
# Not importlib.metadata (37 ms to import) where the dist-info folders answer: InstalledDist below.

def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()

def interpreter():
    libc = ""
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "executable": sys.executable,
        "version": "%d.%d.%d" % sys.version_info[:3],
        "major": sys.version_info[0],
        "minor": sys.version_info[1],
        "implementation": sys.implementation.name,
        "soabi": sysconfig.get_config_var("SOABI") or "",
        "machine": platform.machine(),
        "libc": libc,
        "is_venv": sys.prefix != getattr(sys, "base_prefix", sys.prefix),
    }

def markers():
    def implementation_version():
        info = sys.implementation.version
        version = "{0.major}.{0.minor}.{0.micro}".format(info)
        if info.releaselevel != "final":
            version += info.releaselevel[0] + str(info.serial)
        return version
    return {
        "implementation_name": sys.implementation.name,
        "implementation_version": implementation_version(),
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    }

def core_metadata(dist):
    """Name, Version and Requires-Dist of a dist: its METADATA's header block (an egg's PKG-INFO,
    and its requires.txt), read by hand. dist.metadata runs the email parser, ~2 ms a dist, and
    .version and .requires run it again: three times the whole probe's other work."""
    text = dist.read_text("METADATA")
    if text is None:
        text = dist.read_text("PKG-INFO") or ""
    name = version = None
    requires = []
    for line in text.splitlines():
        if not line:
            break  # the headers end at the first empty line; the description follows
        if line[0] in " \t":
            continue  # a value continued (a long License or Summary; "        " in a License's text too)
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "name" and name is None:
            name = value
        elif key == "version" and version is None:
            version = value
        elif key == "requires-dist":
            requires.append(value)
    if not requires and dist.read_text("requires.txt") is not None:
        requires = list(dist.requires or [])  # an egg's
    return name, version, requires

class InstalledDist:
    """A .dist-info or .egg-info folder, read as importlib.metadata's PathDistribution reads one;
    what only that can say (files, an egg's requires) is asked of it, imported then."""
    def __init__(self, path):
        self._path = path
    def read_text(self, name):
        try:
            with open(os.path.join(self._path, name), encoding="utf-8") as f:
                return f.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            return None
    def locate_file(self, path):
        parent = os.path.dirname(self._path)
        return os.path.join(parent, path) if path else parent
    def _metadata(self):
        import importlib.metadata, pathlib
        return importlib.metadata.PathDistribution(pathlib.Path(self._path))
    @property
    def files(self):
        return self._metadata().files
    @property
    def requires(self):
        return self._metadata().requires

def path_distributions():
    """The dists on sys.path in importlib.metadata's order (each entry in turn, a folder's
    .dist-info and .egg-info in listing order, an .egg's EGG-INFO); a zip on sys.path, or a
    finder that finds distributions of its own, is left to importlib.metadata."""
    finders = [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None]
    if any(getattr(f, "__name__", "") != "PathFinder" for f in finders):
        import importlib.metadata
        yield from importlib.metadata.distributions()
        return
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            import importlib.metadata
            yield from importlib.metadata.distributions(path=[entry])
            continue
        except OSError:
            continue
        is_egg = os.path.basename(root.rstrip(os.sep)).lower().endswith(".egg")
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")) or (is_egg and low == "egg-info"):
                yield InstalledDist(os.path.join(root, child))

_first = None

def first_dists():
    """{normalized name: (dist, name, version, requires)} of the dists Python would use: the
    first of each name on sys.path."""
    global _first
    if _first is None:
        _first = {}
        for dist in path_distributions():
            name, version, requires = core_metadata(dist)
            if name and normalize(name) not in _first:
                _first[normalize(name)] = (dist, name, version, requires)
    return _first

def distributions():
    return [{"name": name, "normalized": key, "version": version, "requires": requires}
            for key, (_, name, version, requires) in sorted(first_dists().items())]

# The module that judges a dist when the manifest names none, from what its RECORD installed in
# site-packages: packages (a dir with __init__) and modules; a namespace dir (no __init__, like
# google/ or nvidia/) is followed down to the real packages in it.
MODULE_FILE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\.(?:py|(?:cpython-|pypy)[^/]*\.so|abi3\.so)$")
STRAY = {"test", "tests", "testing", "example", "examples", "doc", "docs", "benchmark", "benchmarks",
         "bench", "conftest", "setup", "scripts", "tools"}
AFFIXES = {"python", "py", "headless"}
NO_MODULE = "no importable module in RECORD: judged by its metadata only"

def installed(dist_name):
    """The dist Python would use (the first one on sys.path), or None."""
    entry = first_dists().get(normalize(dist_name))
    return entry[0] if entry else None

def path_parts(path):
    """A RECORD path's parts, as pathlib's PurePosixPath(path).parts has them."""
    parts = tuple(p for p in path.split("/") if p not in ("", "."))
    return ("/",) + parts if path.startswith("/") else parts

def record_paths(dist):
    """The parts of each path in the dist's RECORD, by csv (dist.files makes a pathlib object of
    each line); without a RECORD, dist.files' (an egg's installed-files.txt); None for neither."""
    text = dist.read_text("RECORD")
    if text is None:
        files = dist.files
        return None if files is None else [tuple(f.parts) for f in files]
    import csv
    return [path_parts(row[0]) for row in csv.reader(text.splitlines()) if row and row[0]]

def record_layout(paths):
    """({dir: set of file names}, {dir: set of subdir names}) of RECORD below site-packages (dirs as tuples)."""
    names, subdirs = {}, {}
    for parts in paths:
        if not parts or parts[0] in ("..", "/") or parts[0].endswith((".dist-info", ".data", ".egg-info")):
            continue
        for i in range(len(parts) - 1):
            subdirs.setdefault(parts[:i], set()).add(parts[i])
        names.setdefault(parts[:-1], set()).add(parts[-1])
    return names, subdirs

def pth_roots(dist, paths):
    """The dirs inside site-packages that the dist's .pth files put on sys.path, as tuples."""
    site, roots = os.path.realpath(str(dist.locate_file(""))), []
    for parts in paths:
        if len(parts) != 1 or not parts[0].endswith(".pth"):
            continue
        try:
            with open(os.path.join(str(dist.locate_file("")), parts[0]), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line in (l.strip() for l in lines):
            if line and not line.startswith(("#", "import ", "import\t")):
                rel = os.path.relpath(os.path.realpath(os.path.join(site, line)), site)
                if rel != "." and not rel.startswith(".."):
                    roots.append(tuple(rel.split(os.sep)))
    return roots

def module_candidates(paths, roots):
    """Dotted names of the packages and modules RECORD installs at the top of site-packages and of
    each .pth root; namespace dirs (no __init__) are followed down to the real packages in them."""
    names, subdirs = record_layout(paths)
    def module(file_name):
        m = MODULE_FILE.match(file_name)
        return m.group(1) if m else None
    def is_package(d):
        return any(module(n) == "__init__" for n in names.get(d, ()))
    found = []
    def walk(root, d):
        for n in sorted(names.get(d, ())):
            if module(n) and not module(n).startswith("__"):
                found.append(d[len(root):] + (module(n),))
        for sub in sorted(subdirs.get(d, ())):
            below = d + (sub,)
            if not sub.isidentifier() or sub.startswith("__") or any(r[:len(below)] == below for r in roots):
                continue
            if is_package(below):
                found.append(below[len(root):])
            else:
                walk(root, below)
    for root in [()] + roots:
        walk(root, root)
    return found

def squash(name):
    return re.sub(r"[-_.]+", "", name).lower()

def name_keys(dist_name):
    """What a module named after the dist looks like: the whole name, the name without the words
    python/py/headless/cuNN, and that without a leading python/py (pyyaml -> yaml)."""
    words = normalize(dist_name).split("-")
    core = "".join(w for w in words if w not in AFFIXES and not re.match(r"cu\d+$", w))
    keys = [squash(dist_name), core, re.sub(r"^(python|py)", "", core)]
    return [k for i, k in enumerate(keys) if k and k not in keys[:i]]

def top_level_hint(dist):
    text = dist.read_text("top_level.txt") or ""
    return [n.strip() for n in text.split() if n.strip()]

def best_candidate(candidates, dist_name, hint):
    """Private names only when there is nothing else; stray test/example modules never, unless named
    after the dist. Then: named after the dist, listed earlier in top_level.txt, shorter, by name."""
    keys = name_keys(dist_name)
    def match(c):
        hits = [keys.index(k) for k in (squash(".".join(c)), squash(c[-1])) if k in keys]
        return min(hits) if hits else len(keys)
    public = [c for c in candidates if not any(p.startswith("_") for p in c)]
    pool = [c for c in (public or candidates) if c[0].lower() not in STRAY or match(c) < len(keys)]
    if not pool:
        return None
    def rank(c):
        return (match(c), hint.index(c[0]) if c[0] in hint else len(hint), len(".".join(c)), ".".join(c))
    return ".".join(min(pool, key=rank))

def top_level_module(dist_name):
    """(module, None), or (None, why) when the dist installs no module to import."""
    dist = installed(dist_name)
    fallback = normalize(dist_name).replace("-", "_")
    if dist is None:
        return fallback, None
    hint = top_level_hint(dist)
    listed = [n for n in hint if not n.startswith("_") and n.lower() not in STRAY]
    paths = record_paths(dist)
    if paths is None:  # no RECORD (an egg-info install): top_level.txt, else the dist's name
        return (listed[0] if listed else fallback), None
    module = best_candidate(module_candidates(paths, pth_roots(dist, paths)), dist_name, hint)
    if module:
        return module, None
    if any(p and p[-1].endswith(".pth") for p in paths):  # an editable or path install: its code lives elsewhere
        return (listed[0] if listed else fallback), None
    return None, NO_MODULE

def file_hash(path):
    import base64, hashlib
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()

def record_check(dist, module):
    """Are the module's files the ones the dist installed? ("matches" | "differs" | "not-listed" |
    "no-record", the file it is about). Every loaded file of the package that RECORD lists is
    hashed: a stale version.py under a current __init__.py differs too."""
    main = getattr(module, "__file__", None)
    if not main:
        return None, ""
    files = dist.files
    if files is None:
        return "no-record", main
    hashes = {}
    for f in files:
        key = posixpath.normpath(str(f))
        if f.hash is not None and f.hash.mode == "sha256":
            hashes[key] = f.hash.value
        else:
            hashes.setdefault(key, None)
    root = os.path.realpath(str(dist.locate_file("")))
    def listed(path):
        key = os.path.relpath(os.path.realpath(path), root).replace(os.sep, "/")
        return key if hashes.get(key) else None
    if listed(main) is None:
        return "not-listed", main
    paths = [main] + [getattr(m, "__file__", None) for name, m in sorted(sys.modules.items())
                      if name.startswith(module.__name__ + ".")]
    for path in paths:
        key = listed(path) if path else None
        if key is not None and file_hash(path) != hashes[key]:
            return "differs", path
    return "matches", main

def resolve(module, dotted):
    value, path = module, module.__name__
    for part in dotted.split("."):
        path += "." + part
        if hasattr(value, part):
            value = getattr(value, part)
        else:
            value = importlib.import_module(path)
    return value

def version_text(value):
    if value is None or isinstance(value, type(sys)) or callable(value):
        return None
    return value if isinstance(value, str) else str(value)

def probe_import(request):
    module_name, skipped = request.get("module"), None
    if not module_name:
        module_name, skipped = top_level_module(request["dist"])
    result = {"dist": request["dist"], "module": module_name or ""}
    if skipped:
        result["skipped"] = skipped
        return result
    try:
        with contextlib.redirect_stdout(sys.stderr):
            module = importlib.import_module(module_name)
    except BaseException as e:
        result["error"] = "%s: %s" % (type(e).__name__, e)
        return result
    version = version_text(getattr(module, "__version__", None))
    if version is not None:
        result["version"] = version
        entry = first_dists().get(normalize(request["dist"]))
        dist = entry[0] if entry else None
        if dist is not None and version != entry[2]:  # only then does the verdict need RECORD
            verdict, path = record_check(dist, module)
            if verdict:
                result["file_record"], result["file"] = verdict, path
    cuda = getattr(getattr(module, "version", None), "cuda", None)
    if cuda is not None:
        result["cuda"] = str(cuda)
    attrs, errors = {}, {}
    for dotted in request.get("attrs", []):
        try:
            with contextlib.redirect_stdout(sys.stderr):
                attrs[dotted] = str(resolve(module, dotted))
        except BaseException as e:
            errors[dotted] = "%s: %s" % (type(e).__name__, e)
    result["attrs"], result["attr_errors"] = attrs, errors
    return result

def name_bytecode(names):
    # A module compiled here is written to its .pyc naming the venv's coming path (the
    # co_filename of every code object in it), then named back for this run; importlib
    # fixes co_filename on load anyway, but no file of a switched-in venv names the build.
    import _imp, importlib._bootstrap_external as bx
    old, new = names["from"].rstrip("/") + "/", names["to"].rstrip("/") + "/"
    def renaming(to_pyc):
        def renamed(code, *args, **kwargs):
            here = code.co_filename
            if not here.startswith(old):
                return to_pyc(code, *args, **kwargs)
            _imp._fix_co_filename(code, new + here[len(old):])
            try:
                return to_pyc(code, *args, **kwargs)
            finally:
                _imp._fix_co_filename(code, here)
        return renamed
    bx._code_to_timestamp_pyc = renaming(bx._code_to_timestamp_pyc)
    bx._code_to_hash_pyc = renaming(bx._code_to_hash_pyc)

def main():
    request = json.loads(sys.argv[1])
    if request.get("bytecode_names"):
        name_bytecode(request["bytecode_names"])
    facts = {"interpreter": interpreter(), "distributions": distributions(), "markers": markers()}
    facts["imports"] = [probe_import(r) for r in request.get("imports", [])]
    with open(sys.argv[2], "w") as out:
        json.dump(facts, out)

main()

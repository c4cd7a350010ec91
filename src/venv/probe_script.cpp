// The Python side of the venv probe, run as `python -I -B -c SCRIPT REQUEST OUT` (-B: judging a venv must not write .pyc files into it).
// It must work on any CPython >= 3.8 with the stdlib only, print nothing that
// matters (imports may print; stdout is sent to stderr while they run) and
// write one JSON document to OUT.
namespace stackup::venv {

extern const char* const kProbeScript = R"PY(
import contextlib, importlib, importlib.metadata as md, json, os, platform, re, sys, sysconfig

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

def distributions():
    seen = {}
    for dist in md.distributions():
        name = dist.metadata["Name"]
        if not name or normalize(name) in seen:
            continue  # the first one on sys.path is the one Python imports
        seen[normalize(name)] = {"name": name, "normalized": normalize(name), "version": dist.version}
    return sorted(seen.values(), key=lambda d: d["normalized"])

def top_level_module(dist_name):
    try:
        dist = md.distribution(dist_name)
    except md.PackageNotFoundError:
        return dist_name.replace("-", "_")
    text = dist.read_text("top_level.txt")
    if text:
        names = [n.strip() for n in text.split() if n.strip() and not n.startswith("_")]
        if names:
            return names[0]
    for f in dist.files or []:
        parts = f.parts
        if len(parts) >= 2 and parts[1] == "__init__.py" and not parts[0].endswith((".dist-info", ".data")):
            return parts[0]
    return normalize(dist_name).replace("-", "_")

def resolve(module, dotted):
    value, path = module, module.__name__
    for part in dotted.split("."):
        path += "." + part
        if hasattr(value, part):
            value = getattr(value, part)
        else:
            value = importlib.import_module(path)
    return value

def probe_import(request):
    module_name = request.get("module") or top_level_module(request["dist"])
    result = {"dist": request["dist"], "module": module_name}
    try:
        with contextlib.redirect_stdout(sys.stderr):
            module = importlib.import_module(module_name)
    except BaseException as e:
        result["error"] = "%s: %s" % (type(e).__name__, e)
        return result
    version = getattr(module, "__version__", None)
    if version is not None:
        result["version"] = str(version)
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

def main():
    request = json.loads(sys.argv[1])
    facts = {"interpreter": interpreter(), "distributions": distributions()}
    facts["imports"] = [probe_import(r) for r in request.get("imports", [])]
    with open(sys.argv[2], "w") as out:
        json.dump(facts, out)

main()
)PY";

}  // namespace stackup::venv

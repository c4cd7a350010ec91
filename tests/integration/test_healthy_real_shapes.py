"""Healthy packages shaped like real ones pass `stackup verify` with version-only expectations
(no `import:`), each judged as intended: protobuf's namespace (google.nsproto), nvidia-ml-py's
stray example.py passed over (pynvmllike), cv2's shorter __version__, regex's own numbering
(its files match RECORD), data-only and metadata-only dists judged by their metadata, PyYAML's
private shim passed over, a package on a .pth path. Then old files written over two installed
dists make verify exit 1 naming __version__. In a `python -m venv` and in a `uv venv`.
"""
import json
import os
import sys

import harness
import real_shapes
from harness import check, check_rc, check_says


def judgements(result):
    try:
        doc = json.loads(result.stdout)
    except json.JSONDecodeError as e:
        raise AssertionError(f"stdout is not one JSON document ({e}):\n{result}")
    out = {}
    for j in doc["checks"]:
        out.setdefault(j["dist"], {})[j["field"]] = j
    return doc, out


def site_packages(venv):
    found = list((venv / "lib").glob("python3*/site-packages"))
    check(len(found) == 1, f"site-packages of {venv}: {found}")
    return found[0]


def check_healthy(by_dist, venv):
    for dist, (version, module, module_version) in real_shapes.HEALTHY.items():
        got = by_dist.get(dist, {})
        where = f"{venv}: {dist}: {json.dumps(got, indent=1)}"
        check(got.get("version", {}).get("ok") and got["version"]["found"] == version, f"version: {where}")
        imp = got.get("import")
        check(imp is not None and imp["ok"], f"import judged ok: {where}")
        if module is None:
            check(imp["found"].startswith("skipped (") and "metadata" in imp["found"], f"metadata only: {where}")
            check("__version__" not in got, f"no __version__ without a module: {where}")
        else:
            check(imp["expected"] == f"import {module} succeeds" and imp["found"] == "imported",
                  f"the default module is {module}: {where}")
        if module_version is None:
            check("__version__" not in got, f"no __version__ judged: {where}")
        else:
            mv = got.get("__version__")
            check(mv is not None and mv["ok"] and mv["expected"] == version
                  and mv["found"].startswith(module_version), f"__version__ agrees: {where}")
    regex = by_dist["regex-like"]["__version__"]["found"]
    check("own numbering" in regex and "matches the dist's RECORD" in regex, f"regex-like: {regex}")
    cv2 = by_dist["opencv-like-headless"]["__version__"]["found"]
    check(cv2 == "4.9.0", f"cv2like agrees by the release prefix rule, not by RECORD: {cv2}")
    for dist, (version, _) in real_shapes.STALE.items():
        mv = by_dist[dist]["__version__"]
        check(mv["ok"] and mv["found"] == version, f"{venv}: {dist} as installed: {mv}")


def scenario(t):
    root = real_shapes.build_real_shapes(str(t.tmp / "indexes"))
    server = t.serve(root)
    index = server.url(real_shapes.INDEX)
    names = [*real_shapes.HEALTHY, *real_shapes.STALE]
    expect = {dist: {"version": f"=={v[0]}"} for dist, v in
              [*real_shapes.HEALTHY.items(), *real_shapes.STALE.items()]}

    pyvenv = t.make_venv("pyvenv")
    uvvenv = t.tmp / "uvvenv"
    made = t.uv("venv", uvvenv, "--python", sys.executable)
    check_rc(made, 0)
    for venv in (pyvenv, uvvenv):
        t.uv_install(venv, *[f"{d}=={expect[d]['version'][2:]}" for d in names], default_index=index)
        doc = {"version": 1, "name": f"it-{t.name}", "venv": str(venv), "indexes": {"shapes": index},
               "default_index": "shapes",
               "steps": [{"name": "shapes", "index": "shapes", "packages": names, "expect": expect}]}
        manifest = t.manifest(doc, f"{venv.name}.yaml")
        before = t.tree(venv)

        r = t.stackup("verify", manifest, "--json", state=False)
        check_rc(r, 0)
        report, by_dist = judgements(r)
        check(report["ok"], f"verify not ok: {report}")
        check_healthy(by_dist, venv)
        t.assert_tree(venv, before, "stackup verify changed the venv")

        site = site_packages(venv)
        for dist, (_, path) in real_shapes.STALE.items():
            # A new file, renamed over: uv hard-links installed files to its cache, and writing into
            # one would also change the cache and so the next venv's copy.
            (site / (path + ".old")).write_text(real_shapes.STALE_TEXT)
            os.replace(site / (path + ".old"), site / path)
        r = t.stackup("verify", manifest, "--json", state=False)
        check_rc(r, 1)
        report, by_dist = judgements(r)
        failed = sorted((e.get("dist"), e.get("field")) for e in report["errors"])
        check(failed == [("stale-deep-like", "__version__"), ("stale-like", "__version__")],
              f"exactly the two stale modules fail: {failed}", r)
        for dist, (version, path) in real_shapes.STALE.items():
            mv = by_dist[dist]["__version__"]
            check(not mv["ok"] and mv["expected"] == version and mv["found"].startswith("2.10.0 (stale")
                  and path in mv["found"] and "differs from the dist's RECORD" in mv["found"],
                  f"{dist}: {mv}")
        r = t.stackup("verify", manifest, state=False)
        check_rc(r, 1)
        check_says(r, "stale-like", "stale-deep-like", "__version__", "expected 2.11.0", "found 2.10.0")


harness.main(scenario)

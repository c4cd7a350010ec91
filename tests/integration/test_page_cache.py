"""stackup's cache of index pages: an HTTP cache, as uv keeps one, checked against what the
index server really answered (its log of [path, status]) and what the plan really chose.

Two indexes: "live" sends every page with an ETag and `Cache-Control: no-cache` (revalidate
each time); "still" sends `max-age=600` (a page may be used for ten minutes unasked).
- a first plan asks for every page (200) and keeps each one under the test's cache dir;
- a second plan revalidates the live pages (304), does not ask for the still ones at all,
  and plans exactly what the first did;
- a new wheel on the live index: the next plan sees it (the page answered 200 again);
- a new wheel on the still index: unseen until `--refresh`, which asks again and sees it;
- `--no-cache` asks for every page unconditionally and writes nothing;
- a stored page cut short (or one that does not parse) is dropped and asked for whole;
- an index behind credentials: the cache never holds the password, in a name or a byte;
- `--cache-dir` and XDG_CACHE_HOME put the cache where they say.
"""
import json
import os
from pathlib import Path

import harness
from harness import check, check_rc
from wheels import plain

LIVE = ["live-a", "live-b"]
STILL = ["still-a", "still-b"]
SECRET = "s3cret-pa55"
PAGES = [f"/live/{n}/" for n in LIVE] + [f"/still/{n}/" for n in STILL]


def build_tree(root):
    for name in LIVE:
        plain(os.path.join(root, "live", name), name, "1.0")
    for name in STILL:
        plain(os.path.join(root, "still", name), name, "1.0")
    Path(root, "still", ".cache-control").write_text("max-age=600\n")
    plain(os.path.join(root, "private", "priv-a"), "priv-a", "1.0")
    Path(root, "private", ".auth").write_text(f"user:{SECRET}\n")
    return root


def plan_doc(t, server, venv, private=False):
    doc = {
        "version": 1,
        "name": f"it-{t.name}",
        "venv": str(venv),
        "indexes": {"live": server.url("live"), "still": server.url("still")},
        "default_index": "live",
        "steps": [{"name": "live", "index": "live", "packages": list(LIVE)},
                  {"name": "still", "index": "still", "packages": list(STILL)}],
    }
    if private:
        doc["indexes"]["private"] = server.url("private").replace("http://", f"http://user:{SECRET}@")
        doc["steps"].append({"name": "private", "index": "private", "packages": ["priv-a"]})
    return doc


def plan(t, manifest, *extra, env=None):
    """{name: version planned} of a `stackup plan --json`; fails the test on a non-zero exit."""
    argv = [harness.find_stackup(), "plan", manifest, "--json", "--state-dir", t.state_dir, *extra]
    r = harness.run(argv, env=harness.child_env(env))
    check_rc(r, 0)
    doc = json.loads(r.stdout)
    return {p["name"]: (p["after"], p["sha256"]) for s in doc["steps"] for p in s["packages"]}


def answers_since(server, mark):
    """{page path: [statuses]} of the pages of the planned packages answered after `mark`
    answers (the plan also asks the default index for other steps' packages: 404s, uncached)."""
    seen = {}
    for path, status in server.answers()[mark:]:
        if path in PAGES:
            seen.setdefault(path, []).append(status)
    return seen


def pages(cache_dir):
    folder = Path(cache_dir) / "pages-v1"
    return sorted(folder.glob("*.page")) if folder.is_dir() else []


def scenario(t):
    server = t.serve(build_tree(str(t.tmp / "indexes")))
    venv = t.make_venv()
    manifest = t.manifest(plan_doc(t, server, venv))
    cache = t.page_cache_dir
    live_pages = [f"/live/{n}/" for n in LIVE]
    still_pages = [f"/still/{n}/" for n in STILL]

    # First plan: every page asked for and answered whole; each one kept.
    mark = len(server.answers())
    first = plan(t, manifest)
    got = answers_since(server, mark)
    check(got == {p: [200] for p in live_pages + still_pages}, f"first plan's answers: {got}")
    check(len(pages(cache)) == 4, f"pages kept after the first plan: {pages(cache)}")
    check(all(v == "1.0" for v, _ in first.values()), f"first plan: {first}")

    # Second plan: the live pages revalidated (304), the still ones not asked; the same plan.
    mark = len(server.answers())
    second = plan(t, manifest)
    got = answers_since(server, mark)
    check(got == {p: [304] for p in live_pages}, f"second plan's answers (304 for live only): {got}")
    check(second == first, f"a plan from the cache differs: {second} vs {first}")

    # A new wheel on the live index: revalidation brings it (200), the plan takes it.
    plain(str(t.tmp / "indexes" / "live" / "live-a"), "live-a", "2.0")
    mark = len(server.answers())
    third = plan(t, manifest)
    got = answers_since(server, mark)
    check(got.get("/live/live-a/") == [200] and got.get("/live/live-b/") == [304], f"answers: {got}")
    check(third["live-a"][0] == "2.0", f"the new live-a was not planned: {third}")

    # A new wheel on the still index: the fresh page hides it until --refresh.
    plain(str(t.tmp / "indexes" / "still" / "still-a"), "still-a", "2.0")
    mark = len(server.answers())
    fourth = plan(t, manifest)
    check(not any(p in answers_since(server, mark) for p in still_pages), "a fresh page was asked for")
    check(fourth["still-a"][0] == "1.0", f"a fresh page was not used as stored: {fourth}")
    mark = len(server.answers())
    refreshed = plan(t, manifest, "--refresh")
    got = answers_since(server, mark)
    check(got.get("/still/still-a/") == [200] and got.get("/still/still-b/") == [304],
          f"--refresh's answers: {got}")
    check(refreshed["still-a"][0] == "2.0", f"--refresh did not see the new still-a: {refreshed}")
    # ... and what --refresh brought is kept: the next plan sees 2.0 without asking.
    mark = len(server.answers())
    check(plan(t, manifest)["still-a"][0] == "2.0", "the refreshed page was not kept")
    check(not any(p in answers_since(server, mark) for p in still_pages), "a refreshed page was asked for")

    # --no-cache: everything asked for unconditionally, nothing written.
    other = t.tmp / "no-cache"
    mark = len(server.answers())
    uncached = plan(t, manifest, "--no-cache", env={"STACKUP_CACHE_DIR": str(other)})
    got = answers_since(server, mark)
    check(got == {p: [200] for p in live_pages + still_pages}, f"--no-cache's answers: {got}")
    check(not other.exists(), f"--no-cache wrote {list(other.rglob('*'))}")
    check(uncached == refreshed, f"--no-cache planned otherwise: {uncached} vs {refreshed}")

    # A stored page cut short: not used, asked for whole; one that does not parse (same
    # length, so only reading it finds out): dropped and asked for whole, in the same run.
    entries = pages(cache)
    cut = entries[0]
    cut.write_bytes(cut.read_bytes()[:-40])
    for entry in entries[1:]:
        head, _, body = entry.read_bytes().partition(b"\n")
        entry.write_bytes(head + b"\n" + b"\x00" * len(body))
    mark = len(server.answers())
    mended = plan(t, manifest, "--refresh")
    got = answers_since(server, mark)
    check(sorted(got) == sorted(live_pages + still_pages) and all(s[-1] == 200 for s in got.values()),
          f"damaged pages were not asked for whole: {got}")
    check(mended == refreshed, f"a damaged cache changed the plan: {mended} vs {refreshed}")
    mark = len(server.answers())
    check(plan(t, manifest) == refreshed, "the mended cache plans otherwise")
    check(answers_since(server, mark) == {p: [304] for p in live_pages}, "the cache was not mended")

    # Credentials: the private index's page is kept, but its password is nowhere in the cache.
    private = t.manifest(plan_doc(t, server, venv, private=True), "private.yaml")
    before = len(pages(cache))
    check(plan(t, private)["priv-a"][0] == "1.0", "the private package was not planned")
    check(len(pages(cache)) == before + 1, f"the private page was not kept: {pages(cache)}")
    for entry in cache.rglob("*"):
        check(SECRET not in entry.name, f"the password names a cache file: {entry}")
        if entry.is_file():
            check(SECRET.encode() not in entry.read_bytes(), f"the password is written in {entry}")
    mode = cache.stat().st_mode & 0o777
    check(mode == 0o700, f"the cache dir is {oct(mode)}, not 0700")

    # Where the cache goes: --cache-dir, then XDG_CACHE_HOME (STACKUP_CACHE_DIR unset).
    chosen = t.tmp / "chosen"
    plan(t, manifest, "--cache-dir", str(chosen))
    check(len(pages(chosen)) == 4, f"--cache-dir {chosen} holds {pages(chosen)}")
    xdg = t.tmp / "xdg"
    env = {k: v for k, v in harness.child_env().items() if k != "STACKUP_CACHE_DIR"}
    r = harness.run([harness.find_stackup(), "plan", manifest, "--state-dir", t.state_dir],
                    env={**env, "XDG_CACHE_HOME": str(xdg)})
    check_rc(r, 0)
    check(len(pages(xdg / "stackup")) == 4, f"XDG_CACHE_HOME/stackup holds {pages(xdg / 'stackup')}")


if __name__ == "__main__":
    harness.main(scenario)

"""The test index itself: PEP 503 pages with sha256 and data-requires-python, PEP 691 JSON
for an index marked so (and only to a client that asks), the files, and fault injection (a status k times, a delay, a hang released by clearing the rules),
both through the Python API and through /_control.
"""
import hashlib
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import harness
from harness import check


JSON = "application/vnd.pypi.simple.v1+json"


def get(url, data=None, method=None, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, headers or {}, method=method),
                                    timeout=60) as r:
            return r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers


def scenario(t):
    server = t.serve_stack()
    base = server.url()

    status, page, headers = get(server.url("cu130") + "torch/")
    check(status == 200 and headers["Cache-Control"] == "no-cache", f"{status} {headers}")
    text = page.decode()
    check('data-requires-python="&gt;=3.9"' in text, f"no data-requires-python in:\n{text}")
    href = text.split('href="')[1].split('"')[0]
    name, sha = href.split("#sha256=")
    check(name == "torch-2.11.0.dev20251230%2Bcu130-py3-none-any.whl", f"href {href}")
    status, wheel, _ = get(server.url("cu130") + "torch/" + name)
    check(status == 200 and hashlib.sha256(wheel).hexdigest() == sha, "wheel hash mismatch")
    check(b'href="torchvision/"' in get(server.url("cu130"))[1], "root listing lacks torchvision")
    check(get(server.url("cu130") + "sgl-kernel/")[0] == 404, "sgl-kernel is not on cu130")
    check(get(server.url("sglang-cu130") + "SGL_Kernel/")[0] == 200, "names are not normalized")

    ask_json = {"Accept": f"{JSON}, text/html;q=0.1"}
    check(get(server.url("cu130") + "torch/", headers=ask_json)[2]["Content-Type"].startswith("text/html"),
          "an index not marked json must answer HTML")
    (Path(server.httpd.root) / "cu130" / ".format").write_text("json\n")
    status, page, headers = get(server.url("cu130") + "torch/", headers=ask_json)
    check(status == 200 and headers["Content-Type"] == JSON, f"{status} {headers}")
    doc = json.loads(page)
    check(doc["meta"]["api-version"] == "1.1" and doc["name"] == "torch", f"JSON page {doc}")
    entry = doc["files"][0]
    check(entry["filename"] == "torch-2.11.0.dev20251230+cu130-py3-none-any.whl"
          and entry["hashes"]["sha256"] == sha and entry["requires-python"] == ">=3.9", f"JSON file {entry}")
    projects = json.loads(get(server.url("cu130"), headers=ask_json)[1])["projects"]
    check({"name": "torchvision"} in projects, f"JSON root listing {projects}")
    check(get(server.url("cu130") + "torch/")[2]["Content-Type"].startswith("text/html"),
          "a client that does not ask for JSON must get HTML")

    server.rules.set([{"prefix": "/pypi/", "status": 503, "times": 2}])
    codes = [get(server.url("pypi") + "filelock/")[0] for _ in range(3)]
    check(codes == [503, 503, 200], f"status 503 twice, then 200: got {codes}")

    rules = {"rules": [{"prefix": "/cu128/", "hang": True}, {"prefix": "/pypi/", "delay_ms": 50}]}
    get(base + "_control", json.dumps(rules).encode(), "POST")
    check(get(server.url("pypi"))[0] == 200, "a delayed request must still be answered")
    done = []
    waiter = threading.Thread(target=lambda: done.append(get(server.url("cu128"))[0]))
    waiter.start()
    while not server.requests("/cu128/") and waiter.is_alive():
        waiter.join(0.05)
    check(not done, "a hung request was answered")
    get(base + "_control", method="DELETE")
    waiter.join(60)
    check(done == [200], f"the released request got {done}")
    check(json.loads(get(base + "_control")[1])["rules"] == [], "rules not cleared")


harness.main(scenario, needs_stackup=False)

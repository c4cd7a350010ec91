"""PEP 503 simple indexes on 127.0.0.1, served from a directory tree, with fault injection.

Layout: <root>/<index>/<project>/<file>.whl. URLs:
  /<index>/                   root listing of the index's projects
  /<index>/<project>/         project page: <a href="FILE#sha256=...">, data-requires-python;
                              PEP 691 JSON instead when <root>/<index>/.format says "json" and
                              the client's Accept asks for application/vnd.pypi.simple.v1+json
  /<index>/<project>/<file>   the file
  (an index whose folder holds a .auth file "user:password" answers 401 without that Basic auth;
  a file FILE beside FILE.yanked is listed as yanked (PEP 592), the .yanked file's text its reason)
  Pages (root listings and project pages) carry a strong ETag (a digest of the body) and answer
  a matching If-None-Match with 304; their Cache-Control is "no-cache" unless the index's
  .cache-control file says otherwise (e.g. "max-age=600"). Files are always "no-cache".
  /_control                   GET: rules, request log and answers ([path, status] of each
                              request answered, in order) (JSON); POST: {"rules": [...]} replaces
                              the rules; DELETE: clears them and releases hung requests

A rule is {"prefix": "/cu130/torch/", "delay_ms": 0, "status": 503, "times": 2, "hang": false}:
requests whose path starts with `prefix` are delayed, answered with `status` (the first
`times` requests; always when times is absent), or held until the rules are cleared or the
server stops. The first matching rule applies. Further keys, each a fault of the first `times`
requests (all of them when times is absent), like `status`; delay_ms and hang apply always:
  "retry_after": 2         with `status`: a Retry-After header of that many seconds
  "redirect": 301, "to": "/cu130/"   answers with that status and a Location of the path with
                           `prefix` replaced by `to` (which serves the real answer)
  "content_type": "T"      the real answer, sent with Content-Type T
  "truncate_at": N         the real answer's first N bytes, with a Content-Length of N
  "reset_at": N            the real answer's headers (its full Content-Length) and first N bytes,
                           then the connection reset (RST)
  "pad_bytes": N           the real answer with N more bytes (spaces) at its end
  "no_length": true        no Content-Length: the body ends when the connection closes
  "trickle_bps": B         the real answer's body at B bytes a second, until it ends, the
                           client goes or the server stops

As a module: `with IndexServer(root) as server: server.url("cu130")`.
As a script: `index_server.py ROOT [--port-file F] [--pidfile F] [--control FILE]`; prints
the port as the first line of stdout and serves until killed.
"""
import argparse
import base64
import contextlib
import hashlib
import html
import json
import os
import re
import socket
import struct
import sys
import threading
import time
import urllib.parse
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def normalize(name):
    """PEP 503 name normalization."""
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_requires_python(path):
    """The Requires-Python of a wheel's METADATA, or None."""
    try:
        with zipfile.ZipFile(path) as zf:
            for entry in zf.namelist():
                if entry.endswith(".dist-info/METADATA"):
                    for line in zf.read(entry).decode().splitlines():
                        if line.lower().startswith("requires-python:"):
                            return line.split(":", 1)[1].strip()
                        if not line:
                            break
    except (OSError, zipfile.BadZipFile):
        pass
    return None


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Rules:
    """The fault-injection rules and a log of every request path; shared by all handler threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self._rules = []
        self._release = threading.Event()
        self.log = []
        self.answers = []

    def answered(self, path, status):
        with self._lock:
            self.answers.append([path, status])

    def set(self, rules):
        with self._lock:
            self._release.set()           # requests hung by the old rules go on
            self._release = threading.Event()
            self._rules = [dict(r, served=0) for r in rules]

    def clear(self):
        self.set([])

    @contextlib.contextmanager
    def applied(self, rules):
        """`rules` for the time of a with block, then none (which also releases hung requests)."""
        self.set(rules)
        try:
            yield
        finally:
            self.clear()

    def snapshot(self):
        with self._lock:
            return {"rules": [dict(r) for r in self._rules], "log": list(self.log),
                    "answers": [list(a) for a in self.answers]}

    def match(self, path):
        """Records the request; returns (delay_s, release event or None, fault or None): the
        fault is the matching rule while its `times` last, else None."""
        with self._lock:
            self.log.append(path)
            for rule in self._rules:
                if not path.startswith(rule["prefix"]):
                    continue
                spent = rule.get("times") is not None and rule["served"] >= rule["times"]
                rule["served"] += 1
                hang = self._release if rule.get("hang") else None
                return rule.get("delay_ms", 0) / 1000.0, hang, None if spent else dict(rule)
        return 0.0, None, None


class _Handler(BaseHTTPRequestHandler):
    server_version = "stackup-test-index/1"

    def log_message(self, fmt, *args):  # quiet; the request log is in Rules
        pass

    fault = None  # the matching rule's faults for this request (Rules.match)

    def _send(self, status, body=b"", content_type="text/plain; charset=utf-8", cache=None, extra=None):
        """Sends a response; `cache` (a page's Cache-Control) also gives it an ETag and answers
        a matching If-None-Match with 304 and no body. The request's fault, if any, bends it."""
        fault = self.fault or {}
        headers = {"Content-Type": fault.get("content_type", content_type), "Cache-Control": cache or "no-cache"}
        headers.update(extra or {})
        if cache is not None and status == 200:
            etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            headers["ETag"] = etag
            if etag in [t.strip() for t in self.headers.get("If-None-Match", "").split(",")]:
                status, body = 304, b""
        body += b" " * fault.get("pad_bytes", 0)
        if "truncate_at" in fault:
            body = body[:fault["truncate_at"]]
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        if fault.get("no_length"):
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not urllib.parse.urlsplit(self.path).path.startswith("/_control"):
            self.server.rules.answered(urllib.parse.urlsplit(self.path).path, status)
        if self.command == "HEAD":
            return
        if "reset_at" in fault:
            return self._reset_after(body[:fault["reset_at"]])
        if "trickle_bps" in fault:
            return self._trickle(body, fault["trickle_bps"])
        try:
            self.wfile.write(body)
        except OSError:  # the client stopped reading (a body it refuses to take whole, say)
            self.close_connection = True

    def _reset_after(self, part):
        """Writes `part`, then resets the connection (RST, not FIN): the client sees a reset mid-body."""
        self.wfile.write(part)
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def _trickle(self, body, per_second):
        for at in range(0, len(body), per_second):
            if self.server.stopping.is_set():
                break
            try:
                self.wfile.write(body[at:at + per_second])
                self.wfile.flush()
            except OSError:  # the client gave up
                break
            time.sleep(1.0)
        self.close_connection = True

    def finish(self):
        try:
            super().finish()
        except (OSError, ValueError):  # a connection reset on purpose, or a client gone
            pass

    def _json(self, value):
        self._send(200, json.dumps(value, indent=1).encode(), "application/json")

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/_control":
            return self._json(self.server.rules.snapshot())
        self.fault = None
        delay, hang, fault = self.server.rules.match(path)
        if hang is not None:
            while not hang.wait(0.1) and not self.server.stopping.is_set():
                pass
        if delay:
            time.sleep(delay)
        fault = fault or {}
        if fault.get("status") is not None:
            status = fault["status"]
            extra = {"Retry-After": str(fault["retry_after"])} if "retry_after" in fault else None
            return self._send(status, f"injected status {status}\n".encode(), extra=extra)
        if fault.get("redirect") is not None:
            return self._redirect(fault.get("to", "/") + path[len(fault["prefix"]):], fault["redirect"])
        self.fault = fault or None
        self._serve(path)

    do_HEAD = do_GET

    def do_POST(self):
        if urllib.parse.urlsplit(self.path).path != "/_control":
            return self._send(405)
        length = int(self.headers.get("Content-Length", 0))
        try:
            self.server.rules.set(json.loads(self.rfile.read(length) or b"{}").get("rules", []))
        except (ValueError, AttributeError, KeyError) as e:
            return self._send(400, f"bad control document: {e}\n".encode())
        self._json(self.server.rules.snapshot())

    def do_DELETE(self):
        if urllib.parse.urlsplit(self.path).path != "/_control":
            return self._send(405)
        self.server.rules.clear()
        self._json(self.server.rules.snapshot())

    def _serve(self, path):
        parts = [urllib.parse.unquote(p) for p in path.split("/") if p]
        if any(p in (".", "..") or "/" in p for p in parts):
            return self._send(404, b"not found\n")
        root = self.server.root
        if not parts:
            return self._page("Indexes", [(f"{i}/", i) for i in _dirs(root)])
        index_dir = os.path.join(root, parts[0])
        if not os.path.isdir(index_dir):
            return self._send(404, b"no such index\n")
        if not self._authorized(index_dir):
            return self._unauthorized()
        if len(parts) == 1:
            if not path.endswith("/"):
                return self._redirect(path + "/")
            if self._wants_json(index_dir):
                return self._send(200, json.dumps({"meta": {"api-version": "1.1"}, "projects": [
                    {"name": p} for p in _dirs(index_dir)]}).encode(), JSON_TYPE,
                    _cache_control(index_dir))
            return self._page(f"Simple index {parts[0]}",
                              [(f"{normalize(p)}/", p) for p in _dirs(index_dir)],
                              _cache_control(index_dir))
        project_dir = _find_project(index_dir, parts[1])
        if project_dir is None:
            return self._send(404, b"no such project\n")
        if len(parts) == 2:
            if not path.endswith("/"):
                return self._redirect(path + "/")
            if self._wants_json(index_dir):
                return self._json_project_page(parts[1], project_dir)
            return self._project_page(parts[1], project_dir)
        file_path = os.path.join(project_dir, parts[2])
        if len(parts) != 3 or not os.path.isfile(file_path):
            return self._send(404, b"no such file\n")
        with open(file_path, "rb") as f:
            self._send(200, f.read(), "application/octet-stream")

    def _redirect(self, location, status=301):
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.server.rules.answered(urllib.parse.urlsplit(self.path).path, status)

    def _authorized(self, index_dir):
        """An index with a .auth file ("user:password") wants HTTP Basic auth for everything in it."""
        try:
            with open(os.path.join(index_dir, ".auth")) as f:
                wanted = f.read().strip()
        except OSError:
            return True
        given = self.headers.get("Authorization", "")
        return given == "Basic " + base64.b64encode(wanted.encode()).decode()

    def _unauthorized(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="stackup-test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _wants_json(self, index_dir):
        try:
            with open(os.path.join(index_dir, ".format")) as f:
                serves_json = f.read().strip() == "json"
        except OSError:
            serves_json = False
        return serves_json and JSON_TYPE in self.headers.get("Accept", "")

    def _project_page(self, project, project_dir):
        links = []
        for name, full, requires_python in _project_files(project_dir):
            href = f"{urllib.parse.quote(name)}#sha256={_sha256(full)}"
            attrs = ""
            if requires_python:
                attrs = f' data-requires-python="{html.escape(requires_python)}"'
            reason = _yanked(full)
            if reason is not None:
                attrs += f' data-yanked="{html.escape(reason)}"'
            links.append((href, name, attrs))
        self._page(f"Links for {project}", links, _cache_control(os.path.dirname(project_dir)))

    def _json_project_page(self, project, project_dir):
        files = []
        for name, full, requires_python in _project_files(project_dir):
            entry = {"filename": name, "url": urllib.parse.quote(name), "hashes": {"sha256": _sha256(full)}}
            if requires_python:
                entry["requires-python"] = requires_python
            reason = _yanked(full)
            if reason is not None:
                entry["yanked"] = reason or True
            files.append(entry)
        doc = {"meta": {"api-version": "1.1"}, "name": normalize(project), "files": files}
        self._send(200, json.dumps(doc, indent=1).encode(), JSON_TYPE,
                   _cache_control(os.path.dirname(project_dir)))

    def _page(self, title, links, cache="no-cache"):
        rows = []
        for link in links:
            href, text = link[0], link[1]
            attrs = link[2] if len(link) > 2 else ""
            rows.append(f'    <a href="{html.escape(href)}"{attrs}>{html.escape(text)}</a><br/>')
        body = ("<!DOCTYPE html>\n<html>\n  <head><meta name=\"pypi:repository-version\" "
                f"content=\"1.0\"><title>{html.escape(title)}</title></head>\n  <body>\n"
                f"    <h1>{html.escape(title)}</h1>\n" + "\n".join(rows) + "\n  </body>\n</html>\n")
        self._send(200, body.encode(), "text/html; charset=utf-8", cache)


JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def _project_files(project_dir):
    """(name, path, requires_python) of each distribution file, sorted by name."""
    for name in sorted(os.listdir(project_dir)):
        full = os.path.join(project_dir, name)
        if not os.path.isfile(full) or not name.endswith((".whl", ".tar.gz", ".zip")):
            continue
        yield name, full, wheel_requires_python(full) if name.endswith(".whl") else None


def _cache_control(index_dir):
    """A page's Cache-Control: the index's .cache-control file, else "no-cache"."""
    try:
        with open(os.path.join(index_dir, ".cache-control")) as f:
            return f.read().strip() or "no-cache"
    except OSError:
        return "no-cache"


def _yanked(path):
    """The yank reason of a file ("" for none given), or None when it is not yanked."""
    try:
        with open(path + ".yanked") as f:
            return f.read().strip()
    except OSError:
        return None


def _dirs(path):
    return sorted(d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d)))


def _find_project(index_dir, requested):
    for d in _dirs(index_dir):
        if normalize(d) == normalize(requested):
            return os.path.join(index_dir, d)
    return None


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: with 8 or more requests at once the kernel
    # drops SYNs and clients retry after a second, so a benchmark would measure this server.
    request_queue_size = 128


class IndexServer:
    """A ThreadingHTTPServer on 127.0.0.1 serving `root`; start() runs it in a daemon thread."""

    def __init__(self, root, port=0):
        self.httpd = _Server(("127.0.0.1", port), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.root = os.path.abspath(root)
        self.httpd.rules = Rules()
        self.httpd.stopping = threading.Event()
        self.rules = self.httpd.rules
        self.port = self.httpd.server_address[1]
        self._thread = None

    def url(self, index=""):
        """The base URL of one index (with a trailing slash), or of the server."""
        return f"http://127.0.0.1:{self.port}/" + (f"{index}/" if index else "")

    def start(self):
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self.httpd.stopping.set()
        self.rules.clear()
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread:
            self._thread.join()

    def requests(self, prefix=""):
        """The request paths seen so far that start with `prefix`."""
        return [p for p in self.rules.snapshot()["log"] if p.startswith(prefix)]

    def answers(self, prefix=""):
        """(path, status) of each request answered so far whose path starts with `prefix`."""
        return [tuple(a) for a in self.rules.snapshot()["answers"] if a[0].startswith(prefix)]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _write_atomically(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="directory holding <index>/<project>/<files>")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--port-file", help="write the port here once listening")
    parser.add_argument("--pidfile", help="write this process's id here")
    parser.add_argument("--control", help="JSON file with initial rules: {\"rules\": [...]}")
    args = parser.parse_args(argv)

    server = IndexServer(args.root, args.port)
    if args.control:
        with open(args.control) as f:
            server.rules.set(json.load(f).get("rules", []))
    if args.pidfile:
        _write_atomically(args.pidfile, f"{os.getpid()}\n")
    if args.port_file:
        _write_atomically(args.port_file, f"{server.port}\n")
    print(server.port, flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

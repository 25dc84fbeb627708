"""The container test's web server, run inside a container of the stack with the base
image's Python (standard library only): one directory per host name, chosen by the
Host header, so that one container serves every host of the test site.

    python3 site_server.py ROOT PORT

ROOT/<host>/ holds the pages of <host>; ROOT/<host>/_redirects has lines "FROM TO"
(paths) answered with 301; anything missing is a 404.
"""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(sys.argv[1]).resolve()


def redirects(host_dir: Path) -> dict[str, str]:
    path = host_dir / "_redirects"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return dict(line.split() for line in lines if line.strip())


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0].lower()
        host_dir = (ROOT / host).resolve()
        path = unquote(urlsplit(self.path).path)
        if path.endswith("/"):
            path += "index.html"
        target = redirects(host_dir).get(path) if host_dir.parent == ROOT else None
        if target:
            self.send_response(301)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        file = (host_dir / path.lstrip("/")).resolve()
        if host_dir.parent != ROOT or not file.is_relative_to(host_dir) or not file.is_file():
            body, status, ctype = b"<html><body>404</body></html>", 404, "text/html; charset=utf-8"
        else:
            body, status = file.read_bytes(), 200
            ctype = "text/plain; charset=utf-8" if file.suffix == ".txt" else "text/html; charset=utf-8"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    ThreadingHTTPServer(("0.0.0.0", int(sys.argv[2])), Handler).serve_forever()

"""`reportgen serve`: a local preview server, bound to 127.0.0.1 only."""

from __future__ import annotations

import functools
import http.server
from pathlib import Path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - signature from the stdlib
        pass


def make_server(site: Path, port: int = 8000) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_QuietHandler, directory=str(site))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)

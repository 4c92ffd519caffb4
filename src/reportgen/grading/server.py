"""The local grading server: stdlib http.server bound to 127.0.0.1 only.

Every response carries a strict Content-Security-Policy (no inline script or style,
images and the page's own script and style from itself only, forms posted to itself);
requests for another host name are refused (a web page cannot reach this server through
a name of its own), and a grade is accepted only from a form of this server's own
origin (checked on Origin, and on Sec-Fetch-Site when the browser sends it).
"""

from __future__ import annotations

import http.server
import re
from urllib.parse import parse_qs

from reportgen.grading.page import SCRIPT, STYLE, ItemPage, done_page, item_page, message_page
from reportgen.grading.session import GradingSession

CSP = ("default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'; form-action 'self'; "
       "base-uri 'none'; frame-ancestors 'none'")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on the
    # page's own form posts, and the origin check could not tell them from another site's.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
MAX_POST_BYTES = 16_384
_ITEM_PNG = re.compile(r"/item/([0-9a-f]{12})\.png")
_HTML = "text/html; charset=utf-8"


class GradingHandler(http.server.BaseHTTPRequestHandler):
    session: GradingSession  # set on the class made for each server
    server_version = "reportgen-grade"
    sys_version = ""

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - signature from the stdlib
        pass

    # ------------------------------------------------------------------ helpers

    def _send(self, status: int, body: bytes, content_type: str = _HTML,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {**HEADERS, "Content-Type": content_type, "Content-Length": str(len(body)),
                            **(extra or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _page(self, status: int, html: str) -> None:
        self._send(status, html.encode("utf-8"))

    def _refuse(self, status: int, title: str, text: str) -> None:
        self._page(status, message_page(title, text))

    def _port(self) -> int:
        address = self.server.server_address
        assert isinstance(address, tuple)
        return int(address[1])

    def _own_hosts(self) -> set[str]:
        port = self._port()
        return {f"127.0.0.1:{port}", f"localhost:{port}"}

    def _host_ok(self) -> bool:
        return (self.headers.get("Host") or "").strip().lower() in self._own_hosts()

    def _same_origin(self) -> bool:
        origin = (self.headers.get("Origin") or "").strip().lower()
        site = (self.headers.get("Sec-Fetch-Site") or "same-origin").strip().lower()
        return origin in {f"http://{host}" for host in self._own_hosts()} and site == "same-origin"

    # ------------------------------------------------------------------ requests

    def do_HEAD(self) -> None:  # noqa: N802 - name from the stdlib
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802 - name from the stdlib
        if not self._host_ok():
            self._refuse(403, "Refused", "This grading page answers only on 127.0.0.1 and localhost.")
            return
        path = self.path.split("?", 1)[0]
        if path == "/":
            self._page(200, self._current_page())
        elif path == "/grade.css":
            self._send(200, STYLE.encode("utf-8"), "text/css; charset=utf-8")
        elif path == "/grade.js":
            self._send(200, SCRIPT.encode("utf-8"), "text/javascript; charset=utf-8")
        elif path == "/favicon.ico":  # asked for by every browser: none, and no error either
            self._send(204, b"", "image/x-icon")
        elif (match := _ITEM_PNG.fullmatch(path)) and match.group(1) in self.session.items.key:
            render = self.session.outputs.render(match.group(1))
            if render is None or not render.png:
                self._refuse(404, "Not found", "This item has no rendered drawing.")
            else:
                self._send(200, render.png, "image/png")
        else:
            self._refuse(404, "Not found", "There is no such page here.")

    def do_POST(self) -> None:  # noqa: N802 - name from the stdlib
        if not self._host_ok() or not self._same_origin():
            self._refuse(403, "Refused", "Grades are accepted only from this grading page itself.")
            return
        if self.path != "/grade":
            self._refuse(404, "Not found", "There is no such page here.")
            return
        length = int(self.headers.get("Content-Length") or 0)
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded" or not 0 < length <= MAX_POST_BYTES:
            self._refuse(400, "Not a grade", "The grade form was not sent as this page sends it.")
            return
        fields = parse_qs(self.rfile.read(length).decode("utf-8", "replace"), keep_blank_values=True)
        item = (fields.get("item") or [""])[0]
        grade = (fields.get("grade") or [""])[0]
        reason = (fields.get("reason") or [""])[0]
        if grade not in ("pass", "fail", "disputed"):
            self._refuse(400, "No grade chosen", "Choose pass, fail or disputed (P, F or D), then submit.")
            return
        # An item that is not the one waiting (sent twice, or graded from another tab) is
        # not graded again: the next item's page follows either way.
        self.session.record(item, grade, reason)
        self._send(303, b"", "text/plain; charset=utf-8", {"Location": "/"})

    def _current_page(self) -> str:
        session = self.session
        item = session.next_item()
        if item is None:
            return done_page(session.total, session.grader, f"grades/{session.grader}.csv")
        output = session.outputs.view(item)
        render = session.outputs.render(item) if output.kind == "drawing" else None
        return item_page(ItemPage(item, session.n_graded + 1, session.total, session.n_graded, session.grader,
                                  session.task(item), output, render))


def make_grading_server(session: GradingSession, port: int = 8001) -> http.server.ThreadingHTTPServer:
    """A server for ``session`` on 127.0.0.1:``port`` (0: any free port)."""
    handler = type("BoundGradingHandler", (GradingHandler,), {"session": session})
    return GradingServer(("127.0.0.1", port), handler, session)


class GradingServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[GradingHandler], session: GradingSession) -> None:
        self.session = session
        super().__init__(address, handler)

    def server_close(self) -> None:
        super().server_close()
        self.session.outputs.close()  # the render worker ends with the server

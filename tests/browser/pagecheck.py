"""Checks a real browser and the web's own validators make on a built site.

Each check returns a list of problems as one-line strings that start with the page's path
relative to the site root, so that a failing test names the page and what is wrong:
`v1/index.html: failed request: .../missing.png (net::ERR_FILE_NOT_FOUND)`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import subprocess
import threading
from dataclasses import dataclass
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator, Literal
from urllib.error import HTTPError, URLError
from urllib.parse import unquote, urldefrag
from urllib.request import urlopen

# Every page is opened but call sheets (in the store) and evidence pages (lists of calls),
# which come by the dozen from two templates; of those, a sample. Sheets: those of A and B
# (a pass, a failure with a picture, a timeout, a returned model that differs, two calls
# whose SVG could not be rendered), and the first sheet of every other experiment.
# Evidence pages: the longest and the shortest of each experiment.
SAMPLE_CALLS = [f"sheet:pelican-ab:{call}" for call in ("A-01", "A-09", "B-03", "B-05", "B-09", "B-18")]
SAMPLED_FOLDERS = ("store", "v1/evidence")

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}

# Browser context options for the screenshots: a phone lays pages out as a phone does
# (is_mobile honours <meta name=viewport>), at twice the pixels.
VIEWPORTS = {
    "phone": {"viewport": PHONE, "is_mobile": True, "has_touch": True, "device_scale_factor": 2},
    "desktop": {"viewport": DESKTOP},
}

# The main page types, as paths relative to the site root; a pattern stands for the first
# page it matches.
MAIN_PAGES = {
    "versions": "index.html",
    "index": "v1/index.html",
    "experiment": "v1/experiments/pelican-ab/index.html",
    "service": "v1/experiments/pelican-ab/B.html",
    "leaderboard-entry": "v1/experiments/relay-leaderboard/relay-04.html",
    "leaderboard": "v1/experiments/relay-leaderboard/index.html",
    "paired-score": "v1/experiments/seeds-paired/index.html",
    "paired-binary": "v1/experiments/tasks-paired/index.html",
    "repeated": "v1/experiments/prompt-repeated/index.html",
    "longitudinal": "v1/experiments/relay-weekly/index.html",
    "evidence": "v1/evidence/pelican-ab/*.html",
    "call": "sheet:pelican-ab:A-01",
    "call-render-failed": "sheet:pelican-ab:B-09",
    "call-timeout": "sheet:pelican-ab:B-03",
    "claims": "v1/claims.html",
    "narrative": "v1/pages/pelican.html",
    "not-found": "404.html",
}

# The page types photographed at both sizes.
SCREENSHOT_PAGES = ["index", "experiment", "service", "leaderboard-entry", "leaderboard", "paired-score", "paired-binary",
                    "repeated", "longitudinal", "evidence", "call",
                    "call-render-failed", "claims", "narrative"]

# What the broken copy of the site breaks (see conftest's `broken_site`).
BROKEN_LINK = "experiments/pelican-ab/no-such-call.html"
BROKEN_ANCHOR = "claims.html#no-such-claim"
MISSING_IMAGE = "static/no-such-render.png"
CORRUPT_IMAGE = "static/not-really-a.png"
# Not a picture inside a <figure> with a caption: HTML lets that one omit alt.
IMAGE_WITHOUT_ALT_PAGE = "v1/experiments/pelican-ab/A.html"


def sheet_page(site_root: Path, run_id: str, call_id: str) -> str:
    """The sheet showing a call, from the site root, at the call's anchor."""
    body = json.loads((site_root / "v1" / "data" / run_id / "artifacts.json").read_text(encoding="utf-8"))
    sheet = next(s for s in body["sheets"] if call_id in s["calls"])
    return f"store/{sheet['page']}#call-{call_id}"


def resolve_page(site_root: Path, pattern: str) -> str:
    """A page's path relative to the site root; a pattern gives the first page it matches,
    "sheet:RUN:CALL" the sheet of that call, at its anchor."""
    if pattern.startswith("sheet:"):
        _, run_id, call_id = pattern.split(":")
        return sheet_page(site_root, run_id, call_id)
    if not any(c in pattern for c in "*?["):
        assert (site_root / pattern).is_file(), f"the site has no page {pattern}"
        return pattern
    matches = sorted(site_root.glob(pattern))
    assert matches, f"the site has no page matching {pattern}"
    return matches[0].relative_to(site_root).as_posix()


def pages_to_open(site_root: Path) -> list[str]:
    """Every HTML page but call and evidence pages, and a sample of those (see above)."""
    def rel(page: Path) -> str:
        return page.relative_to(site_root).as_posix()

    pages = [rel(p) for p in sorted(site_root.rglob("*.html"))]
    chosen = [p for p in pages if not p.startswith(tuple(f + "/" for f in SAMPLED_FOLDERS))]
    chosen += [resolve_page(site_root, p).split("#")[0] for p in SAMPLE_CALLS]
    for artifacts in sorted((site_root / "v1" / "data").glob("*/artifacts.json")):
        sheets = json.loads(artifacts.read_text(encoding="utf-8"))["sheets"]
        chosen += [f"store/{sheets[0]['page']}"] if sheets else []
    for run in sorted((site_root / "v1" / "evidence").glob("*/")):
        by_size = sorted(run.glob("*.html"), key=lambda p: (p.stat().st_size, p.name))
        chosen += [rel(p) for p in dict.fromkeys(by_size[-1:] + by_size[:1])]
    chosen += [resolve_page(site_root, p) for p in MAIN_PAGES.values()]
    return list(dict.fromkeys(chosen))


# ---------------------------------------------------------------------------- serving


class _LoggingHandler(SimpleHTTPRequestHandler):
    """Serves files quietly and records every answer in the server's `answers`."""

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def log_request(self, code="-", size="-"):
        self.server.answers.append((self.command, self.path, int(getattr(code, "value", code))))


@dataclass
class Served:
    url: str  # http://127.0.0.1:PORT/<sub_path>/
    answers: list[tuple[str, str, int]]  # (method, path, status) of every request

    def errors(self) -> list[str]:
        return [f"{method} {path}: HTTP {status}" for method, path, status in self.answers
                if status >= 400]


@contextlib.contextmanager
def serve(folder: Path, sub_path: str = "some-repo") -> Iterator[Served]:
    """Serve `folder` as http://127.0.0.1:PORT/<sub_path>/, as a project site is published.

    The server's root holds only `<sub_path>`, so a link that climbs above the sub-path
    gets a 404, as it would on a host that serves other projects beside this one.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="served-") as root:
        (Path(root) / sub_path).symlink_to(folder.resolve(), target_is_directory=True)
        handler = functools.partial(_LoggingHandler, directory=root)
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.answers = []
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield Served(f"http://127.0.0.1:{server.server_address[1]}/{sub_path}/", server.answers)
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


# ---------------------------------------------------------------------------- pages

_COLLECT_IMAGES = """async () => {
  // Lazy thumbnails below the fold would load as a reader scrolls; load them all now.
  const images = Array.from(document.images);
  for (const img of images) img.loading = "eager";
  const results = await Promise.all(images.map(img => img.decode().then(
      () => null, () => img.getAttribute("src"))));
  const broken = images.filter(img => img.complete && img.naturalWidth === 0)
                       .map(img => img.getAttribute("src"));
  return Array.from(new Set(results.filter(r => r !== null).concat(broken)));
}"""

_COLLECT_LINKS = """() => Array.from(document.querySelectorAll("a[href], link[href]"))
  .map(a => [a.tagName.toLowerCase(), a.getAttribute("href"), a.href])"""

# Images need alt text, tables need header cells, and a header cell outside <thead> needs a
# scope saying what it heads.
_COLLECT_STRUCTURE = """() => {
  const problems = [];
  for (const img of document.images)
    if (!(img.getAttribute("alt") || "").trim())
      problems.push(`image without alt text: ${img.getAttribute("src")}`);
  document.querySelectorAll("table").forEach((table, i) => {
    const name = `table ${i + 1}` + (table.className ? ` (.${table.className})` : "");
    if (!table.querySelector("th")) problems.push(`${name} has no header cell`);
    for (const th of table.querySelectorAll("th"))
      if (!th.closest("thead") && !th.hasAttribute("scope"))
        problems.push(`${name}: <th> outside <thead> without scope: ${th.textContent.trim()}`);
  });
  return problems;
}"""


@dataclass
class PageVisit:
    """What one page did in the browser: its problems and the links it holds."""

    page: str
    problems: list[str]
    links: list[tuple[str, str, str]]  # (tag, href as written, absolute URL)
    structure: list[str]  # images without alt text, tables without headers


def open_page(context, base_url: str, page_path: str) -> PageVisit:
    """Open a page and report console errors, failed requests, HTTP errors, bad images."""
    problems: list[str] = []
    page = context.new_page()

    def where(url: str) -> str:
        return url[len(base_url):] if url.startswith(base_url) else url

    def on_console(message) -> None:
        if message.type == "error":
            source = message.location.get("url") or ""
            problems.append(f"{page_path}: console error: {message.text}"
                            + (f" ({where(source)})" if source and source != page.url else ""))

    page.on("console", on_console)
    page.on("pageerror", lambda e: problems.append(f"{page_path}: script error: {e}"))
    page.on("requestfailed", lambda r: problems.append(
        f"{page_path}: failed request: {where(r.url)} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and problems.append(
        f"{page_path}: HTTP {r.status}: {where(r.url)}"))
    try:
        page.goto(base_url + page_path, wait_until="load")
        for src in page.evaluate(_COLLECT_IMAGES):
            problems.append(f"{page_path}: image does not decode: {src}")
        links = [tuple(x) for x in page.evaluate(_COLLECT_LINKS)]
        structure = [f"{page_path}: {p}" for p in page.evaluate(_COLLECT_STRUCTURE)]
    finally:
        page.close()
    return PageVisit(page_path, problems, links, structure)


class _IdCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and (name == "id" or (tag == "a" and name == "name")):
                self.ids.add(value)


def _fetch(url: str) -> tuple[bytes | None, str | None]:
    try:
        with urlopen(url, timeout=10) as response:  # noqa: S310 - file: and loopback only
            return response.read(), None
    except HTTPError as error:
        return None, f"HTTP {error.code}"
    except (URLError, OSError) as error:
        return None, f"cannot be opened ({getattr(error, 'reason', error)})"


def check_links(visits: list[PageVisit], base_url: str) -> list[str]:
    """Every link and stylesheet must stay in the site, reach a file, and name an existing id.

    Targets are fetched the way the page addresses them: over HTTP when the site is served,
    from disk when it is opened from file://.
    """
    fetched: dict[str, tuple[bytes | None, str | None]] = {}
    ids: dict[str, set[str]] = {}
    problems = []
    for visit in visits:
        for tag, href, url in visit.links:
            where = f"{visit.page}: {tag} {href!r}"
            target, fragment = urldefrag(url)
            if target.startswith("data:"):
                continue  # inline (the 404 page's icon): nothing to reach
            if not target.startswith(base_url):
                problems.append(f"{where}: leaves the site ({url})")
                continue
            if target not in fetched:
                fetched[target] = _fetch(target)
            body, error = fetched[target]
            if error:
                problems.append(f"{where}: {error}")
            elif fragment and target.endswith(".html"):
                if target not in ids:
                    collector = _IdCollector()
                    collector.feed(body.decode("utf-8", "replace"))
                    ids[target] = collector.ids
                if fragment not in ids[target] and unquote(fragment) not in ids[target]:  # as browsers match
                    problems.append(f"{where}: no element with id {unquote(fragment)!r}")
    return sorted(set(problems))


# ---------------------------------------------------------------------------- layout

# Screenshots taller than this are cut there: the claims page lists every call of every claim.
MAX_SCREENSHOT_HEIGHT = 12000

_OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  // Is `e` clipped by an ancestor that scrolls sideways on its own (a wide table, code)?
  // An absolutely positioned element escapes every scroller below its containing block.
  const contained = e => {
    let escapes = ["absolute", "fixed"].includes(getComputedStyle(e).position);
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (["auto", "scroll", "hidden", "clip"].includes(style.overflowX) && !escapes) return true;
      if (escapes && style.position !== "static") escapes = false;
    }
    return false;
  };
  const wide = [];
  for (const e of document.querySelectorAll("body *")) {
    const box = e.getBoundingClientRect();
    if (box.width === 0 || box.right <= width + 1 || contained(e)) continue;
    // Name the innermost culprits: skip an element whose overflowing child is listed.
    wide.push(e);
  }
  const leaves = wide.filter(e => !wide.some(o => o !== e && e.contains(o)));
  const name = e => e.tagName.toLowerCase() + (e.className ? "." + e.className.split(" ").join(".") : "")
    + (e.parentElement ? ` in ${e.parentElement.tagName.toLowerCase()}` : "")
    + ` (${Math.round(e.getBoundingClientRect().right)}px): `
    + JSON.stringify(e.textContent.trim().slice(0, 40));
  // Tables that scroll inside their own box (allowed on a phone, not at desktop widths).
  const scrolling = Array.from(document.querySelectorAll("table"))
    .filter(t => t.scrollWidth > t.clientWidth + 1)
    .map(t => `table.${t.className} (${t.scrollWidth}px in ${t.clientWidth}px): `
      + JSON.stringify((t.caption ? t.caption.textContent : t.textContent).trim().slice(0, 40)));
  return {scrollWidth: document.documentElement.scrollWidth, width,
          wide: Array.from(new Set(leaves.map(name))).slice(0, 8), scrolling};
}"""


def capture_page(context, base_url: str, page_path: str, screenshot: Path, size: str) -> list[str]:
    """Save a full-page screenshot; report what makes the page wider than the screen."""
    page = context.new_page()
    try:
        page.goto(base_url + page_path, wait_until="load")
        page.evaluate("""async () => {
            for (const img of document.images) img.loading = "eager";
            await Promise.all(Array.from(document.images).map(i => i.decode().catch(() => null)));
        }""")
        height = page.evaluate("() => document.documentElement.scrollHeight")
        clip = None
        if height > MAX_SCREENSHOT_HEIGHT:
            width = page.evaluate("() => document.documentElement.scrollWidth")
            clip = {"x": 0, "y": 0, "width": width, "height": MAX_SCREENSHOT_HEIGHT}
        page.screenshot(path=screenshot, full_page=True, clip=clip)
        overflow = page.evaluate(_OVERFLOW)
    finally:
        page.close()
    where = f"{page_path} ({size})"
    problems = [f"{where}: wider than the {overflow['width']}px screen: {culprit}"
                for culprit in overflow["wide"]]
    if overflow["scrollWidth"] > overflow["width"] and not problems:
        problems.append(f"{where}: {overflow['scrollWidth']}px wide, wider than the "
                        f"{overflow['width']}px screen")
    if size == "desktop":  # at a desktop's width every table fits: none scrolls sideways
        problems += [f"{where}: a table scrolls sideways: {t}" for t in overflow["scrolling"]]
    return problems


# ---------------------------------------------------------------------------- axe-core

# axe's impact levels that fail a page.
FAILING_IMPACTS = ("serious", "critical")

# Every rule axe runs by default, plus td-has-header ("each data cell of a large table has a
# header"), which axe tags experimental and leaves off.
AXE_OPTIONS = {"resultTypes": ["violations"], "rules": {"td-has-header": {"enabled": True}}}


def run_axe(context, base_url: str, page_path: str, axe_source: str) -> dict:
    """Run axe-core on a page; `context` must bypass the page's CSP (see conftest)."""
    page = context.new_page()
    try:
        page.goto(base_url + page_path, wait_until="load")
        page.evaluate("() => { for (const img of document.images) img.loading = 'eager'; }")
        page.add_script_tag(content=axe_source)
        return page.evaluate("async options => await axe.run(document, options)", AXE_OPTIONS)
    finally:
        page.close()


def axe_problems(page_path: str, results: dict, impacts=FAILING_IMPACTS) -> list[str]:
    problems = []
    for violation in results["violations"]:
        if violation["impact"] not in impacts:
            continue
        for node in violation["nodes"]:
            target = " ".join(" ".join(t) if isinstance(t, list) else t for t in node["target"])
            problems.append(f"{page_path}: {violation['impact']} {violation['id']}: "
                            f"{violation['help']} at {target}")
    return problems


# ---------------------------------------------------------------------------- vnu


def run_vnu(java: str, jar: Path, files: list[Path], site_root: Path,
            kind: Literal["html", "css", "svg"] = "html") -> list[str]:
    """Validate files with the Nu HTML Checker; return its errors, one line each.

    Only messages of type "error" (and documents it could not read) are returned: the
    checker's info and warnings include CSP notes that are wrong for file: URLs.
    """
    if not files:
        return []
    completed = subprocess.run(
        [java, "-Xss4m", "-jar", str(jar), "--format", "json", "--stdout", "--exit-zero-always",
         f"--{kind}", *[str(f) for f in files]],
        capture_output=True, text=True, timeout=600, check=False)
    try:
        messages = json.loads(completed.stdout)["messages"]
    except (ValueError, KeyError) as error:
        raise AssertionError(f"vnu gave no JSON report ({error}): {completed.stderr[:2000]}")
    problems = []
    root = site_root.resolve().as_posix()
    for message in messages:
        if message.get("type") not in ("error", "non-document-error"):
            continue
        url = message.get("url", "")
        path = re.sub(r"^file:/*", "/", url)
        rel = path[len(root) + 1:] if path.startswith(root + "/") else url
        line = message.get("lastLine", "?")
        problems.append(f"{rel}:{line}: {message['type']}: {message['message']}")
    return problems


# ---------------------------------------------------------------------------- known problems


@dataclass(frozen=True)
class KnownProblem:
    """A problem in the site itself, found by these tests and left for the templates' owner.

    The checks ignore problems that match `pattern` (a regular expression searched in the
    problem line), and `test_known_problems.py` asserts, as a strict xfail, that each is
    still present: once the template is fixed, that test passes unexpectedly and fails the
    run, which is the reminder to delete the entry here.
    """

    id: str
    checks: tuple[Literal["browser", "server", "vnu", "axe", "layout"], ...]
    pattern: str
    reason: str

    def matches(self, problem: str) -> bool:
        return re.search(self.pattern, problem) is not None


# Problems of the site's own templates that a check found and that are not fixed yet, each
# with the reason; the other tests skip exactly these, and test_known_problems.py fails
# (XPASS, strict) once one is fixed, so the entry is removed. Empty: none are known.
KNOWN_PROBLEMS: list[KnownProblem] = []


def known(check: str) -> list[KnownProblem]:
    return [k for k in KNOWN_PROBLEMS if check in k.checks]


def unexpected(problems: list[str], check: str) -> list[str]:
    """The problems that no known problem of this check explains."""
    return [p for p in problems if not any(k.matches(p) for k in known(check))]

"""Helpers that read a built site the way a browser and an auditor would."""

from __future__ import annotations

import hashlib
import json
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []  # (tag, url)
        self.ids: set[str] = set()
        self.tags: list[str] = []
        self.images: list[dict[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"])
        for name in ("href", "src"):
            if values.get(name) is not None:
                self.links.append((tag, values[name]))
        if tag == "img":
            self.images.append(values)


_PARSED: dict[tuple[Path, int, int], PageParser] = {}


def parse(path: Path) -> PageParser:
    """A page parsed once for as long as its bytes stay the same (a sheet is the target of
    thousands of #anchor links)."""
    stat = path.stat()
    key = (path.resolve(), stat.st_mtime_ns, stat.st_size)
    if key not in _PARSED:
        if len(_PARSED) > 20_000:
            _PARSED.clear()
        _PARSED[key] = parse_text(path.read_text(encoding="utf-8"))
    return _PARSED[key]


def parse_text(html: str) -> PageParser:
    parser = PageParser()
    parser.feed(html)
    return parser


def broken_links(site: Path) -> list[str]:
    """Every relative href/src must name an existing file, and every #anchor must exist."""
    pages = {p: parse(p) for p in site.rglob("*.html")}
    problems = []
    for page, parsed in pages.items():
        for tag, url in parsed.links:
            parts = urlsplit(url)
            where = f"{page.relative_to(site)}: {tag} {url!r}"
            if tag == "link" and url == "data:,":
                continue  # the 404 page's empty inline icon: it is served at any depth
            if parts.scheme or parts.netloc or url.startswith("/"):
                problems.append(f"{where}: not a relative link")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page.resolve()
            if not target.is_relative_to(site.resolve()) and not target.is_relative_to(site.parent.resolve()):
                problems.append(f"{where}: leaves the site")
            elif not target.is_file():
                problems.append(f"{where}: no such file")
            elif parts.fragment:
                ids = pages[target].ids if target in pages else parse(target).ids
                # As a browser finds it: the fragment as written, then percent-decoded.
                if parts.fragment not in ids and unquote(parts.fragment) not in ids:
                    problems.append(f"{where}: no element with id {parts.fragment!r}")
    return problems


def manifest_problems(version_dir: Path) -> list[str]:
    """The version's files are exactly those its manifest lists, each with its hash; the
    store files it lists are there, each holding what its name and hash say."""
    manifest = json.loads((version_dir / "manifest.json").read_text())
    listed = manifest["files"]
    on_disk = {p.relative_to(version_dir).as_posix() for p in version_dir.rglob("*") if p.is_file()}
    problems = [f"not in manifest: {p}" for p in sorted(on_disk - set(listed) - {"manifest.json"})]
    problems += [f"missing: {p}" for p in sorted(set(listed) - on_disk)]
    for rel, digest in listed.items():
        path = version_dir / rel
        if path.is_file() and "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(f"hash differs: {rel}")
    store = version_dir.parent / "store"
    for name, digest in manifest["store"].items():
        path = store / name
        if not path.is_file():
            problems.append(f"missing from the store: {name}")
        elif "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest() != digest or not name.startswith(digest[7:]):
            problems.append(f"store file differs: {name}")
    return problems


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def sheet_of(version_dir: Path, run_id: str, call_id: str) -> Path:
    """The sheet (store/<sha256>.html) that shows a call, found as a reader's tools find
    it: through data/<run>/artifacts.json."""
    body = json.loads((version_dir / "data" / run_id / "artifacts.json").read_text())
    for sheet in body["sheets"]:
        if call_id in sheet["calls"]:
            return version_dir.parent / "store" / sheet["page"]
    raise AssertionError(f"call {call_id} of {run_id} is on no sheet")


def call_section(version_dir: Path, run_id: str, call_id: str) -> str:
    """The HTML of one call's section on its sheet."""
    from urllib.parse import quote

    page = text(sheet_of(version_dir, run_id, call_id))
    start = page.index(f'<section class="call" id="call-{quote(call_id, safe="")}">')
    return page[start:page.index("</section>", start) + len("</section>")]

"""Narrative pages: ``pages/*.md`` rendered with markdown-it-py, citing claims by id.

A page cites a claim with the MyST role syntax {claim}`<claim id>`; the page then shows
the claim's value and interval exactly as every other page does, linked to its entry on
claims.html, so prose cannot drift from the numbers. An unknown id fails the build,
naming the page, the line and the nearest existing ids. Raw HTML is not passed through.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from markdown_it import MarkdownIt
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.myst_role import myst_role_plugin

from reportgen.claims.claim import Claim
from reportgen.errors import Collector
from reportgen.model.config import SAFE_ID


@dataclass(frozen=True)
class Page:
    name: str  # file stem, names the output page
    rel: str  # pages/<name>.md, for messages
    text: str
    title: str


@dataclass(frozen=True)
class RenderedPage:
    page: Page
    html: str  # the body, safe to insert: markdown without raw HTML
    cited: tuple[str, ...]  # claim ids, in order of first citation


def markdown() -> MarkdownIt:
    # html=False: any raw HTML in a page is shown as text, never passed through.
    return (MarkdownIt("commonmark", {"html": False, "typographer": False})
            .use(myst_role_plugin).use(footnote_plugin).enable("table"))


def load_pages(source: Path) -> tuple[Page, ...]:
    folder = source / "pages"
    if not folder.is_dir():
        return ()
    problems = Collector()
    pages = []
    for path in sorted(folder.glob("*.md")):
        rel = f"pages/{path.name}"
        if not SAFE_ID.match(path.stem):
            problems.add(rel, 0, "", "the file name must be letters, digits, '.', '_' or '-' (it names a page)")
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            problems.add(rel, 0, "", f"not UTF-8 text ({exc.reason}); save the page as UTF-8")
            continue
        title = next((line.lstrip("#").strip() for line in text.splitlines() if line.startswith("# ")), path.stem)
        pages.append(Page(path.stem, rel, text, title))
    problems.raise_if_any()
    return tuple(pages)


def claim_references(page: Page, md: MarkdownIt | None = None) -> list[tuple[str, int, str]]:
    """(role name, line, content) of every role in the page, in order."""
    md = md or markdown()
    found = []
    for block in md.parse(page.text):
        for child in block.children or ():
            if child.type == "myst_role":
                offset = block.content.find(f"`{child.content}`")
                line = (block.map[0] if block.map else 0) + 1 + block.content[:max(offset, 0)].count("\n")
                found.append((child.meta.get("name", ""), line, child.content))
    return found


def render_pages(pages: tuple[Page, ...], claims: Mapping[str, Claim], claim_html: Callable[[Claim, str], str],
                 root: str = "../") -> tuple[RenderedPage, ...]:
    """Render every page, or raise InputError naming every unknown claim id. A cited
    claim is shown by ``claim_html``: the same macro as on every other page, with its
    interval, warnings and audit marks."""
    md = markdown()
    problems = Collector()
    for page in pages:
        for role, line, content in claim_references(page, md):
            if role != "claim":
                problems.add(page.rel, line, role, f"unknown role {{{role}}}: only {{claim}} is supported")
            elif content.strip() not in claims:
                near = difflib.get_close_matches(content.strip(), list(claims), n=3, cutoff=0.5)
                hint = f"; did you mean {', '.join(near)}?" if near else "; see claims.html for every id"
                problems.add(page.rel, line, "claim", f"unknown claim id {content.strip()!r}{hint}")
    problems.raise_if_any()

    def render_role(self, tokens, idx, options, env) -> str:
        claim = claims[tokens[idx].content.strip()]
        env.setdefault("cited", []).append(claim.id)
        return claim_html(claim, root)

    md.add_render_rule("myst_role", render_role)
    rendered = []
    for page in pages:
        env: dict = {}
        html = md.render(page.text, env)
        rendered.append(RenderedPage(page, html, tuple(dict.fromkeys(env.get("cited", [])))))
    return tuple(rendered)

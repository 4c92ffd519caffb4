"""Narrative pages: ``pages/*.md`` rendered with markdown-it-py, citing claims by id.

A page cites a claim with the MyST role syntax {claim}`<claim id>`; the page then shows
the claim's value and interval exactly as every other page does, linked to its entry on
claims.html, so prose cannot drift from the numbers. An unknown id fails the build,
naming the page, the line and the nearest existing ids. Raw HTML is not passed through.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping

from markdown_it import MarkdownIt
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.myst_role import myst_role_plugin

from reportgen.claims.claim import Claim
from reportgen.errors import Collector
from reportgen.model.config import SAFE_ID
from reportgen.model.measures import Measure


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
    # Build warnings, "pages/x.md:line: ...": a word claiming a direction or significance
    # beside a citation whose decision does not say so.
    cautions: tuple[str, ...] = ()


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
        rendered.append(RenderedPage(page, html, tuple(dict.fromkeys(env.get("cited", []))),
                                     wording_cautions(page, claims, md)))
    return tuple(rendered)


# Words that claim a direction (or significance), and the verdicts that say so.
_CLAIMING = re.compile(r"\b(significant(?:ly)?|better|worse|improved?|improvements?|outperform\w*|superior|inferior)\b",
                       re.IGNORECASE)
_NEGATION = re.compile(r"\b(not|no|nor|neither|never|without|cannot)\b[^.;:]{0,24}$|n't\s+\S*\s*$", re.IGNORECASE)
_SHOWS = {
    "better": {"useful_improvement", "improvement_not_useful_size"},
    "worse": {"candidate_worse"},
    "significant": {"useful_improvement", "improvement_not_useful_size", "candidate_worse"},
}
_ROLE = re.compile(r"\{claim\}`([^`]+)`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*_{(\[])")


def _direction(word: str) -> str:
    word = word.lower()
    if word.startswith("significant"):
        return "significant"
    return "worse" if word in ("worse", "inferior") else "better"


def _decision_of(claim: Claim, claims: Mapping[str, Claim]) -> Claim | None:
    """The decision a cited claim belongs to: itself, or its comparison's verdict."""
    if claim.kind == "decision":
        return claim
    if not claim.key.is_comparison:
        return None
    return claims.get(replace(claim.key, measure=Measure.VERDICT, detail=None).id)


def wording_cautions(page: Page, claims: Mapping[str, Claim], md: MarkdownIt | None = None) -> tuple[str, ...]:
    """Each sentence that cites a claim and uses a word like "significant", "better",
    "worse" or "improved" (not negated) when the cited comparison's decision does not
    show that: one line naming the page, the line, the word and the decision."""
    md = md or markdown()
    out: list[str] = []
    for block in md.parse(page.text):
        if block.type != "inline" or not block.map:
            continue
        offset = 0
        for sentence in _SENTENCE_END.split(block.content):
            start = block.content.find(sentence, offset)
            offset = max(start, 0) + len(sentence)
            cited = [claims[i.strip()] for i in _ROLE.findall(sentence) if i.strip() in claims]
            decisions = [d for d in (_decision_of(c, claims) for c in cited) if d is not None]
            if not decisions:
                continue
            prose = _ROLE.sub(" ", sentence)
            for match in _CLAIMING.finditer(prose):
                if _NEGATION.search(prose[:match.start()]):
                    continue
                shows = _SHOWS[_direction(match.group(1))]
                for decision in decisions:
                    if decision.verdict in shows:
                        continue
                    line = block.map[0] + 1 + block.content[:max(start, 0)].count("\n")
                    out.append(f"{page.rel}:{line}: wording: \"{match.group(1)}\" beside the citation of "
                               f"{decision.id}, whose decision is \"{decision.verdict_label}\": the data do not "
                               f"show that; say what the interval shows")
    return tuple(dict.fromkeys(out))

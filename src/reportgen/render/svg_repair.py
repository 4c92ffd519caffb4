"""Repairs that let a model's SVG be parsed, each recorded for the call page.

Model output often holds a well-formed drawing inside something that is not: reasoning
text or a fenced code block around the ``<svg>`` element, ``xlink:href`` without its
namespace declared, an attribute written twice. Each repair is made only when parsing
fails for the reason it mends, at most once, and is named in a note beside the sha256
of the original bytes, so a reader can see how the rendered SVG came from what the
model returned. Every scan here is a single forward pass: the input is untrusted, and
a backtracking regex over it could take quadratic time or worse.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from xml.parsers.expat import errors as expat_errors

from reportgen.render.sanitize import SVG_NS, SvgRejected, parse_svg

_DUPLICATE_ATTRIBUTE = expat_errors.codes[expat_errors.XML_ERROR_DUPLICATE_ATTRIBUTE]
_UNBOUND_PREFIX = expat_errors.codes[expat_errors.XML_ERROR_UNBOUND_PREFIX]
_JUNK_AFTER = expat_errors.codes[expat_errors.XML_ERROR_JUNK_AFTER_DOC_ELEMENT]
_XLINK_DECLARATION = b' xmlns:xlink="http://www.w3.org/1999/xlink"'
# "<svg" or "</svg" as a whole tag name: one fixed-length pattern, nothing to backtrack.
_SVG_TAG = re.compile(rb"<(/?)svg[ \t\r\n/>]")
_WHITESPACE = b" \t\r\n"
_NAME_END = frozenset(b" \t\r\n=/>")
NAMES_SHOWN = 5  # repeated attribute names listed in a note


@dataclass(frozen=True)
class Prepared:
    data: bytes  # what is rendered: the original bytes, or the repaired ones
    root: ET.Element | None
    problem: str | None  # why nothing can be rendered, when root is None
    notes: tuple[str, ...]


def prepare_svg(data: bytes, original_sha: str) -> Prepared:
    """Parse, repairing (each repair once) what keeps a well-formed drawing from parsing."""
    notes: list[str] = []
    done: set[str] = set()
    while True:
        root, error = _parse(data)
        if root is not None and root.tag in (f"{{{SVG_NS}}}svg", "svg"):
            return Prepared(data, root, None, tuple(notes))
        repair = _next_repair(data, error, done)
        if repair is None:
            problem = str(error) if error is not None else "the root element is not <svg>"
            return Prepared(data, None, problem, tuple(notes))
        name, data, what = repair
        done.add(name)
        notes.append(f"repaired: {what} (original sha256 {original_sha})")


def _parse(data: bytes) -> tuple[ET.Element | None, SvgRejected | None]:
    try:
        return parse_svg(data), None
    except SvgRejected as exc:
        return None, exc


def _next_repair(data: bytes, error: SvgRejected | None, done: set[str]) -> tuple[str, bytes, str] | None:
    """The repair for this parse failure, if one applies: (its name, the bytes, the note).
    A refusal (a DTD, entities) is never repaired around."""
    cause = error.__cause__ if error is not None else None
    code = cause.code if isinstance(cause, ET.ParseError) else None
    if error is not None and code is None:
        return None
    if code == _UNBOUND_PREFIX and "xlink" not in done and b"xlink:" in data and b"xmlns:xlink" not in data:
        at = _first_svg_tag(data)
        if at is not None:
            at += len(b"<svg")
            return "xlink", data[:at] + _XLINK_DECLARATION + data[at:], "declared the missing xlink namespace"
    if code == _DUPLICATE_ATTRIBUTE and "duplicates" not in done:
        fixed, names = drop_duplicate_attributes(data)
        if names:
            shown = ", ".join(list(dict.fromkeys(names))[:NAMES_SHOWN])
            return "duplicates", fixed, (f"removed {len(names)} repeated attribute(s) ({shown}), "
                                         "keeping the first of each")
    span = svg_element_span(data) if "extract" not in done else None
    if span is not None and _text_around(data, span, code):
        return "extract", data[span[0]:span[1]], (
            f"rendered only the <svg> element, bytes {span[0]}–{span[1]} of {len(data)}, "
            "without the text around it")
    return None


def _text_around(data: bytes, span: tuple[int, int], code: int | None) -> bool:
    """Whether the parse failed because of what lies outside the <svg> element: text
    after it, an element around it, or text before it other than a prolog (an XML
    declaration, comments: these stay when nothing else is wrong)."""
    if code is None or code == _JUNK_AFTER:
        return True
    return _after_prolog(data, span[0]) < span[0]


_PROLOG = ((b"<?", b"?>"), (b"<!--", b"-->"), (b"<!", b">"))


def _after_prolog(data: bytes, limit: int) -> int:
    """Where the markup allowed before a root element (declarations, processing
    instructions, comments) ends, looking no further than ``limit``."""
    pos = 0
    while True:
        while pos < limit and data[pos] in _WHITESPACE:
            pos += 1
        for opener, closer in _PROLOG:
            if data.startswith(opener, pos, limit):
                end = data.find(closer, pos + len(opener), limit)
                if end < 0:
                    return pos
                pos = end + len(closer)
                break
        else:
            return pos


def _first_svg_tag(data: bytes) -> int | None:
    for match in _SVG_TAG.finditer(data):
        if not match.group(1):
            return match.start()
    return None


def svg_element_span(data: bytes) -> tuple[int, int] | None:
    """Where the first ``<svg`` element starts and ends: at its matching ``</svg>``,
    counting nested ``<svg>`` elements (so a second drawing or prose after it is left
    out), or, when the count never closes (a ``<svg`` in a comment, say), at the last
    ``</svg>``."""
    start = matched = last = None
    depth = 0
    gt = -1  # the first ">" at or after the current tag: found once per stretch, so one pass
    for match in _SVG_TAG.finditer(data):
        if match.end() - 1 > gt:
            gt = data.find(b">", match.end() - 1)
            if gt < 0:
                break  # no tag after this one can end
        closing = bool(match.group(1))
        if not closing:
            if start is None:
                start = match.start()
            if data[gt - 1:gt] != b"/":  # <svg .../> opens and closes at once
                depth += 1
            elif depth == 0:
                matched = gt + 1
                break
            continue
        if start is None or data[match.end() - 1:gt].strip(_WHITESPACE):
            continue  # a closing tag before any opening, or not a closing tag at all
        last = gt + 1
        depth -= 1
        if depth == 0:
            matched = gt + 1
            break
    end = matched or last
    return (start, end) if start is not None and end is not None else None


def drop_duplicate_attributes(data: bytes) -> tuple[bytes, list[str]]:
    """The document with each start tag's repeated attributes removed (the first
    occurrence kept, as the one a reader of the source sees first), and the names removed.
    Comments, CDATA sections and processing instructions are passed over unchanged."""
    pieces: list[bytes] = []
    removed: list[str] = []
    copied = pos = 0
    while (lt := data.find(b"<", pos)) >= 0:
        for opener, closer in ((b"<!--", b"-->"), (b"<![CDATA[", b"]]>"), (b"<?", b"?>"), (b"<!", b">"), (b"</", b">")):
            if data.startswith(opener, lt):
                end = data.find(closer, lt + len(opener))
                pos = len(data) if end < 0 else end + len(closer)
                break
        else:
            drops, pos = _start_tag_duplicates(data, lt + 1)
            for begin, finish, name in drops:
                pieces.append(data[copied:begin])
                copied = finish
                removed.append(name)
    pieces.append(data[copied:])
    return b"".join(pieces), removed


def _start_tag_duplicates(data: bytes, pos: int) -> tuple[list[tuple[int, int, str]], int]:
    """The repeated attributes of the start tag whose name begins at ``pos``, each as
    (start, end, name) with its leading space; and where scanning goes on. A tag that
    cannot be read is left as it is."""
    pos = _name_end(data, pos)
    seen: set[bytes] = set()
    drops: list[tuple[int, int, str]] = []
    while True:
        begin = pos
        while pos < len(data) and data[pos] in _WHITESPACE:
            pos += 1
        if pos >= len(data) or data[pos] in b"/>" or pos == begin:
            return drops, pos
        name_start, pos = pos, _name_end(data, pos)
        name = data[name_start:pos]
        while pos < len(data) and data[pos] in _WHITESPACE:
            pos += 1
        if not name or data[pos:pos + 1] != b"=":
            return drops, pos
        pos += 1
        while pos < len(data) and data[pos] in _WHITESPACE:
            pos += 1
        quote = data[pos:pos + 1]
        close = data.find(quote, pos + 1) if quote in (b'"', b"'") else -1
        if close < 0:
            return drops, pos
        pos = close + 1
        if name in seen:
            drops.append((begin, pos, name.decode("utf-8", "replace")[:40]))
        seen.add(name)


def _name_end(data: bytes, pos: int) -> int:
    while pos < len(data) and data[pos] not in _NAME_END:
        pos += 1
    return pos

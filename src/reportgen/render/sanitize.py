"""Model-written SVG -> an inert SVG safe to serve from the site's origin.

Whitelist, not blacklist: only drawing elements and presentation attributes survive;
scripts, event handlers, foreign content, style sheets and every reference that is not
a fragment inside the same document are dropped. Parsing refuses DTDs and entities.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from defusedxml import ElementTree as SafeET
from defusedxml.common import DefusedXmlException

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

ALLOWED_ELEMENTS = frozenset("""
svg g a style defs symbol use title desc metadata path rect circle ellipse line polyline polygon
text tspan textPath linearGradient radialGradient stop clipPath mask pattern marker
filter feBlend feColorMatrix feComponentTransfer feComposite feFlood feGaussianBlur
feMerge feMergeNode feMorphology feOffset feTurbulence feFuncR feFuncG feFuncB feFuncA
""".split())

ALLOWED_ATTRIBUTES = frozenset("""
id class x y x1 y1 x2 y2 cx cy r rx ry fx fy width height d points viewBox
preserveAspectRatio transform fill fill-opacity fill-rule stroke stroke-width
stroke-linecap stroke-linejoin stroke-miterlimit stroke-dasharray stroke-dashoffset
stroke-opacity opacity color display visibility font-family font-size font-weight
font-style text-anchor dominant-baseline letter-spacing dx dy rotate offset stop-color
stop-opacity gradientUnits gradientTransform spreadMethod patternUnits
patternContentUnits patternTransform clipPathUnits maskUnits maskContentUnits
clip-path clip-rule mask marker-start marker-mid marker-end markerWidth markerHeight
markerUnits refX refY orient filter filterUnits primitiveUnits in in2 result
stdDeviation mode operator k1 k2 k3 k4 values type dx dy flood-color flood-opacity
baseFrequency numOctaves seed stitchTiles radius tableValues slope intercept amplitude
exponent version
""".split())
HREF_ATTRIBUTES = ("href", f"{{{XLINK_NS}}}href")
_URL_RE = re.compile(r"url\(\s*['\"]?\s*([^)'\"]*)", re.I)


class SvgRejected(ValueError):
    """The SVG cannot be parsed safely; the reason is shown on the call page."""


def parse_svg(data: bytes) -> ET.Element:
    """Parse with DTDs, entities and external references refused."""
    try:
        return SafeET.fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise SvgRejected(f"refused: the SVG declares a DTD or entities ({type(exc).__name__})") from exc
    except ET.ParseError as exc:
        raise SvgRejected(f"not well-formed XML: {exc}") from exc


def _local(tag: str) -> tuple[str | None, str]:
    if tag.startswith("{"):
        ns, _, name = tag[1:].partition("}")
        return ns, name
    return None, tag


def _safe_value(value: str) -> bool:
    # Only same-document references: url(#id). Anything else could fetch.
    lowered = value.lower()
    if "javascript:" in lowered or "expression(" in lowered or "@import" in lowered:
        return False
    return all(target.strip().startswith("#") for target in _URL_RE.findall(value))


# Elements nested deeper than this are refused: cleaning, writing and drawing a tree
# each walk it recursively (a drawing nests a few levels; 50,000 <g> exhaust the stack).
MAX_DEPTH = 256


def nesting_depth(root: ET.Element) -> int:
    """How deep elements nest below ``root`` (1: no children), counted without recursion."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        element, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in element)
    return deepest


def sanitize_svg(data: bytes) -> bytes:
    root = parse_svg(data)
    ns, name = _local(root.tag)
    if name != "svg" or ns not in (SVG_NS, None):
        raise SvgRejected("the document's root element is not <svg>")
    if nesting_depth(root) > MAX_DEPTH:
        raise SvgRejected(f"elements nested more than {MAX_DEPTH} deep")
    _clean(root)
    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    return ET.tostring(root, encoding="utf-8", xml_declaration=False) + b"\n"


def _clean(element: ET.Element) -> None:
    for child in list(element):
        if not isinstance(child.tag, str):  # comments, processing instructions
            element.remove(child)
            continue
        ns, name = _local(child.tag)
        if ns not in (SVG_NS, None) or name not in ALLOWED_ELEMENTS:
            element.remove(child)
            continue
        if name == "style" and (len(child) or not _safe_value(child.text or "")):
            element.remove(child)  # a style sheet that could fetch or run something
            continue
        _clean(child)
    for key in list(element.attrib):
        value = element.attrib[key]
        ns, name = _local(key)
        if key in HREF_ATTRIBUTES:
            if not value.strip().startswith("#"):
                del element.attrib[key]
        elif ns is not None or name not in ALLOWED_ATTRIBUTES or not _safe_value(value):
            del element.attrib[key]

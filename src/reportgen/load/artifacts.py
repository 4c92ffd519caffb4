"""Each call's artifacts, read from the run folder's files."""

from __future__ import annotations

import bisect
import os
import re
from pathlib import Path
from typing import Any, AnyStr, Callable, Iterable, Iterator, Mapping

from reportgen.load.files import list_folder
from reportgen.model.artifacts import Artifact, CallArtifacts, Contents, sha256
from reportgen.model.source import RunFiles, ValidatedRun


def collect_artifacts(run: ValidatedRun) -> dict[str, CallArtifacts]:
    """Every call's artifact file or folder (paths were checked by validate), taken from
    the files validate read; a folder with a symbolic link inside is read from disk."""
    out: dict[str, CallArtifacts] = {}
    root = run.folder.resolve()
    listed = run.files
    # Looked up once, not for each of 100,000 calls: the listed files' hashes (a plain
    # dict, with every listed file), where to read their bytes, and each file name's kind.
    if listed is not None:
        hashed, below, ref = listed.sha256, _FilesBelow(listed.data, listed.dirs), _refs(listed)
    else:  # nothing listed: every artifact is read from disk below
        hashed, below, ref = {}, _FilesBelow((), ()), _no_refs
    # Each file name once, with its kind: the names of a call's folder repeat from call to
    # call (response.txt, image.svg), and a copy of one for each artifact was 100 MB at a
    # million calls.
    names: dict[str, tuple[str, str]] = {}
    for call in run.calls:
        if not call.artifact_path:
            continue
        rel = os.path.normpath(call.artifact_path)
        if rel in hashed:
            named = [(os.path.basename(rel), ref(rel), hashed[rel])]
        elif listed is not None and rel in listed.dirs and not (listed.links and _link_below(listed.links, rel)):
            named = [(name[len(rel) + 1:], ref(name), hashed[name]) for name in below(rel)]
        else:
            target = os.path.join(run.folder, rel)
            paths = [(os.path.basename(target), target)] if os.path.isfile(target) else _files_below(target, root)
            named = []
            for name, path in paths:
                with open(path, "rb") as handle:
                    data = handle.read()
                named.append((name, data, sha256(data)))
        files = [_artifact(names, name, digest, data) for name, data, digest in named]
        if not any(a.kind == "svg" for a in files):
            response = next((a for a in files if a.kind == "response"), None)
            span = next(svg_spans(response.data), None) if response is not None else None
            if response is not None and span:
                svg = response.data[span[0]:span[1]]
                files.append(Artifact("extracted.svg", sha256(svg), svg, "svg",
                                      derived=f"first <svg>…</svg> block of {response.name}"))
        out[call.call_id] = CallArtifacts(call.call_id, tuple(files))
    return out


def _artifact(names: dict[str, tuple[str, str]], name: str, digest: str, data: bytes | Contents) -> Artifact:
    """The artifact of a file named ``name``, its name shared with every artifact of that name."""
    shared, kind = names.get(name) or names.setdefault(name, (name, artifact_kind(name)))
    return Artifact(shared, digest, data, kind)


def _refs(files: RunFiles) -> Callable[[str], bytes | Contents]:
    """How to take a listed file's bytes, or where to read them when the listing reads them lazily."""
    data = files.data
    return data.ref if hasattr(data, "ref") else data.__getitem__


def _no_refs(rel: str) -> bytes | Contents:
    raise KeyError(rel)  # nothing is listed


def _ref(files: RunFiles, rel: str) -> bytes | Contents:
    """A listed file's bytes, or where to read them when the listing read them lazily."""
    data = files.data
    return data.ref(rel) if hasattr(data, "ref") else data[rel]


def svg_files(files: RunFiles) -> dict[str, Artifact]:
    """Every SVG file of a run folder, by sha256 (its bytes read when asked for): what
    its calls will need rendered (known before the log is validated, so rendering can
    start at once)."""
    out: dict[str, Artifact] = {}
    for rel, digest in files.sha256.items():
        if digest not in out and artifact_kind(rel) == "svg":
            out[digest] = Artifact(os.path.basename(rel), digest, _ref(files, rel), "svg")
    return out


class _FilesBelow:
    """The files below a folder of a listing, in sorted-Path order. A call's folder
    usually holds only files: those are grouped by folder in one pass over the listing
    (which is in sorted-Path order), rather than searched for among 200,000 names."""

    def __init__(self, files: Iterable[str], dirs: Iterable[str]) -> None:
        self.files = files
        self.own: dict[str, list[str]] = {}
        for rel in files:
            self.own.setdefault(rel.rpartition("/")[0], []).append(rel)
        self.nested = {d.rpartition("/")[0] for d in dirs}  # folders that hold a folder
        self.sorted: list[str] | None = None

    def __call__(self, folder: str) -> list[str]:
        if folder not in self.nested:
            return self.own.get(folder, [])
        if self.sorted is None:
            self.sorted = sorted(self.files)
        return _below(self.sorted, folder)


def _below(names: list[str], folder: str) -> list[str]:
    """The files below ``folder``, at any depth, in sorted-Path order; ``names`` is every
    file's path, sorted as strings (so those below a folder are next to each other)."""
    prefix = folder + "/"
    start = bisect.bisect_left(names, prefix)
    end = bisect.bisect_left(names, folder + "0", start)  # "0" follows "/"
    below = names[start:end]
    if not any("/" in rel[len(prefix):] for rel in below):
        return below  # the folder's own files: string order is already Path order
    return sorted(below, key=lambda rel: rel.split("/"))


def _link_below(links: tuple[str, ...], folder: str) -> bool:
    i = bisect.bisect_left(links, folder + "/")
    return i < len(links) and links[i].startswith(folder + "/")


def _files_below(target: str, root: Path) -> list[tuple[str, str]]:
    """Every file below ``target`` (named relative to it), in sorted order. A symbolic
    link counts when it leads to a file inside ``root``; linked folders are not entered."""
    listing = list_folder(target)
    linked = [(rel, path) for rel, path in listing.links
              if Path(path).is_file() and Path(path).resolve().is_relative_to(root)]
    return sorted(listing.files + linked, key=lambda item: item[0].split("/"))


def artifact_hashes(artifacts: dict[str, CallArtifacts]) -> dict[str, tuple[str, ...]]:
    """The sha256 of each call's own files (not what the build derived from them)."""
    return {cid: tuple(a.sha256 for a in b.files if a.derived is None) for cid, b in artifacts.items()}


def drawing_digests(artifacts: Mapping[str, CallArtifacts]) -> dict[str, str]:
    """Each call's drawing (its first SVG, given or extracted from the response) as
    ``drawing_digest``: a hash per call, so comparing drawings keeps no bytes."""
    out = {}
    by_sha: dict[str, str] = {}  # calls drawn from a pool share their SVG: each digested once
    for call_id, bundle in artifacts.items():
        svg = bundle.first("svg")
        if svg is not None:
            if svg.sha256 not in by_sha:
                by_sha[svg.sha256] = drawing_digest(svg.data)
            out[call_id] = by_sha[svg.sha256]
    return out


_BETWEEN_TAGS = re.compile(rb">\s+<")


def drawing_digest(data: bytes) -> str:
    """sha256 of the drawing an SVG artifact holds: its first ``<svg>...</svg>`` element
    with whitespace between tags dropped and other runs of whitespace made one space,
    so the same drawing re-indented, or wrapped in other prose, reads as the same."""
    return sized_drawing_digest(data)[0]


def sized_drawing_digest(data: bytes) -> tuple[str, int]:
    """``drawing_digest`` and the size in bytes of the drawing it digests."""
    span = next(svg_spans(data), None)
    element = data[span[0]:span[1]] if span else data
    drawing = b" ".join(_BETWEEN_TAGS.sub(b"><", element).split())
    return sha256(drawing), len(drawing)


def drawings_and_graded(artifacts: Mapping[str, CallArtifacts]
                        ) -> tuple[dict[str, str], dict[str, tuple[str, int]]]:
    """``drawing_digests`` and ``graded_outputs`` at once, each drawing normalised once
    (a call with a drawing is graded on it)."""
    graded = graded_outputs(artifacts)
    drawings = {cid: graded[cid][0] for cid, bundle in artifacts.items()
                if cid in graded and bundle.first("svg") is not None}
    return drawings, graded


def graded_outputs(artifacts: Mapping[str, CallArtifacts]) -> dict[str, tuple[str, int]]:
    """Each call's graded output as a digest and a size: its drawing (as
    ``drawing_digest``), else its whole response (its own files)."""
    out: dict[str, tuple[str, int]] = {}
    by_sha: dict[str, tuple[str, int]] = {}  # calls drawn from a pool share their SVG: each digested once
    for call_id, bundle in artifacts.items():
        svg = bundle.first("svg")
        if svg is not None:
            if svg.sha256 not in by_sha:
                by_sha[svg.sha256] = sized_drawing_digest(svg.data)
            out[call_id] = by_sha[svg.sha256]
            continue
        own = [a for a in bundle.files if a.derived is None]
        if own:
            out[call_id] = ("+".join(sorted(a.sha256 for a in own)), sum(a.size for a in own))
    return out


def artifact_kind(name: str) -> str:
    """What a file of a call is, by its name: "svg" (a drawing), "response" (text) or "other"."""
    lower = name.lower()
    if lower.endswith(".svg"):
        return "svg"
    if lower.endswith((".txt", ".md", ".json")):
        return "response"
    return "other"


_SVG_OPEN: Mapping[type, re.Pattern[Any]] = {str: re.compile(r"<svg\b", re.I), bytes: re.compile(rb"<svg\b", re.I)}


_SVG_CLOSE: Mapping[type, re.Pattern[Any]] = {str: re.compile(r"</svg\s*>", re.I), bytes: re.compile(rb"</svg\s*>", re.I)}


def svg_spans(text: AnyStr) -> Iterator[tuple[int, int]]:
    """Where each SVG element of model text starts and ends: from ``<svg`` to the first
    ``</svg>`` after it, as the regex ``<svg\\b.*?</svg\\s*>`` (re.S, re.I) matches, in one
    pass. The regex tries again from every ``<svg`` that has no closing tag after it:
    a response of many of them took quadratic time (20,000: ten seconds)."""
    opening, closing = _SVG_OPEN[type(text)], _SVG_CLOSE[type(text)]
    position = 0
    while (start := opening.search(text, position)) is not None:
        end = closing.search(text, start.end())
        if end is None:
            return  # no later <svg has a closing tag after it either
        yield start.start(), end.end()
        position = end.end()

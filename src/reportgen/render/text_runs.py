"""Runs whose calls hold no drawing (text evaluations, most imported runs): their pages
speak of responses, never of drawings, renders or the renderer."""

from __future__ import annotations

from reportgen.model.artifacts import Artifact, CallArtifacts
from reportgen.render.report import RunReport

FIRST_LINE_CHARS = 80
_TEXT_SUFFIXES = (".txt", ".md")


def holds_drawings(run: RunReport) -> bool:
    """Whether any call of the run has a drawing (an SVG, given or found in its response)."""
    return any(bundle.first("svg") is not None for bundle in run.artifacts.values())


def response_file(bundle: CallArtifacts) -> Artifact | None:
    """The file a call's output is read from: its first plain-text response (output.txt,
    response.txt), else its first response file of any kind (a JSON transcript)."""
    responses = [a for a in bundle.files if a.kind == "response"]
    return next((a for a in responses if a.name.lower().endswith(_TEXT_SUFFIXES)), responses[0] if responses else None)


def first_line(response: Artifact | None) -> str:
    """The response's first non-blank line, at most FIRST_LINE_CHARS characters."""
    if response is None:
        return "no response"
    text = response.data.decode("utf-8", "replace")
    line = next((" ".join(line.split()) for line in text.splitlines() if line.strip()), "")
    if not line:
        return "empty response"
    return line if len(line) <= FIRST_LINE_CHARS else line[:FIRST_LINE_CHARS - 1] + "…"

"""A call's raw artifacts and a drawing's render, as records."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Protocol


class Contents(Protocol):
    """A file's bytes, read when asked for (see load.contents)."""

    @property
    def size(self) -> int: ...

    def read(self) -> bytes: ...


@dataclass(frozen=True, slots=True)  # slots: one a call (or a file), 100,000s a build: 50-60 bytes each less
class Artifact:
    name: str  # as in the source folder, e.g. response.txt
    sha256: str
    content: bytes | Contents = field(repr=False)  # its bytes, or where to read them
    kind: str = "other"  # "response", "svg", "other"
    derived: str | None = None  # how the build made it, if it did
    redacted_from: str | None = None  # sha256 of the original, when --redact replaced a credential

    @property
    def data(self) -> bytes:
        content = self.content
        return content if isinstance(content, bytes) else content.read()

    @property
    def size(self) -> int:
        content = self.content
        return len(content) if isinstance(content, bytes) else content.size

    @property
    def published_name(self) -> str:
        """Content-addressed name. Anything that is not an image is published as text,
        so a browser never runs what a model wrote."""
        return f"{self.sha256}.txt"


@dataclass(frozen=True)
class Render:
    svg_sha256: str
    png: bytes | None
    png_sha256: str | None
    safe_svg: bytes | None  # sanitized copy shown through <img>
    safe_svg_sha256: str | None
    notes: tuple[str, ...]  # repairs made and reasons a render failed


@dataclass(frozen=True, slots=True)  # slots: one a call (or a file), 100,000s a build: 50-60 bytes each less
class CallArtifacts:
    call_id: str
    files: tuple[Artifact, ...]

    def first(self, kind: str) -> Artifact | None:
        for a in self.files:  # a loop, not next() over a generator: asked 300,000 times a build
            if a.kind == kind:
                return a
        return None


@dataclass(frozen=True)
class RenderSettings:
    renderer: str
    width: int
    max_height: int
    seconds: float
    viewport: tuple[float, float]

    def short(self) -> str:
        return f"{self.renderer}, {self.width} px wide"

    def describe(self) -> str:
        return (f"{self.renderer}, {self.width} px wide (at most {self.max_height} px tall), "
                f"white background, {self.seconds:g} s budget per file, external references refused")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

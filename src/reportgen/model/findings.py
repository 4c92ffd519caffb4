"""An audit finding: what the audit hands to claims and pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    file: str
    line: int
    field: str
    message: str
    services: tuple[str, ...] = ()  # claims about these services are weakened
    scope: Literal["services", "comparison", "verdict", "run"] = "services"
    id: str = ""
    block: str | None = None  # a finding inside one block weakens that block's claims, not others'
    # The calls it is about, in log order (pages link them; messages name a handful at most).
    calls: tuple[str, ...] = ()
    # What it says without its service, count or call ids: findings of one code and
    # summary are one line on a page, however many services and calls they cover.
    summary: str = ""

    @property
    def short(self) -> str:
        """What a findings line of the pages says, which names the services apart: the
        summary, else the message without its leading "<service>: " (it read "X: X: ...")."""
        if self.summary:
            return self.summary
        for service in self.services:
            if self.message.startswith(f"{service}: "):
                return self.message[len(service) + 2:]
        return self.message

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        field = f" {self.field}:" if self.field else ""
        return f"{where}: {self.severity} [{self.code}]{field} {self.message}"

    def to_json(self) -> dict:
        # ``calls`` and ``summary`` are for pages: the message already says what the finding is.
        return {"id": self.id, "code": self.code, "severity": self.severity, "file": self.file,
                "line": self.line, "field": self.field, "message": self.message,
                "services": list(self.services), "scope": self.scope, "block": self.block}


# Call ids a message names inline; a page lists the rest behind a link.
INLINE_IDS = 5


def some_ids(ids: tuple[str, ...] | list[str]) -> str:
    """A handful of call ids for a message: all of them when few, else the first few."""
    shown = ", ".join(ids[:INLINE_IDS])
    return shown if len(ids) <= INLINE_IDS else f"{shown}, … ({len(ids)} in all)"

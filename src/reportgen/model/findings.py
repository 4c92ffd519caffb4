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

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        field = f" {self.field}:" if self.field else ""
        return f"{where}: {self.severity} [{self.code}]{field} {self.message}"

    def to_json(self) -> dict:
        return {"id": self.id, "code": self.code, "severity": self.severity, "file": self.file,
                "line": self.line, "field": self.field, "message": self.message,
                "services": list(self.services), "scope": self.scope, "block": self.block}

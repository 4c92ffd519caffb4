"""Where in the run a group of claims lives, and the keys of the claims made there."""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.model.claim_keys import ClaimKey, Subject
from reportgen.model.measures import Measure


@dataclass(frozen=True)
class Scope:
    """Where in the run a group of claims lives: the whole run, a block or a slice."""

    run: str
    block: str | None = None
    slice: str | None = None
    where: str = ""  # how statements say it: " in block 2"

    def key(self, subject: Subject, measure: Measure, detail: str | None = None) -> ClaimKey:
        return ClaimKey(self.run, subject, measure, self.block, self.slice, detail)

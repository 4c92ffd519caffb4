"""Which audit findings weaken which claims: read from the claim's key, never its id."""

from __future__ import annotations

from reportgen.model.claim_keys import ClaimKey
from reportgen.model.findings import Finding
from reportgen.model.measures import Measure


def weakens(finding: Finding, key: ClaimKey) -> bool:
    """Does this finding weaken the claim with this key? A finding inside one block
    weakens that block's claims (and the run's), not another block's."""
    if key.block is not None and finding.block is not None and key.block != finding.block:
        return False
    if finding.scope == "run":
        return True
    if finding.scope == "verdict":
        return key.measure == Measure.VERDICT
    if finding.scope == "comparison":
        return key.is_comparison
    return any(s in finding.services for s in key.services)

"""Which audit findings weaken which claims."""

from __future__ import annotations

from reportgen.model.findings import Finding


def weakens(finding: Finding, claim_id: str, run_id: str) -> bool:
    """Does this finding weaken the claim with this id?"""
    rest = claim_id.removeprefix(f"{run_id}.")
    if rest.startswith("block-"):
        block, _, rest = rest.partition(".")
        if finding.block is not None and block != f"block-{finding.block}":
            return False
    head = rest.split(".", 1)[0]
    is_comparison = "_vs_" in head
    if finding.scope == "run":
        return True
    if finding.scope == "verdict":
        return rest.endswith(".verdict")
    if finding.scope == "comparison":
        return is_comparison
    sides = head.split("_vs_") if is_comparison else [head]
    return any(s in finding.services for s in sides)

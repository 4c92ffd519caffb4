"""The harness's own number beside the report's headline, for a run whose contract
records one (``[harness]``, written by ``import``): what each counts, in words."""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.model.calls import TRUE_WORDS_YES, Call
from reportgen.model.config import RunContract


@dataclass(frozen=True, slots=True)
class HarnessLine:
    """One service's "Inspect reports accuracy 0.62 (rule); this report counts P as a non-pass: ..."."""

    service: str
    harness: str  # e.g. "Inspect"
    metric: str  # the harness's aggregate, e.g. "accuracy"
    value: str  # its number as the log reports it (3 significant digits)
    how: str  # the scorer and the harness's rule
    report_rule: str  # what this report counts, ending before its headline number


def harness_lines(contract: RunContract, calls: tuple[Call, ...] | list[Call]) -> tuple[HarnessLine, ...]:
    """A line per service the contract's [harness] table reports a number for."""
    harness = contract.harness
    if harness is None:
        return ()
    partial = "partial credit (P)" if harness.name == "Inspect" else "partial credit"
    graded_partial = any(c.column("partial").lower() in TRUE_WORDS_YES for c in calls)
    if not contract.metric.scored:
        rule = (f"counts {partial} as a non-pass, as it does a technical failure" if graded_partial else
                "counts every planned call, a technical failure as a non-pass")
    elif contract.partial_credit is not None:
        rule = (f"scores {partial} as {contract.partial_credit:g} (run.partial_credit), a pass as 1 and any other "
                "grade as 0" + _failures(contract))
    else:
        rule = "takes the mean score" + _failures(contract)
    lines: list[HarnessLine] = []
    for service in contract.services:
        if service.id not in harness.values:
            continue
        scorer = harness.scorers.get(service.id)
        # The rules are said once, on the first line; the others name their scorer only.
        told = [f"scorer {scorer}"] if scorer else []
        how = "; ".join(told if lines else [*told, harness.rule])
        lines.append(HarnessLine(service.id, harness.name, harness.metric, f"{harness.values[service.id]:.3g}",
                                 how, "by the same rules" if lines else rule))
    return tuple(lines)


def _failures(contract: RunContract) -> str:
    if contract.failure_score is not None:
        return f"; a call without a complete return scores {contract.failure_score:g} (run.failure_score)"
    return "; a call without a complete return is left out of the mean"

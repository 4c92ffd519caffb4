"""Generate the demo report's planned experiment (content/experiments/planned-paired).

The contract and the schedule came first, from `reportgen plan` (see the head of its
run.toml): 39 pairs (tasks) in 3 blocks, every task run once by each service, the 78
calls randomised and interleaved within each block. This script is the harness's run:
it follows schedule.csv slot by slot, one call at a time, and writes calls.csv,
requests/ and artifacts/.

Outcomes (seeded): both services pass 21 tasks, neither passes 6, only the candidate
passes 10, only the baseline 2; the candidate's fix turns most of the baseline's
schema failures into passes.

One deliberate deviation, which the audit finds: in block 2 the operator restarted the
harness after slot 6, and the restarted queue ran slots 7 and 8 in swapped order (a
call of the other service first). Every call was made, in its block; only the order
differs from the schedule (one schedule-order warning).

Run from the project root:  python scripts/make_planned.py
The output is deterministic; commit what it writes.
"""

from __future__ import annotations

import csv
import random
from datetime import datetime, timedelta, timezone

from make_designs import EXPERIMENTS, Writer

RUN = "planned-paired"
MODELS = {"baseline": "gen-2026-10", "candidate": "gen-2026-11"}
BLOCK_START = {"1": datetime(2026, 10, 20, 9, 0, tzinfo=timezone.utc),
               "2": datetime(2026, 10, 20, 11, 30, tzinfo=timezone.utc),
               "3": datetime(2026, 10, 20, 14, 0, tzinfo=timezone.utc)}
SWAPPED = ("2", 7, 8)  # block, and the two slots the restarted queue ran in the other order
FAILURES = ["the answer does not parse as JSON (a trailing comma)", "a required field is missing",
            "a field does not match the reference", "the answer wraps the JSON in prose"]


def outcomes(pairs: list[str]) -> dict[str, tuple[bool, bool]]:
    """Each pair's (baseline passes, candidate passes)."""
    cells = [(True, True)] * 21 + [(False, False)] * 6 + [(False, True)] * 10 + [(True, False)] * 2
    rng = random.Random(20261020)
    rng.shuffle(cells)
    return dict(zip(pairs, cells))


def main() -> None:
    folder = EXPERIMENTS / RUN
    with (folder / "schedule.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    pairs = sorted({r["task"] for r in rows})
    passes = outcomes(pairs)
    order = {(r["block"], int(r["slot"])): r for r in rows}
    block, first, second = SWAPPED
    order[(block, first)], order[(block, second)] = order[(block, second)], order[(block, first)]
    rng = random.Random(19)
    w = Writer(RUN)
    clock = dict(BLOCK_START)
    for key in sorted(order, key=lambda k: (int(k[0]), k[1])):
        row = order[key]
        service, pair = row["service"], row["task"]
        passed = passes[pair][0 if service == "baseline" else 1]
        latency = rng.randint(6000, 28000)
        started = clock[row["block"]]
        clock[row["block"]] = started + timedelta(milliseconds=latency) + timedelta(seconds=rng.randint(20, 60))
        body = {"model": MODELS[service], "suite": "extract-39", "task": pair, "temperature": 0.7,
                "max_tokens": 2048}
        reason = "schema and every field match the reference" if passed else rng.choice(FAILURES)
        answer = '{"fields": "..."}' if passed else reason
        w.call(call_id=f"{service}-{pair}", service=service, group="official-api", model=MODELS[service],
               block=row["block"], started=started, body=body, latency_ms=latency, passed=passed,
               response=f"[{service}] Extraction for {pair}: {answer}\n", grade_reason=reason, pair_id=pair)
    w.write()


if __name__ == "__main__":
    main()

"""The demo's planned experiment (planned-paired): its contract and schedule are what
`reportgen plan` wrote, its log follows the schedule but for one deliberate deviation,
and the audit finds exactly that one."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest

from conftest import DEMO
from reportgen.audit.stage import audit_source
from reportgen.load.source import load_source
from reportgen.plan import PlanRequest, make_plan
from reportgen.plan.schedule import make_schedule, schedule_csv, schedule_digest, units_of
from reportgen.plan.skeleton import plan_table, service_ids

RUN = "planned-paired"
# The command recorded at the head of its run.toml.
REQUEST = PlanRequest("paired", 0.25, discordant_rate=0.3, blocks=3, seed=20261019)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """The planned experiment alone, as a source of its own."""
    root = tmp_path / "source"
    shutil.copytree(DEMO / "experiments" / RUN, root / "experiments" / RUN)
    (root / "reportgen.toml").write_text('title = "Planned"\nversion = "v1"\n', encoding="utf-8")
    return root


def findings(source: Path) -> list[tuple[str, str]]:
    return sorted((f.code, f.scope) for a in audit_source(load_source(source)) for f in a.findings)


def test_the_contract_and_schedule_are_what_the_plan_wrote(source: Path) -> None:
    plan = make_plan(REQUEST)
    contract = load_source(source).runs[0].contract
    assert contract.plan is not None and contract.schedule is not None
    rows = make_schedule(service_ids(plan), units_of("paired", plan.size, 1), REQUEST.blocks, REQUEST.seed)
    data = schedule_csv(rows)
    assert contract.schedule.data == data
    assert contract.plan.schedule_sha256 == contract.schedule.sha256 == schedule_digest(data)
    assert dict(contract.plan.raw) == plan_table(plan, REQUEST.seed, schedule_digest(data))
    assert contract.planned_calls == {"baseline": plan.size, "candidate": plan.size}
    assert contract.min_useful_effect == REQUEST.min_useful_effect


def test_the_audit_finds_exactly_the_one_deviation(source: Path) -> None:
    assert findings(source) == [("schedule-order", "comparison")]


def test_undoing_the_deviation_leaves_no_finding(source: Path) -> None:
    log = source / "experiments" / RUN / "calls.csv"
    with log.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    schedule = source / "experiments" / RUN / "schedule.csv"
    with schedule.open(encoding="utf-8") as handle:
        slots = [r for r in csv.DictReader(handle)]
    ran = [(r["block_id"], r["service"], r["pair_id"]) for r in rows]
    planned = [(s["block"], s["service"], s["task"]) for s in slots]
    differ = [i for i, (a, b) in enumerate(zip(ran, planned)) if a != b]
    assert len(ran) == len(planned) and sorted(ran) == sorted(planned)
    # Two calls, next to each other, in swapped order: the only difference from the schedule.
    assert len(differ) == 2 and differ[1] == differ[0] + 1 and ran[differ[0]] == planned[differ[1]]
    i, j = differ
    rows[i]["started_at"], rows[j]["started_at"] = rows[j]["started_at"], rows[i]["started_at"]
    rows[i], rows[j] = rows[j], rows[i]
    with log.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    assert findings(source) == []


@pytest.mark.slow
def test_the_page_shows_the_plan_and_the_deviation_beside_the_claims(demo_site: Path) -> None:
    page = (demo_site / "experiments" / RUN / "index.html").read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "Planned for 80% power to detect 25 points with 30% discordant pairs (exact McNemar test" in text
    assert re.search(r"At the observed share of discordant pairs, 30\.8% \(12 of 39 pairs\), the same 39 pairs "
                     r"detect a difference of \d+(\.\d)? points in either direction", text)
    assert "not “post-hoc power”" in text and "schedule.csv, seed 20261019" in text
    assert "schedule-order" in text and "in block 2 the services ran in another order than scheduled" in text
    # The warning is marked beside the comparison's claims, as the other protocol checks are.
    claims = page[page.index("Mean difference"):page.index("Sample size and sensitivity")]
    assert "⚠" in claims

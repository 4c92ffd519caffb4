"""The log held to the registered schedule (``schedule.csv``), when there is one.

Each first submission of the formal run is matched to a scheduled call by service, task
(or pair) and repetition, as far as the log records them. Four kinds of deviation, one
finding each, all warnings shown beside the comparison they weaken:

- ``schedule-missing``: scheduled calls with no call in the log;
- ``schedule-extra``: calls in the log the schedule does not have;
- ``schedule-block-size``: calls run in another block than scheduled, so the blocks'
  sizes differ from the schedule's (a call that is only missing is not counted here);
- ``schedule-order``: within a block that holds exactly its scheduled calls, the
  services ran (by ``started_at``, then log line) in another order than the slots.

A schedule whose hash differs from the one the ``[plan]`` table registered is
``schedule-changed``; a registered schedule that is not there, ``schedule-absent``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from reportgen.model.calls import Call
from reportgen.model.findings import Finding
from reportgen.model.plan import Schedule, ScheduledCall
from reportgen.model.source import ValidatedRun
from reportgen.model.numbers import counted

Key = tuple[str, str, str]  # service, task, repetition (blank when the log does not record it)
SHOWN = 3


def _rep(text: str) -> str:
    text = text.strip()
    return str(int(text)) if text.isdigit() else text


def _task(call: Call) -> str:
    return call.column("task_id") or call.column("pair_id")


def schedule_findings(run: ValidatedRun, _: object = None) -> Iterable[Finding]:
    schedule, plan = run.contract.schedule, run.contract.plan
    if schedule is None:
        if plan is not None and plan.schedule_sha256:
            yield Finding("schedule-absent", "warning", f"{run.rel_folder}/run.toml",
                          run.contract.line_of("schedule_sha256", "[plan]"), "plan.schedule_sha256",
                          "the plan registered a schedule, but there is no schedule.csv beside the contract: "
                          "the order the calls were to follow cannot be checked", scope="comparison")
        return
    if plan is not None and plan.schedule_sha256 and plan.schedule_sha256 != schedule.sha256:
        yield Finding("schedule-changed", "warning", schedule.file, 0, "",
                      f"schedule.csv ({schedule.sha256[:19]}…) is not the schedule the plan registered "
                      f"({plan.schedule_sha256[:19]}…): it was changed after the plan was made", scope="comparison")
    calls = sorted((c for c in run.calls if c.first_submission), key=lambda c: (c.started_at, c.line))
    use_task = any(_task(c) for c in calls)
    use_rep = any(c.column("repetition") for c in calls)

    def key_of_row(row: ScheduledCall) -> Key:
        return row.service, row.task if use_task else "", _rep(row.repetition) if use_rep else ""

    def key_of_call(call: Call) -> Key:
        return call.service, _task(call) if use_task else "", _rep(call.column("repetition")) if use_rep else ""

    planned: dict[Key, Counter[str]] = defaultdict(Counter)
    for row in schedule.rows:
        planned[key_of_row(row)][row.block] += 1
    ran: dict[Key, Counter[str]] = defaultdict(Counter)
    by_block: dict[str, list[Call]] = defaultdict(list)
    for call in calls:
        ran[key_of_call(call)][call.block_id] += 1
        by_block[call.block_id].append(call)
    yield from _counts(run, schedule, planned, ran, calls, key_of_call, key_of_row)
    yield from _order(run, schedule, planned, ran, by_block)


def _counts(run: ValidatedRun, schedule: Schedule, planned: dict[Key, Counter[str]], ran: dict[Key, Counter[str]],
            calls: list[Call], key_of_call: Callable[[Call], Key],
            key_of_row: Callable[[ScheduledCall], Key]) -> Iterable[Finding]:
    missing = extra = moved = 0
    short: set[tuple[Key, str]] = set()  # (key, block) where the log has fewer calls than scheduled
    extra_keys: set[Key] = set()
    for key in set(planned) | set(ran):
        p, r = planned.get(key, Counter()), ran.get(key, Counter())
        surplus = sum(max(0, r[b] - p[b]) for b in set(p) | set(r))
        deficit = sum(max(0, p[b] - r[b]) for b in set(p) | set(r))
        shifted = min(surplus, deficit)
        moved += shifted
        if deficit > shifted:
            missing += deficit - shifted
            short.update((key, b) for b in p if p[b] > r[b])
        if surplus > shifted:
            extra += surplus - shifted
            extra_keys.add(key)
    missing_rows = [row for row in schedule.rows if (key_of_row(row), row.block) in short]
    if missing:
        first = sorted(missing_rows, key=lambda r: r.line)[:SHOWN]
        shown = "; ".join(f"block {r.block} slot {r.slot}: {r.service}" for r in first)
        yield Finding("schedule-missing", "warning", schedule.file, 0, "",
                      f"{counted(missing, 'scheduled call')} {'is' if missing == 1 else 'are'} not in the log "
                      f"(for example {shown}): dropped calls or a run stopped early",
                      tuple(sorted({r.service for r in missing_rows})), scope="comparison")
    if extra:
        examples = [c for c in calls if key_of_call(c) in extra_keys][:SHOWN]
        yield Finding("schedule-extra", "warning", run.log.file, examples[0].line if examples else 0, "",
                      f"{counted(extra, 'call')} of the log {'is' if extra == 1 else 'are'} not in the schedule "
                      f"(for example {', '.join(c.call_id for c in examples)}): calls added to the plan",
                      tuple(sorted({k[0] for k in extra_keys})), scope="comparison")
    if moved:
        sizes = _block_sizes(planned, ran)
        yield Finding("schedule-block-size", "warning", run.log.file, 0, "block_id",
                      f"{counted(moved, 'call')} ran in another block than scheduled, so the blocks' sizes "
                      f"differ from the schedule ({sizes}); a block is a time window, and a service's calls moved "
                      "between windows are no longer balanced against the other services", scope="comparison")


def _block_sizes(planned: dict[Key, Counter[str]], ran: dict[Key, Counter[str]]) -> str:
    p_total: Counter[str] = Counter()
    r_total: Counter[str] = Counter()
    for counts in planned.values():
        p_total.update(counts)
    for counts in ran.values():
        r_total.update(counts)
    differ = [b for b in sorted(set(p_total) | set(r_total)) if p_total[b] != r_total[b]]
    shown = [f"block {b}: {p_total[b]} scheduled, {r_total[b]} run" for b in differ[:4]]
    return "; ".join(shown) or "the same totals per block, another mix of services"


def _order(run: ValidatedRun, schedule: Schedule, planned: dict[Key, Counter[str]], ran: dict[Key, Counter[str]],
           by_block: dict[str, list[Call]]) -> Iterable[Finding]:
    slots: dict[str, list[ScheduledCall]] = defaultdict(list)
    for row in schedule.rows:
        slots[row.block].append(row)
    # Each block's calls by key, scheduled and run (one pass over each, not one per block).
    planned_in: dict[str, Counter[Key]] = defaultdict(Counter)
    ran_in: dict[str, Counter[Key]] = defaultdict(Counter)
    for table, into in ((planned, planned_in), (ran, ran_in)):
        for key, counts in table.items():
            for block, n in counts.items():
                into[block][key] += n
    differ = []
    for block, rows in sorted(slots.items()):
        if planned_in[block] != ran_in[block]:
            continue  # a block with calls missing, added or moved has its own finding
        expected = [r.service for r in sorted(rows, key=lambda r: r.slot)]
        got = [c.service for c in by_block.get(block, [])]
        if got != expected:
            at = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
            differ.append((block, at, got[at], expected[at], by_block[block][at]))
    if differ:
        block, at, ran_service, scheduled, call = differ[0]
        where = f"in block {block}" if len(differ) == 1 else \
            f"in {len(differ)} blocks ({', '.join(d[0] for d in differ)})"
        yield Finding("schedule-order", "warning", run.log.file, call.line, "started_at",
                      f"{where} the services ran in another order than scheduled "
                      f"({'' if len(differ) == 1 else f'block {block}, '}call {at + 1}: {ran_service} ran where the "
                      f"schedule has {scheduled}); "
                      "the order was "
                      "randomised to keep time effects out of the comparison", scope="comparison", block=None)

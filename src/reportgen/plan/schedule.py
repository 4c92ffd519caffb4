"""The registered order of a run: ``schedule.csv`` (block, slot, service, task,
repetition), randomised and interleaved within each block from a recorded seed.

Every service runs the same units (a task and a repetition; a pair in the paired design)
in the same block, so blocks are balanced by construction. Within a block the calls of
all services are shuffled together (NumPy's PCG64 generator seeded with the recorded
seed, one draw per block in order); a shuffle in which every service would run as one
uninterrupted stretch is drawn again, since the audit reads that as not interleaved.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SCHEDULE_COLUMNS = ("block", "slot", "service", "task", "repetition")


@dataclass(frozen=True)
class ScheduleRow:
    block: str
    slot: int
    service: str
    task: str
    repetition: int


def units_of(design: str, size: int, repetitions: int, task: str = "task-1") -> list[tuple[str, int]]:
    """The (task, repetition) units each service runs: the n calls of one task, the n
    pairs of the paired design, or tasks × repetitions (repetition-major, so every
    block holds whole rounds of tasks when it can)."""
    width = len(str(size))
    if design == "paired":
        return [(f"pair-{i:0{width}d}", 1) for i in range(1, size + 1)]
    if design == "repeated":
        return [(f"task-{t:0{width}d}", r) for r in range(1, repetitions + 1) for t in range(1, size + 1)]
    return [(task, i) for i in range(1, size + 1)]


def make_schedule(services: Sequence[str], units: Sequence[tuple[str, int]], blocks: int,
                  seed: int) -> tuple[ScheduleRow, ...]:
    """Units split into ``blocks`` equal consecutive parts (their count must divide), every
    service running each unit of its block, shuffled within the block."""
    if len(units) % blocks:
        raise ValueError(f"{len(units)} units do not split into {blocks} equal blocks")
    rng = np.random.default_rng(seed)
    per_block = len(units) // blocks
    rows: list[ScheduleRow] = []
    for b in range(blocks):
        entries = [(s, u) for u in units[b * per_block:(b + 1) * per_block] for s in services]
        order = _interleaved(rng, [s for s, _ in entries], len(services))
        rows += [ScheduleRow(str(b + 1), slot, entries[i][0], entries[i][1][0], entries[i][1][1])
                 for slot, i in enumerate(order, 1)]
    return tuple(rows)


def _interleaved(rng: np.random.Generator, services: list[str], n_services: int) -> list[int]:
    while True:
        order = [int(i) for i in rng.permutation(len(services))]
        runs = 1 + sum(1 for a, b in zip(order, order[1:]) if services[a] != services[b])
        if n_services < 2 or len(services) < 2 * n_services or runs > n_services:
            return order


def schedule_csv(rows: Sequence[ScheduleRow]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SCHEDULE_COLUMNS)
    for r in rows:
        writer.writerow((r.block, r.slot, r.service, r.task, r.repetition))
    return out.getvalue().encode("utf-8")


def schedule_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()

"""A registered plan (the contract's ``[plan]`` table) and schedule (``schedule.csv``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class RegisteredPlan:
    """What the report needs of a plan to state the design's sensitivity; ``raw`` keeps
    every key as written."""

    design: str
    metric: str
    test: str
    method: str
    alpha: float
    alpha_per_comparison: float
    power: float  # the power wanted
    achieved_power: float | None
    size: int
    calls_per_service: int
    baseline_rate: float | None
    min_useful_effect: float | None
    discordant_rate: float | None
    sd: float | None
    schedule_seed: int | None
    schedule_sha256: str | None
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class ScheduledCall:
    line: int  # in schedule.csv
    block: str
    slot: int
    service: str
    task: str
    repetition: str


@dataclass(frozen=True)
class Schedule:
    file: str  # relative to the source folder, for messages
    rows: tuple[ScheduledCall, ...]
    sha256: str  # "sha256:<hex>" of the file's bytes
    data: bytes  # published beside the contract

"""Generate the demo report's paired, repeated and longitudinal experiments.

- seeds-paired: five seeds, a numeric score per seed, differences 0.4, 0.3, 0.1, 0.5,
  0.1 points (the source article's paired example).
- tasks-paired: 200 tasks; only the candidate passes 34, only the current model 26,
  both 90, neither 50 (the source article's paired pass/fail example), with a few
  technical failures among the non-passes and three task slices.
- prompt-repeated: 12 tasks of very different difficulty, 5 repetitions per prompt.
- relay-weekly: the official API and two relays, 25 calls each per week for four
  weeks; relay-b gets worse in the last week; technical failures are retried once.

Each run.toml is written by hand (the contract comes first); this script writes only
the run's output: calls.csv, requests/ and artifacts/. Run from the project root:
    python scripts/make_designs.py
The output is deterministic; commit what it writes.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = ROOT / "content" / "experiments"
UTC = timezone.utc


def canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class Writer:
    """Collects one experiment's rows, requests and artifacts, then writes them."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self.folder = EXPERIMENTS / run_id
        self.rows: list[dict[str, str]] = []
        for generated in ("requests", "artifacts"):
            shutil.rmtree(self.folder / generated, ignore_errors=True)
        (self.folder / "requests").mkdir(parents=True)
        (self.folder / "artifacts").mkdir()

    def request(self, body: dict) -> str:
        digest = hashlib.sha256(canonical(body)).hexdigest()
        (self.folder / "requests" / f"{digest}.json").write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
        return f"sha256:{digest}"

    def call(self, *, call_id: str, service: str, group: str, model: str, block: str, started: datetime,
             body: dict, status: str = "ok", latency_ms: int, passed: bool | None, response: str | None,
             grade_reason: str = "", **extra: str) -> None:
        row = {
            "run_id": self.run_id, "block_id": block, "service": service, "service_group": group,
            "requested_model": model, "returned_model": model if status == "ok" else "",
            "started_at": started.isoformat(timespec="seconds"), "request_hash": self.request(body),
            "status": status, "finish_reason": "stop" if status == "ok" else "",
            "latency_ms": str(latency_ms), "qualified": "" if passed is None else str(passed).lower(),
            "failure_reason": "" if status == "ok" else STATUS_REASONS[status],
            "artifact_path": "", "call_id": call_id, "grade_reason": grade_reason,
        }
        row.update(extra)
        if response is not None:
            folder = self.folder / "artifacts" / call_id
            folder.mkdir()
            (folder / "response.txt").write_text(response, encoding="utf-8")
            row["artifact_path"] = f"artifacts/{call_id}"
        self.rows.append(row)

    def write(self) -> None:
        self.rows.sort(key=lambda r: (r["started_at"], r["call_id"]))
        columns = list(dict.fromkeys(k for r in self.rows for k in r))
        with (self.folder / "calls.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n", restval="")
            writer.writeheader()
            writer.writerows(self.rows)


STATUS_REASONS = {"timeout": "no response within the timeout", "api_error": "HTTP 529: overloaded",
                  "stream_cut": "the stream ended before the answer was complete"}


def seeds_paired() -> None:
    w = Writer("seeds-paired")
    models = {"current": "qa-base-2026-08", "tuned": "qa-tuned-2026-10"}
    groups = {"current": "production", "tuned": "candidate"}
    base = [71.3, 70.8, 72.1, 71.6, 70.9]
    gain = [0.4, 0.3, 0.1, 0.5, 0.1]
    t = datetime(2026, 10, 6, 8, 0, tzinfo=UTC)
    for seed, (score_a, d) in enumerate(zip(base, gain), 1):
        for service, score in (("current", score_a), ("tuned", round(score_a + d, 1))):
            body = {"model": models[service], "eval": "heldout-accuracy", "version": 3, "seed": seed}
            w.call(call_id=f"{service}-seed{seed}", service=service, group=groups[service], model=models[service],
                   block="1", started=t, body=body, latency_ms=2_040_000, passed=True,
                   response=f"split-eval 2.1.0, seed {seed}: {round(score * 20)} of 2000 items right "
                   f"(accuracy {score:.1f}%)\n", grade_reason="evaluation completed",
                   pair_id=f"seed-{seed}", seed=str(seed), score=f"{score:.1f}")
            t += timedelta(minutes=40)
    w.write()


def tasks_paired() -> None:
    w = Writer("tasks-paired")
    rng = random.Random(20261012)
    cells = ["only_candidate"] * 34 + ["only_current"] * 26 + ["both"] * 90 + ["neither"] * 50
    rng.shuffle(cells)
    models = {"current": "gen-2026-08", "candidate": "gen-2026-10"}
    # Some non-passes are technical failures: they count as non-passes, the pair is kept.
    failures = {"current": ["timeout", "api_error", "timeout"], "candidate": ["timeout", "stream_cut"]}
    for index, cell in enumerate(cells):
        task = f"t{index + 1:03d}"
        block = str(index // 50 + 1)
        category = "geometry" if index < 80 else "text" if index < 150 else "charts"
        start = datetime(2026, 10, 12, 8, 0, tzinfo=UTC) + timedelta(seconds=210 * index)
        order = ["current", "candidate"]
        rng.shuffle(order)
        for position, service in enumerate(order):
            passed = cell == "both" or cell == f"only_{service}"
            status = "ok"
            if not passed and failures[service] and rng.random() < 0.08:
                status = failures[service].pop()
            body = {"model": models[service], "task": task, "suite": "taskbench-200", "temperature": 0.7}
            w.call(call_id=f"{service}-{task}", service=service, group="official-api", model=models[service],
                   block=block, started=start + timedelta(seconds=95 * position), body=body, status=status,
                   latency_ms=rng.randint(4000, 30000) if status == "ok" else 90000,
                   passed=passed if status == "ok" else None,
                   response=f"[{service}] Answer to task {task} ({category}).\n" if status == "ok" else None,
                   grade_reason=("every rubric check met" if passed else "a rubric check failed") if status == "ok" else "",
                   task_id=task, pair_id=task, slice=category)
    w.write()


def prompt_repeated() -> None:
    w = Writer("prompt-repeated")
    rng = random.Random(20261015)
    # Tasks differ far more than repetitions do: that is why rows are not independent.
    difficulty = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98]
    lift = {"prompt-v1": 0.0, "prompt-v2": 0.12}
    for rep in range(1, 6):
        start = datetime(2026, 10, 15, 8 + 2 * (rep - 1), 0, tzinfo=UTC)
        jobs = [(task, service) for task in range(12) for service in lift]
        rng.shuffle(jobs)
        for position, (task, service) in enumerate(jobs):
            task_id = f"task-{task + 1:02d}"
            passed = rng.random() < min(0.99, difficulty[task] + lift[service])
            body = {"model": "gen-2026-10", "system": service.removeprefix("prompt-"), "task": task_id}
            w.call(call_id=f"{service}-{task_id}-r{rep}", service=service, group="official-api",
                   model="gen-2026-10", block=str(rep), started=start + timedelta(minutes=4 * position),
                   body=body, latency_ms=rng.randint(3000, 20000), passed=passed,
                   response=f"[{service}] Answer to {task_id}, repetition {rep}.\n",
                   grade_reason="every rubric check met" if passed else "a rubric check failed",
                   task_id=task_id, repetition=str(rep))
    w.write()


def relay_weekly() -> None:
    w = Writer("relay-weekly")
    rng = random.Random(20261005)
    groups = {"official": "official-api", "relay-a": "relay", "relay-b": "relay"}
    rates = {"official": [0.80, 0.78, 0.82, 0.80], "relay-a": [0.78, 0.80, 0.76, 0.78],
             "relay-b": [0.80, 0.80, 0.76, 0.44]}
    fail_rate = {"official": 0.02, "relay-a": 0.06, "relay-b": 0.08}
    body = {"model": "pelican-large-2026-09", "messages": [
        {"role": "user", "content": "Generate an SVG of a pelican riding a bicycle"}], "max_tokens": 4096}
    for week, block in enumerate(["W41", "W42", "W43", "W44"]):
        start = datetime(2026, 10, 5, 8, 0, tzinfo=UTC) + timedelta(days=7 * week)
        jobs = [s for s in rates for _ in range(25)]
        rng.shuffle(jobs)
        t = start
        count = {s: 0 for s in rates}
        for service in jobs:
            count[service] += 1
            call_id = f"{service}-{block}-{count[service]:02d}"
            for attempt in (1, 2):
                t += timedelta(seconds=rng.randint(40, 80))
                failed = rng.random() < fail_rate[service]
                status = "timeout" if failed else "ok"
                passed = None if failed else rng.random() < rates[service][week]
                w.call(call_id=call_id if attempt == 1 else f"{call_id}-retry", service=service,
                       group=groups[service], model="pelican-large-2026-09", block=block, started=t,
                       body=body, status=status, latency_ms=60000 if failed else rng.randint(15000, 45000),
                       passed=passed, response=None if failed else f"[{call_id}, attempt {attempt}] Here is the pelican.\n",
                       grade_reason="" if failed else "pelican on a bicycle" if passed else "no recognisable bicycle",
                       attempt=str(attempt))
                t += timedelta(seconds=60 if failed else 30)
                if not failed:
                    break
    w.write()


if __name__ == "__main__":
    seeds_paired()
    tasks_paired()
    prompt_repeated()
    relay_weekly()

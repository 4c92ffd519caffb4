"""Which calls are graded, under which opaque item ids: ``grades/key.csv`` and
``grades/sample.json``, written by the first ``reportgen grade`` of an experiment and
reused by every later one, so that every grader grades the same items.

Item ids are 12 lowercase hex characters drawn from ``random.Random(seed)``: never
derived from the call id, the service or any hash of them. A sample (``--sample N``) is
drawn per service in proportion to its calls (largest remainders), with the same seed.
"""

from __future__ import annotations

import csv
import io
import json
import random
import secrets
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from reportgen.grading.errors import GradingError
from reportgen.grading.experiment import Experiment
from reportgen.grading.files import write_durable
from reportgen.model.calls import Call
from reportgen.model.grading import ITEM_ID_HEX, KEY_HEADER



@dataclass(frozen=True)
class ItemSet:
    """The items of an experiment: item id -> call id (the key), and how they were drawn."""

    key: dict[str, str]  # in key.csv order (sorted by item id)
    seed: int
    sample: int | None
    created_at: str
    created: bool = False  # written by this call (the first grade of the experiment)

    @property
    def items(self) -> list[str]:
        return sorted(self.key)


def stratified_sample(calls: list[Call], size: int, rng: random.Random) -> list[Call]:
    """``size`` calls drawn without replacement, each service's share in proportion to its
    calls (the largest remainders get the calls left over; ties by service id)."""
    by_service: dict[str, list[Call]] = {}
    for call in calls:
        by_service.setdefault(call.service, []).append(call)
    services = sorted(by_service)
    exact = {s: size * len(by_service[s]) / len(calls) for s in services}
    quota = {s: int(exact[s]) for s in services}
    left = size - sum(quota.values())
    for s in sorted(services, key=lambda s: (-(exact[s] - quota[s]), s))[:left]:
        quota[s] += 1
    chosen: list[Call] = []
    for s in services:
        chosen += rng.sample(by_service[s], quota[s])
    return chosen


def draw_items(calls: list[Call], sample: int | None, seed: int) -> dict[str, str]:
    """Item id -> call id for ``calls`` (or a stratified sample of them), from ``seed`` alone."""
    rng = random.Random(seed)
    chosen = calls if sample is None else stratified_sample(calls, sample, rng)
    key: dict[str, str] = {}
    for call in chosen:
        item = f"{rng.getrandbits(4 * ITEM_ID_HEX):0{ITEM_ID_HEX}x}"
        while item in key:
            item = f"{rng.getrandbits(4 * ITEM_ID_HEX):0{ITEM_ID_HEX}x}"
        key[item] = call.call_id
    return dict(sorted(key.items()))


def item_set(experiment: Experiment, sample: int | None, seed: int | None, now: datetime | None = None) -> ItemSet:
    """The experiment's items: read from grades/ when there (a conflicting ``sample`` or
    ``seed`` is refused), else drawn and written there."""
    folder = experiment.grades_folder
    if (folder / "key.csv").exists() and not (folder / "sample.json").exists() and not _any_grades(folder):
        (folder / "key.csv").unlink()  # the first grade command ended between the two files: draw again
    if (folder / "key.csv").exists() or (folder / "sample.json").exists():
        found = read_items(experiment)
        _check_same(experiment, found, sample, seed)
        return found
    gradable = experiment.gradable()
    if sample is not None and not 1 <= sample <= len(gradable):
        raise GradingError("--sample", 0, "sample", f"{sample} items asked for, but {len(gradable)} calls "
                           f"of {experiment.name} returned an output to grade: choose 1 to {len(gradable)}")
    seed = secrets.randbelow(2**31) if seed is None else seed
    key = draw_items(gradable, sample, seed)
    created = (now or datetime.now().astimezone()).isoformat(timespec="seconds")
    folder.mkdir(exist_ok=True)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(KEY_HEADER)
    writer.writerows(key.items())
    # key.csv first: sample.json is the sign that the item set is complete.
    write_durable(folder / "key.csv", buffer.getvalue().encode("utf-8"))
    record = {"seed": seed, "sample": sample, "stratified_by": "service" if sample is not None else None,
              "items": len(key), "created_at": created}
    write_durable(folder / "sample.json", (json.dumps(record, indent=2) + "\n").encode("utf-8"))
    return ItemSet(key, seed, sample, created, created=True)


def _any_grades(folder: Path) -> bool:
    return any(path.name != "key.csv" for path in folder.glob("*.csv"))


def _check_same(experiment: Experiment, found: ItemSet, sample: int | None, seed: int | None) -> None:
    where = f"{experiment.rel_grades}/sample.json"
    if sample is not None and sample != found.sample:
        was = "every call" if found.sample is None else f"--sample {found.sample}"
        raise GradingError(where, 0, "sample", f"the items were drawn with {was}, not --sample {sample}: "
                           "every grader grades the same items (leave out --sample to grade them)")
    if seed is not None and seed != found.seed:
        raise GradingError(where, 0, "seed", f"the items were drawn with --seed {found.seed}, not --seed {seed}: "
                           "every grader grades the same items (leave out --seed to grade them)")


def read_items(experiment: Experiment) -> ItemSet:
    """key.csv and sample.json as written by an earlier ``reportgen grade``; one-line errors."""
    folder, rel = experiment.grades_folder, experiment.rel_grades
    record = _read_sample(folder / "sample.json", f"{rel}/sample.json")
    key = _read_key(folder / "key.csv", f"{rel}/key.csv", {c.call_id for c in experiment.calls})
    if record["items"] != len(key):
        raise GradingError(f"{rel}/sample.json", 0, "items", f"says {record['items']} items, but key.csv "
                           f"holds {len(key)}")
    return ItemSet(key, record["seed"], record["sample"], record["created_at"])


def _read_sample(path: Path, rel: str) -> dict:
    try:
        record = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise GradingError(rel, 0, "", "missing beside key.csv: the item set is incomplete; remove key.csv "
                           "if no one has graded yet") from None
    except (OSError, ValueError) as exc:
        raise GradingError(rel, 0, "", f"not readable as JSON ({exc})") from None
    if not isinstance(record, dict):
        raise GradingError(rel, 0, "", "not a JSON object")
    for name, kinds in (("seed", (int,)), ("sample", (int, type(None))), ("items", (int,)), ("created_at", (str,))):
        if not isinstance(record.get(name), kinds) or isinstance(record.get(name), bool):
            raise GradingError(rel, 0, name, f"missing or of the wrong type ({record.get(name)!r})")
    return record


def _read_key(path: Path, rel: str, call_ids: set[str]) -> dict[str, str]:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise GradingError(rel, 0, "", "missing beside sample.json: the item set is incomplete") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GradingError(rel, 0, "", f"not readable ({exc})") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or tuple(rows[0]) != KEY_HEADER:
        raise GradingError(rel, 1, "", f"the header must be {','.join(KEY_HEADER)}")
    key: dict[str, str] = {}
    for line, row in enumerate(rows[1:], 2):
        if len(row) != 2:
            raise GradingError(rel, line, "", f"{len(row)} fields; expected 2 (item,call_id)")
        item, call_id = row
        if len(item) != ITEM_ID_HEX or any(c not in "0123456789abcdef" for c in item):
            raise GradingError(rel, line, "item", f"{item!r} is not an item id (12 lowercase hex characters)")
        if item in key:
            raise GradingError(rel, line, "item", f"{item} is listed twice")
        if call_id not in call_ids:
            raise GradingError(rel, line, "call_id", f"{call_id!r} is not a call of the log")
        key[item] = call_id
    if not key:
        raise GradingError(rel, 1, "", "no items")
    return key

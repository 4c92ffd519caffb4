"""Each grader's own order of the items: shuffled from a seed derived from the sample
seed and the grader's name (so two graders see different orders, and neither follows
the log), recorded in ``grades/<grader>.order.json`` with a hash of the order."""

from __future__ import annotations

import hashlib
import json
import random

from reportgen.grading.errors import GradingError
from reportgen.grading.experiment import Experiment
from reportgen.grading.files import write_durable
from reportgen.grading.items import ItemSet


def grader_seed(sample_seed: int, grader: str) -> int:
    """A seed for ``grader`` alone: the sample seed and the grader's name, hashed."""
    digest = hashlib.sha256(f"reportgen.grade-order\x1f{sample_seed}\x1f{grader}".encode("utf-8")).digest()
    return int.from_bytes(digest[:6], "big")


def shuffled(items: list[str], seed: int) -> list[str]:
    order = sorted(items)
    random.Random(seed).shuffle(order)
    return order


def order_sha256(order: list[str]) -> str:
    return hashlib.sha256("\n".join(order).encode("ascii")).hexdigest()


def grader_order(experiment: Experiment, items: ItemSet, grader: str) -> list[str]:
    """``grader``'s order of the items, written to grades/<grader>.order.json the first
    time and checked against it afterwards."""
    seed = grader_seed(items.seed, grader)
    order = shuffled(items.items, seed)
    digest = order_sha256(order)
    path = experiment.grades_folder / f"{grader}.order.json"
    rel = f"{experiment.rel_grades}/{grader}.order.json"
    if path.exists():
        try:
            record = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise GradingError(rel, 0, "", f"not readable as JSON ({exc})") from None
        if not isinstance(record, dict) or record.get("seed") != seed or record.get("order_sha256") != digest:
            raise GradingError(rel, 0, "order_sha256", "does not match the order drawn from sample.json's seed "
                               "and this grader's name: key.csv or sample.json changed after grading began")
        return order
    record = {"grader": grader, "seed": seed, "order_sha256": digest}
    write_durable(path, (json.dumps(record, indent=2) + "\n").encode("utf-8"))
    return order

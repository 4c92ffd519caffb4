"""A small source for the grading tests: the demo's pelican A/B experiment (40 calls, 36
with a drawing), copied into a temporary folder, optionally with its services renamed to
names that cannot occur in a page by chance."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PELICAN = ROOT / "content" / "experiments" / "pelican-ab"
RENAMED = {"A": "svc-alpha-official", "B": "svc-bravo-relay"}


def pelican_source(tmp_path: Path, rename: bool = False) -> Path:
    source = tmp_path / "src"
    shutil.copytree(PELICAN, source / "experiments" / "pelican-ab")
    (source / "reportgen.toml").write_text('title = "t"\nversion = "v1"\n', encoding="utf-8")
    if rename:
        _rename_services(source / "experiments" / "pelican-ab")
    return source


def _rename_services(folder: Path) -> None:
    contract = folder / "run.toml"
    text = contract.read_text(encoding="utf-8")
    for old, new in RENAMED.items():
        text = text.replace(f'id = "{old}"', f'id = "{new}"')
    text = text.replace('baseline = "A"', f'baseline = "{RENAMED["A"]}"')
    text = text.replace('candidates = ["B"]', f'candidates = ["{RENAMED["B"]}"]')
    contract.write_text(text, encoding="utf-8")
    log = folder / "calls.csv"
    with log.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["service"] = RENAMED[row["service"]]
    with log.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def call_rows(source: Path) -> list[dict[str, str]]:
    with (source / "experiments" / "pelican-ab" / "calls.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def identifying_strings(source: Path) -> set[str]:
    """Everything that would identify a call or its service, as written in the log and the
    artifact folders: call ids, services, groups, models, artifact paths and file names,
    request hashes."""
    found: set[str] = set()
    folder = source / "experiments" / "pelican-ab"
    for row in call_rows(source):
        for column in ("call_id", "service_group", "requested_model", "returned_model", "artifact_path"):
            if row[column]:
                found.add(row[column])
        found.add(row["request_hash"].removeprefix("sha256:"))
        if len(row["service"]) > 1:
            found.add(row["service"])
    for path in (folder / "artifacts").rglob("*"):
        if path.is_file():
            found.add(path.name)
    return found

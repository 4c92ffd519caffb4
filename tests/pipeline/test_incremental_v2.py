"""A reviewer's v2 (grades corrected, published beside v1) built on what the v1 build
left in the cache is byte for byte the v2 a cold build of the same source writes, for
every design: what the rebuild reuses (file hashes, sheets, renders, clean contents)
never shows in the output."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from reportgen.pipeline.pipeline import build_site
from reportgen.pipeline.runner import SequentialRunner
from test_golden_designs import DESIGNS


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _corrected(source: Path) -> int:
    """The first and last graded rows' grades flipped, the source labelled v2 after v1;
    the number of grades changed."""
    log = source / "experiments" / "mini" / "calls.csv"
    rows = list(csv.DictReader(io.StringIO(log.read_text(encoding="utf-8"))))
    graded = [row for row in rows if row["qualified"] in ("true", "false")]
    for row in {id(r): r for r in (graded[0], graded[-1])}.values():
        row["qualified"] = "false" if row["qualified"] == "true" else "true"
    with log.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    config = source / "reportgen.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('version = "v1"', 'version = "v2"\nprevious = "v1"'),
                      encoding="utf-8")
    return len({id(graded[0]), id(graded[-1])})


@pytest.mark.slow
@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_a_v2_built_on_the_cache_equals_a_cold_build_of_it(design, make_source, tmp_path):
    rows, run_toml = DESIGNS[design]()
    source = make_source(rows, contract=run_toml)
    runner = SequentialRunner()
    for site in ("incremental", "cold"):
        build_site(source, tmp_path / site, cache=tmp_path / f"cache-{site}-v1", runner=runner)
    assert _files(tmp_path / "incremental" / "v1") == _files(tmp_path / "cold" / "v1")
    assert _corrected(source) > 0
    # The incremental v2 uses the cache v1 left; the cold one starts from an empty cache.
    build_site(source, tmp_path / "incremental", cache=tmp_path / "cache-incremental-v1", runner=runner)
    shutil.rmtree(tmp_path / "cache-cold-v1")
    build_site(source, tmp_path / "cold", cache=tmp_path / "cache-cold-v2", runner=runner)
    incremental, cold = _files(tmp_path / "incremental"), _files(tmp_path / "cold")
    assert any(rel.startswith("v2/") for rel in cold)
    assert incremental.keys() == cold.keys()
    assert [rel for rel in cold if incremental[rel] != cold[rel]] == []
    assert incremental["v2/data/results.json"] != incremental["v1/data/results.json"]  # the grades did change

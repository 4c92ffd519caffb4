"""Build the site of an imported run, the way every importer's end-to-end test does."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from reportgen.cli import main
from reportgen.importers.assemble import ImportedRun
from reportgen.importers.write import write_run, write_site_file


def build_import(run: ImportedRun, tmp_path: Path, title: str) -> tuple[Path, dict]:
    """Write ``run`` into a new source, build and verify its site; (the run's source
    folder, the site's results.json)."""
    src, out = tmp_path / "src", tmp_path / "out"
    write_site_file(src, title)
    folder = write_run(run, src)
    runner = CliRunner()
    built = runner.invoke(main, ["build", str(src), "--out", str(out), "-q"])
    assert built.exit_code == 0, built.output
    verified = runner.invoke(main, ["verify", str(out / "v1")])
    assert verified.exit_code == 0, verified.output
    return folder, json.loads((out / "v1" / "data" / "results.json").read_text(encoding="utf-8"))


def claims_of(results: dict) -> dict[str, dict]:
    return {c["id"]: c for c in results["claims"]}

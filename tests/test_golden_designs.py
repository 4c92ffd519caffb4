"""Small golden trees, one per design (as Pelican's functional tests keep theirs).

Each design gets a tiny source (a few calls), built through the CLI; selected files of
the built version are compared with tests/golden/designs/<design>/:

- experiments/mini/index.html, claims.html, claims/mini.html and data/results.json, in full;
- manifest.json, every file by its sha256, except the bytes that depend on the
  installed cairo and vl-convert rather than on reportgen: PNG files and chart SVGs are
  left out, and are pinned instead as follows;
- charts.json: the data each chart was drawn from (the columns and rows reportgen
  embeds in the chart SVG's <metadata>, the table the experiment page shows beside it);
- renders.json: each published PNG through the sha256 of the SVG it was rendered from
  (data/mini/artifacts.json lists them), with the sanitized SVG and the notes.

A PNG is named by its own hash, so pages and artifacts.json that link a PNG would
change with the cairo version too: in every compared text, and in the hash of every
manifest file that names a PNG, each PNG name is replaced by the hash of its source
SVG ("png-of-svg-<sha256>.png"). A call sheet (store/<sha256>.html) names PNGs, so its
own name moves with them: it is named by the hash of its bytes with the PNG names so
replaced ("sheet-<sha256>.html"), wherever it is named. Every other byte stays compared.

After reviewing an intended change, regenerate with:
    REPORTGEN_REGEN_GOLDEN=1 python -m pytest tests/test_golden_designs.py
"""

from __future__ import annotations

import difflib
import hashlib
import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import CONTRACT, default_rows
from sitecheck import manifest_problems, sheet_of

GOLDEN = Path(__file__).parent / "golden" / "designs"
KEPT = ("experiments/mini/index.html", "claims.html", "claims/mini.html", "data/results.json")
DIFF_LINES = 80  # of a unified diff shown on a mismatch
PNG_NAME = re.compile(r"\b([0-9a-f]{64})\.png\b")
SHEET_NAME = re.compile(r"\b([0-9a-f]{64})\.html\b")


# ---------------------------------------------------------------- tiny sources

def call(service: str, number: int, minute: int, outcome: str = "P", **columns: str) -> dict[str, str]:
    """One call on the default row's template: P passes, F fails the task, T times out."""
    row = dict(default_rows()[0], service=service, call_id=f"{service}-{number}",
               service_group="direct" if service == "X" else "relay",
               started_at=f"2026-10-01T09:{minute:02d}:00+00:00", latency_ms=str(1000 + 250 * minute),
               artifact_path=f"artifacts/{service}-{number}", qualified="true" if outcome == "P" else "false",
               grade_reason="ok" if outcome == "P" else "wrong")
    if outcome == "T":
        row.update(status="timeout", finish_reason="", qualified="", latency_ms="20000", artifact_path="",
                   failure_reason="timeout", grade_reason="")
    row.update(columns)
    return row


def interleaved(plan: dict[str, list[str]], **per_index) -> list[dict[str, str]]:
    """The services' i-th calls one after another; per_index: column -> function(i) (from 1)."""
    rows, minute = [], 0
    for i in range(1, max(len(v) for v in plan.values()) + 1):
        for service, outcomes in plan.items():
            minute += 1
            rows.append(call(service, i, minute, outcomes[i - 1], **{k: f(i) for k, f in per_index.items()}))
    return rows


def contract(design: str, **replace: str) -> str:
    text = CONTRACT.replace('design = "independent"', f'design = "{design}"')
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


SERVICE_Z = '\n[[service]]\nid = "Z"\ngroup = "relay"\nrequested_model = "m-1"\n'


def paired_source():
    """Four pairs with a numeric score: the difference Y - X is 0.5, 0.5, 0, 1."""
    x, y = [1.0, 2.0, 3.0, 4.0], [1.5, 2.5, 3.0, 5.0]
    rows = interleaved({"X": ["P"] * 4, "Y": ["P"] * 4}, pair_id=lambda i: f"p{i}",
                       block_id=lambda i: "1" if i <= 2 else "2")
    for row in rows:
        i = int(row["pair_id"][1:]) - 1
        row["score"] = str((x if row["service"] == "X" else y)[i])
    return rows, contract("paired", **{'primary_metric = "first_pass_rate"': 'primary_metric = "score"',
                                       "alpha = 0.05": "alpha = 0.05\nmin_useful_effect = 0.25"})


def repeated_source():
    """Two tasks, each run twice per service; the repetition is the block."""
    rows = []
    for rep in (1, 2):
        plan = {"X": ["P", "F"], "Y": ["P", "P" if rep == 1 else "F"]}
        for row in interleaved(plan, task_id=lambda i: f"t{i}"):
            n = int(row["call_id"].split("-")[1])
            rows.append(dict(row, call_id=f"{row['service']}-t{n}-r{rep}", repetition=str(rep), block_id=str(rep),
                             artifact_path=f"artifacts/{row['service']}-t{n}-r{rep}",
                             started_at=row["started_at"].replace("T09:", f"T{9 + rep}:")))
    return rows, contract("repeated", **{'blocks = ["1", "2"]': "blocks = 2"})


def leaderboard_source():
    """Three services, four calls each: X 4/4, Y 3/4, Z 1/4 with a timeout."""
    rows = interleaved({"X": ["P", "P", "P", "P"], "Y": ["P", "F", "P", "P"], "Z": ["F", "T", "P", "F"]},
                       block_id=lambda i: "1" if i <= 2 else "2")
    return rows, contract("leaderboard", **{
        'candidates = ["Y"]': 'candidates = ["Y", "Z"]',
        "alpha = 0.05": "alpha = 0.05\nmin_useful_effect = 0.1\nnoninferiority_margin = 0.1\n"
                        "bootstrap = {resamples = 1000, seed = 20261001}",
    }) + SERVICE_Z


def longitudinal_source():
    """Two weeks of three calls per service; Y drops in the second week.

    Each service passes and fails in each week, so every odds ratio is finite: this tree
    pins the ordinary case (an all-pass window, with its infinite or undefined odds
    ratio, is an edge case for tests of its own)."""
    rows = interleaved({"X": ["P", "P", "F", "P", "P", "F"], "Y": ["P", "F", "P", "F", "F", "P"]},
                       block_id=lambda i: "W1" if i <= 3 else "W2")
    return rows, contract("longitudinal", **{'blocks = ["1", "2"]': 'blocks = ["W1", "W2"]',
                                             "planned_calls = 4": "planned_calls = 6",
                                             "alpha = 0.05": "alpha = 0.05\nnoninferiority_margin = 0.1"})


DESIGNS = {
    "independent": lambda: (default_rows(), CONTRACT),
    "paired": paired_source,
    "repeated": repeated_source,
    "leaderboard": leaderboard_source,
    "longitudinal": longitudinal_source,
}


# ---------------------------------------------------------------- what is compared

def png_sources(version: Path) -> dict[str, str]:
    """PNG name -> the sha256 of the SVG it was rendered from, from data/<run>/artifacts.json."""
    sources: dict[str, str] = {}
    for path in sorted((version / "data").glob("*/artifacts.json")):
        for svg_sha, render in json.loads(path.read_text("utf-8"))["renders"].items():
            if render["png"]:
                sources[Path(render["png"]).name] = svg_sha
    return sources


class StableNames:
    """PNG and sheet names as the golden trees write them (see the module text)."""

    def __init__(self, version: Path) -> None:
        self.pngs = png_sources(version)
        self.sheets: dict[str, str] = {}
        store = version.parent / "store"
        for path in sorted((version / "data").glob("*/artifacts.json")):
            for sheet in json.loads(path.read_text("utf-8"))["sheets"]:
                body = self.without_pngs((store / sheet["page"]).read_bytes())
                self.sheets[sheet["page"]] = f"sheet-{hashlib.sha256(body).hexdigest()}.html"

    def without_pngs(self, data: bytes) -> bytes:
        def name(match: re.Match) -> str:
            png = match.group(0)
            assert png in self.pngs, f"{png} is not the render of any SVG listed in artifacts.json"
            return f"png-of-svg-{self.pngs[png]}.png"
        return PNG_NAME.sub(name, data.decode("utf-8")).encode("utf-8")

    def __call__(self, data: bytes) -> bytes:
        """``data`` with every PNG and sheet name made stable."""
        def name(match: re.Match) -> str:
            return self.sheets.get(match.group(0), match.group(0))
        return SHEET_NAME.sub(name, self.without_pngs(data).decode("utf-8")).encode("utf-8")

    def names(self, data: bytes) -> bool:
        text = data.decode("utf-8", "replace")
        return bool(PNG_NAME.search(text) or any(m.group(0) in self.sheets for m in SHEET_NAME.finditer(text)))


def chart_data(version: Path) -> dict[str, dict]:
    """Each chart's data as reportgen embeds it in the SVG (not the drawing: vl-convert's),
    checked against the table the experiment page shows beside the chart."""
    charts = {}
    for path in sorted(version.glob("charts/*/*.svg")):
        found = re.search(r"<metadata>(.*?)</metadata>", path.read_text("utf-8"), re.S)
        assert found, f"{path.relative_to(version)}: no <metadata> with the chart's data"
        data = json.loads(html.unescape(found.group(1)))
        page = (version / "experiments" / path.parent.name / "index.html").read_text("utf-8")
        assert page_chart_table(page, path.stem) == data, f"{path.relative_to(version)}: the page shows other data"
        charts[path.relative_to(version).as_posix()] = data
    return charts


def page_chart_table(page: str, name: str) -> dict[str, list] | None:
    """The "data behind this chart" table that follows the chart's figure on its page."""
    found = re.search(rf'<figure class="chart" id="chart-{re.escape(name)}">.*?</figure>\s*'
                      r'<details class="chart-data">.*?<table[^>]*>(.*?)</table>', page, re.S)
    if found is None:
        return None
    cells = [[html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
             for row in re.findall(r"<tr>(.*?)</tr>", found.group(1), re.S)]
    return {"columns": cells[0], "rows": cells[1:]}


def renders(version: Path) -> dict[str, dict]:
    """What became of each drawing, PNGs named by their source SVG's sha256."""
    out = {}
    for path in sorted((version / "data").glob("*/artifacts.json")):
        for svg_sha, render in json.loads(path.read_text("utf-8"))["renders"].items():
            out[svg_sha] = {"png": f"png-of-svg-{svg_sha}.png" if render["png"] else None,
                            "sanitized_svg": render["sanitized_svg"], "notes": render["notes"]}
    return out


def pinned_manifest(version: Path, stable: StableNames) -> dict:
    """manifest.json without PNGs and chart SVGs; a file naming a PNG or a sheet is
    pinned by the hash of its bytes with those names made stable (see the module text)."""
    manifest = json.loads((version / "manifest.json").read_text("utf-8"))

    def pin(data: bytes, digest: str) -> str:
        if stable.names(data):
            return "sha256-with-stable-names:" + hashlib.sha256(stable(data)).hexdigest()
        return digest

    files = {rel: pin((version / rel).read_bytes(), digest) for rel, digest in manifest["files"].items()
             if not rel.startswith("charts/")}
    store = version.parent / "store"
    shared = {}
    for name, digest in manifest["store"].items():
        if name.endswith(".png"):
            continue
        data = (store / name).read_bytes()
        shared[stable.sheets.get(name, name)] = pin(data, digest) if name.endswith(".html") else digest
    return {**manifest, "files": files, "store": shared}


def compared_files(version: Path, kept: tuple[str, ...] = KEPT, sheets_of: tuple[tuple[str, str], ...] = ()
                   ) -> dict[str, str]:
    """golden file name -> expected text. ``sheets_of``: (run, call id) whose sheet is
    kept in full too, as sheets/<run>/<call id>.html."""
    manifest = json.loads((version / "manifest.json").read_text("utf-8"))
    pngs = sorted(name for name in manifest["store"] if name.endswith(".png"))
    stable = StableNames(version)
    assert sorted(stable.pngs) == pngs, "every published PNG is the render of one listed SVG, and only those"
    files = {rel: stable((version / rel).read_bytes()).decode("utf-8") for rel in kept}
    for run_id, call_id in sheets_of:
        files[f"sheets/{run_id}/{call_id}.html"] = stable(sheet_of(version, run_id, call_id).read_bytes()).decode()
    as_json = {"manifest.json": pinned_manifest(version, stable), "charts.json": chart_data(version),
               "renders.json": renders(version)}
    files.update({name: pretty(body) + "\n" for name, body in as_json.items()})
    return files


def pretty(value, pad: str = "") -> str:
    """JSON with sorted keys, one line per list of plain values (a chart's row, say)."""
    if isinstance(value, dict) and value:
        items = [f'{pad} {json.dumps(k)}: {pretty(v, pad + " ")}' for k, v in sorted(value.items())]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(f"{pad} {pretty(v, pad + ' ')}" for v in value) + f"\n{pad}]"
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------- the test

@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_design_matches_golden(design, make_source, run_cli, tmp_path):
    rows, run_toml = DESIGNS[design]()
    source = make_source(rows, contract=run_toml)
    out = tmp_path / "site"
    result = run_cli("build", source, "--out", out, "-q")
    assert result.exit_code == 0, result.output
    version = out / "v1"
    assert manifest_problems(version) == []  # the manifest's hashes are the files' own
    actual = compared_files(version)
    golden = GOLDEN / design
    if os.environ.get("REPORTGEN_REGEN_GOLDEN"):
        shutil.rmtree(golden, ignore_errors=True)
        for rel, body in actual.items():
            (golden / rel).parent.mkdir(parents=True, exist_ok=True)
            (golden / rel).write_text(body, encoding="utf-8")
        pytest.skip(f"golden files of {design} regenerated; review them with git diff")
    kept = sorted(p.relative_to(golden).as_posix() for p in golden.rglob("*") if p.is_file())
    assert kept == sorted(actual), f"golden/designs/{design} holds other files than the test compares"
    for rel, body in actual.items():
        expected = (golden / rel).read_text(encoding="utf-8")
        if body != expected:
            diff = "".join(list(difflib.unified_diff(
                expected.splitlines(True), body.splitlines(True), f"golden/designs/{design}/{rel}",
                f"built/{rel}"))[:DIFF_LINES])
            pytest.fail(f"{design}: {rel} differs from the golden copy:\n{diff}")

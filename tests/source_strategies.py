"""Generated report sources for the whole-build property test, and the invariants a
built site must keep.

Shared by tests/pipeline/test_property_builds.py (a few examples in CI) and
scripts/property_builds.py (many examples by hand, with shrinking and reproductions).

A source is described by a ``Spec`` (the contract's choices and one ``Row`` per logged
call, in the order the calls ran); ``write_source`` turns it into a valid source folder
the way tests/conftest.py writes one (run.toml, calls.csv, requests/, artifacts/).
``check_build`` builds it through the CLI and returns every broken invariant as a
``Failure`` (a category and a message); the oracles are computed here from the site's
published inputs (data/<run>/calls.csv and run.toml), never from reportgen's own code.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

from click.testing import CliRunner
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from conftest import REQUEST, request_hash, svg_for
from reportgen.cli import main

RUN_ID = "prop-run"
TOLERANCE = 1e-9  # every oracle comparison: absolute difference at most this
DESIGNS = ("independent", "paired", "repeated", "leaderboard", "longitudinal")
TECHNICAL = ("timeout", "api_error", "stream_cut", "length_limit", "harness_error")
FAILURE_REASONS = {"timeout": "no response within the timeout", "api_error": "HTTP 529: overloaded",
                   "stream_cut": "the stream ended early", "length_limit": "hit max_tokens",
                   "harness_error": "local network fault"}
# Valid service ids of several shapes (dots, underscores, digits); none contains "_vs_".
SERVICE_NAMES = ("A", "B", "gpt-4.1", "relay-02", "svc_x", "m.v2", "C", "D", "E", "F", "G", "H", "K9", "z")
EXCLUSION_RULE = "grader crashed before grading"
START = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)
REGISTERED_AT = "2026-10-01T08:00:00+00:00"


# ------------------------------------------------------------------ the description of a source

@dataclass(frozen=True)
class Row:
    """One logged call. ``outcome`` is "pass", "fail" or a technical-failure status."""

    service: str
    block: str
    outcome: str
    pair_id: str = ""
    task_id: str = ""
    repetition: str = ""
    slice: str = ""
    score: str = ""  # the numeric score when the metric is a score (complete returns)
    attempt: int = 1
    phase: str = ""  # "" (formal, the default) or "pilot"
    excluded: bool = False
    artifact: bool = False
    disputed: bool = False


@dataclass(frozen=True)
class Spec:
    design: str
    baseline: str
    candidates: tuple[str, ...]
    planned: tuple[tuple[str, int], ...]  # per service, in [[service]] order (baseline first)
    blocks: tuple[str, ...]  # registered blocks (windows); () with blocks_form "absent"
    blocks_form: str  # "list", "count" (blocks = n, ids "1".."n") or "absent"
    metric: str = "first_pass_rate"
    higher_is_better: bool | None = None  # None: the key is left out (default true)
    alpha: float = 0.05
    min_useful_effect: float | None = None
    noninferiority_margin: float | None = None
    slices: tuple[str, ...] = ()
    failure_score: float | None = None
    retry: str | None = None
    exclusion_rules: tuple[str, ...] = ()
    resamples: int | None = None  # bootstrap resamples (None: the default 10,000)
    rows: tuple[Row, ...] = ()

    @property
    def services(self) -> tuple[str, ...]:
        return tuple(s for s, _ in self.planned)


# ------------------------------------------------------------------ writing a source

def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(value)


def contract_text(spec: Spec) -> str:
    lines = ["[run]", f"id = {_toml(RUN_ID)}", 'title = "Generated run"',
             'question = "Does the candidate pass more first submissions than the baseline?"',
             'phase = "formal"', f'registered_at = "{REGISTERED_AT}"', f"design = {_toml(spec.design)}",
             f"primary_metric = {_toml(spec.metric)}"]
    if spec.higher_is_better is not None:
        lines.append(f"higher_is_better = {_toml(spec.higher_is_better)}")
    lines += [f"baseline = {_toml(spec.baseline)}", f"candidates = {_toml(spec.candidates)}",
              f"alpha = {_toml(spec.alpha)}"]
    if spec.min_useful_effect is not None:
        lines.append(f"min_useful_effect = {_toml(spec.min_useful_effect)}")
    if spec.noninferiority_margin is not None:
        lines.append(f"noninferiority_margin = {_toml(spec.noninferiority_margin)}")
    counts = {n for _, n in spec.planned}
    if len(counts) == 1:
        lines.append(f"planned_calls = {next(iter(counts))}")
    else:
        lines.append("planned_calls = {" + ", ".join(f"{json.dumps(s)} = {n}" for s, n in spec.planned) + "}")
    if spec.blocks_form == "list":
        lines.append(f"blocks = {_toml(spec.blocks)}")
    elif spec.blocks_form == "count":
        lines.append(f"blocks = {len(spec.blocks)}")
    if spec.slices:
        lines.append(f"slices = {_toml(spec.slices)}")
    if spec.failure_score is not None:
        lines.append(f"failure_score = {_toml(spec.failure_score)}")
    if spec.retry is not None:
        lines.append(f"retry = {_toml(spec.retry)}")
    lines.append(f"exclusion_rules = {_toml(spec.exclusion_rules)}")
    if spec.resamples is not None:
        lines.append(f"bootstrap = {{resamples = {spec.resamples}, seed = 20261001}}")
    lines += ["", "[task]", 'id = "t"', f"prompt = {_toml(REQUEST['messages'][0]['content'])}",
              'render_viewport = "40x30"']
    for service in spec.services:
        lines += ["", "[[service]]", f"id = {_toml(service)}", 'group = "g"', 'requested_model = "m-1"']
    return "\n".join(lines) + "\n"


COLUMNS = ["run_id", "block_id", "service", "service_group", "requested_model", "returned_model",
           "started_at", "request_hash", "status", "finish_reason", "latency_ms", "qualified",
           "failure_reason", "artifact_path", "call_id", "attempt", "phase", "pair_id", "task_id",
           "repetition", "slice", "score", "excluded", "exclusion_reason", "disputed", "grade_reason"]


def log_rows(spec: Spec) -> list[dict[str, str]]:
    """The call log: rows in the order they ran, one minute apart."""
    out = []
    counters: Counter[str] = Counter()
    last_first: dict[tuple, str] = {}
    for index, row in enumerate(spec.rows):
        key = (row.service, row.block, row.pair_id, row.task_id, row.repetition)
        if row.attempt == 1:
            counters[row.service] += 1
            call_id = f"{row.service}-{'pilot-' if row.phase == 'pilot' else ''}{counters[row.service]}"
            last_first[key] = call_id
        else:
            call_id = f"{last_first.get(key, row.service + '-orphan-' + str(index))}-a{row.attempt}"
        ok = row.outcome in ("pass", "fail")
        out.append({
            "run_id": RUN_ID, "block_id": row.block, "service": row.service, "service_group": "g",
            "requested_model": "m-1", "returned_model": "m-1" if ok else "",
            "started_at": (START + timedelta(minutes=index)).isoformat(), "request_hash": request_hash(REQUEST),
            "status": "ok" if ok else row.outcome, "finish_reason": "stop" if ok else "",
            "latency_ms": str(1000 + 37 * (index % 11)) if ok else "20000",
            "qualified": ("true" if row.outcome == "pass" else "false") if ok else "",
            "failure_reason": "" if ok else FAILURE_REASONS[row.outcome],
            "artifact_path": f"artifacts/{call_id}" if row.artifact and ok else "", "call_id": call_id,
            "attempt": str(row.attempt), "phase": row.phase, "pair_id": row.pair_id, "task_id": row.task_id,
            "repetition": row.repetition, "slice": row.slice, "score": row.score if ok else "",
            "excluded": "true" if row.excluded else "",
            "exclusion_reason": EXCLUSION_RULE if row.excluded else "",
            "disputed": "true" if row.disputed and ok else "",
            "grade_reason": ("meets the rubric" if row.outcome == "pass" else "misses the rubric") if ok else "",
        })
    return out


def log_text(spec: Spec) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(log_rows(spec))
    return buffer.getvalue()


def write_source(spec: Spec, root: Path) -> Path:
    source = root / "source"
    exp = source / "experiments" / RUN_ID
    (exp / "requests").mkdir(parents=True)
    (source / "reportgen.toml").write_text('title = "Property report"\nversion = "v1"\n', encoding="utf-8")
    (exp / "run.toml").write_text(contract_text(spec), encoding="utf-8")
    (exp / "requests" / f"{request_hash(REQUEST)[7:]}.json").write_text(json.dumps(REQUEST), encoding="utf-8")
    for row in log_rows(spec):
        if row["artifact_path"]:
            folder = exp / row["artifact_path"]
            folder.mkdir(parents=True)
            svg = svg_for(row["call_id"])
            (folder / "response.txt").write_text(f"Here you go:\n```svg\n{svg}```\n", encoding="utf-8")
            (folder / "image.svg").write_text(svg, encoding="utf-8")
    (exp / "calls.csv").write_text(log_text(spec), encoding="utf-8")
    return source


def reproduction(spec: Spec) -> str:
    """The generated contract and log, as a reader needs them to rebuild the failure."""
    return (f"--- experiments/{RUN_ID}/run.toml\n{contract_text(spec)}"
            f"--- experiments/{RUN_ID}/calls.csv\n{log_text(spec)}")


# ------------------------------------------------------------------ the strategies

PASS_HEAVY = ("pass", "pass", "pass", "fail", "timeout")
MIXED = ("pass", "fail", "pass", "fail", "timeout", "api_error", "stream_cut", "length_limit", "harness_error")
FAIL_HEAVY = ("fail", "fail", "timeout", "pass")


@st.composite
def outcomes(draw, n: int) -> list[str]:
    """n outcomes of one arm (in one block): all pass, all fail, all technical failures or a mix."""
    mode = draw(st.sampled_from(("mixed", "all_pass", "all_fail", "technical", "pass_heavy", "fail_heavy")))
    if mode == "all_pass":
        return ["pass"] * n
    if mode == "all_fail":
        return ["fail"] * n
    pool = {"mixed": MIXED, "technical": TECHNICAL, "pass_heavy": PASS_HEAVY, "fail_heavy": FAIL_HEAVY}[mode]
    return draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))


def _interleave(per_service: dict[str, list[Row]]) -> list[Row]:
    """Round-robin over the services: arms interleaved in time within a block."""
    queues = [list(v) for v in per_service.values()]
    out = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def _block_ids(draw, n: int, longitudinal: bool) -> tuple[tuple[str, ...], str]:
    form = draw(st.sampled_from(("list", "count", "absent")))
    if form == "count":
        return tuple(str(i) for i in range(1, n + 1)), form
    names = [f"W{40 + i}" for i in range(1, n + 1)] if longitudinal else [str(i) for i in range(1, n + 1)]
    if not longitudinal and draw(st.booleans()):
        names = [f"b{i}" for i in range(1, n + 1)]
    return tuple(names), form


def _slice_name(draw) -> str:
    return draw(st.sampled_from(("", "", "s1", "s2", "x.y")))


@st.composite
def rate_design(draw, design: str) -> dict:
    """Independent, leaderboard and longitudinal runs: independent calls per service and block."""
    if design == "independent":
        n_services = 2
    elif design == "leaderboard":
        n_services = draw(st.integers(2, 12))
    else:
        n_services = draw(st.integers(2, 4))
    services = draw(st.lists(st.sampled_from(SERVICE_NAMES), min_size=n_services, max_size=n_services,
                             unique=True))
    longitudinal = design == "longitudinal"
    # A score is compared between independent samples too (Welch); windows compare pass rates.
    metric = "first_pass_rate" if longitudinal else draw(st.sampled_from(("first_pass_rate", "score")))
    n_blocks = draw(st.integers(1, 4 if longitudinal else 3))
    blocks, form = _block_ids(draw, n_blocks, longitudinal)
    max_k = max(1, min(5, 40 // (n_services * n_blocks)))
    use_slices = draw(st.booleans())
    rows: list[Row] = []
    for block in blocks:
        per_service = {}
        for service in services:
            # A longitudinal service may miss a whole window; elsewhere an arm may be empty in a block.
            k = draw(st.integers(0 if (longitudinal or n_blocks > 1) else 1, max_k))
            # A score arm may be all one value (ties) or spread out.
            pool = (draw(st.sampled_from(SCORES)),) if draw(st.booleans()) else SCORES
            per_service[service] = [
                Row(service, block, o, slice=_slice_name(draw) if use_slices else "",
                    score=_score_text(draw(st.sampled_from(pool))) if metric == "score" and o in ("pass", "fail")
                    else "")
                for o in draw(outcomes(k))]
        rows += _interleave(per_service)
    if not rows:
        rows = [Row(services[0], blocks[0], "pass", score="1" if metric == "score" else "")]
    return {"services": services, "blocks": blocks, "blocks_form": form, "rows": rows, "use_slices": use_slices,
            "metric": metric}


@st.composite
def paired_design(draw) -> dict:
    services = draw(st.lists(st.sampled_from(SERVICE_NAMES), min_size=2, max_size=2, unique=True))
    base, cand = services
    metric = draw(st.sampled_from(("first_pass_rate", "score")))
    n_pairs = draw(st.integers(1, 10))
    n_blocks = draw(st.integers(1, min(3, n_pairs)))
    blocks, form = _block_ids(draw, n_blocks, False)
    ties = draw(st.booleans())  # every pair has the same difference (all ties)
    shift = draw(st.sampled_from((0.0, 0.5, -1.0, 0.1)))
    use_slices = draw(st.booleans())
    rows = []
    for i in range(1, n_pairs + 1):
        block = blocks[(i - 1) * n_blocks // n_pairs]
        sl = _slice_name(draw) if use_slices else ""
        pair = f"p{i}"
        if metric == "score":
            b_out = draw(st.sampled_from(("pass", "pass", "fail", "timeout")))
            c_out = "pass" if ties else draw(st.sampled_from(("pass", "pass", "fail", "api_error")))
            b_score = draw(st.sampled_from(SCORES))
            c_score = round(b_score + shift, 1) if ties else draw(st.sampled_from(SCORES))
            if ties:
                b_out = "pass"
        else:
            b_out = draw(st.sampled_from(MIXED))
            c_out = b_out if ties else draw(st.sampled_from(MIXED))
            b_score = c_score = None
        order = [(base, b_out, b_score), (cand, c_out, c_score)]
        if draw(st.booleans()):
            order.reverse()
        missing = draw(st.sampled_from((None,) * 6 + (base, cand))) if not ties else None
        for service, out, score in order:
            if service == missing:
                continue
            rows.append(Row(service, block, out, pair_id=pair, slice=sl,
                            score=_score_text(score) if out in ("pass", "fail") and score is not None else ""))
    if not rows:
        rows = [Row(base, blocks[0], "pass", pair_id="p1", score="1.0" if metric == "score" else "")]
    return {"services": services, "blocks": blocks, "blocks_form": form, "rows": rows, "metric": metric,
            "use_slices": use_slices, "n_units": n_pairs}


SCORES = (0.0, 1.0, 2.5, 3.0, 10.0, 0.1, 0.2, 71.3, 70.8)  # decimals: differences carry float noise


def _score_text(value: float) -> str:
    return f"{value:g}"


@st.composite
def repeated_design(draw) -> dict:
    services = draw(st.lists(st.sampled_from(SERVICE_NAMES), min_size=2, max_size=2, unique=True))
    metric = draw(st.sampled_from(("first_pass_rate", "score")))
    n_tasks = draw(st.integers(1, 4))
    n_reps = draw(st.integers(1, 3))
    per_rep_blocks = draw(st.booleans())
    if per_rep_blocks:  # block r runs repetition r, as in the demo
        blocks, form = tuple(str(r) for r in range(1, n_reps + 1)), draw(st.sampled_from(("list", "count")))
    else:
        blocks, form = ("1",), draw(st.sampled_from(("list", "count", "absent")))
    ties = draw(st.booleans())
    use_slices = draw(st.booleans())
    task_slices = {t: (_slice_name(draw) if use_slices else "") for t in range(1, n_tasks + 1)}
    rows = []
    for rep in range(1, n_reps + 1):
        block = str(rep) if per_rep_blocks else "1"
        per_service: dict[str, list[Row]] = {s: [] for s in services}
        for task in range(1, n_tasks + 1):
            base_out = draw(st.sampled_from(MIXED if metric != "score" else ("pass", "fail", "timeout")))
            base_score = draw(st.sampled_from((0.0, 1.0, 2.0, 5.0)))
            for service in services:
                out, score = base_out, base_score
                if service != services[0] and not ties:
                    out = draw(st.sampled_from(MIXED if metric != "score" else ("pass", "fail", "stream_cut")))
                    score = draw(st.sampled_from((0.0, 1.0, 2.0, 5.0)))
                elif service != services[0]:
                    score = base_score + 1.0
                per_service[service].append(Row(
                    service, block, out, task_id=f"task-{task}", repetition=str(rep), slice=task_slices[task],
                    score=_score_text(score) if metric == "score" and out in ("pass", "fail") else ""))
        rows += _interleave(per_service)
    return {"services": services, "blocks": blocks, "blocks_form": form, "rows": rows, "metric": metric,
            "use_slices": use_slices, "n_units": n_tasks * n_reps}


@st.composite
def _extras(draw, rows: list[Row], design: str, metric: str) -> tuple[list[Row], dict]:
    """Later attempts, pilot rows, registered exclusions, disputed grades and artifacts."""
    contract: dict = {}
    out: list[Row] = []
    retries = draw(st.booleans())
    budget_text = draw(st.sampled_from(("up to 1 retry after a technical failure", None)))
    exclude = draw(st.booleans())
    n_excluded = 0
    artifacts = draw(st.sampled_from((False, False, True)))
    n_artifacts = 0
    for row in rows:
        if exclude and n_excluded < 2 and row.attempt == 1 and draw(st.integers(0, 9)) == 0:
            row = dataclasses.replace(row, excluded=True)
            n_excluded += 1
        if row.outcome in ("pass", "fail") and draw(st.integers(0, 19)) == 0:
            row = dataclasses.replace(row, disputed=True)  # the log records the settled grade
        if artifacts and n_artifacts < 3 and row.outcome in ("pass", "fail") and draw(st.booleans()):
            row = dataclasses.replace(row, artifact=True)
            n_artifacts += 1
        out.append(row)
        if retries and row.outcome in TECHNICAL and not row.excluded and draw(st.booleans()):
            again = draw(st.sampled_from(("pass", "fail", "timeout")))
            score = "2" if metric == "score" and again != "timeout" else ""
            out.append(dataclasses.replace(row, outcome=again, attempt=2, score=score, artifact=False,
                                           disputed=False))
    if any(r.attempt > 1 for r in out):
        contract["retry"] = budget_text
    if n_excluded:
        contract["exclusion_rules"] = (EXCLUSION_RULE,)
    n_pilot = draw(st.integers(0, 2))
    pilots = []
    for i in range(n_pilot):
        template = rows[i % len(rows)]
        pilots.append(dataclasses.replace(template, outcome=draw(st.sampled_from(("pass", "fail", "timeout"))),
                                          phase="pilot", excluded=False, artifact=False, disputed=False,
                                          score="1" if metric == "score" else ""))
    return pilots + out, contract


def _draw_planned(draw, services, rows: list[Row], design: str, n_units: int | None) -> tuple[tuple[str, int], ...]:
    logged = Counter(r.service for r in rows if r.attempt == 1 and not r.phase)
    planned = []
    for service in services:
        base = n_units if n_units is not None else logged[service]
        delta = draw(st.sampled_from((0, 0, 0, 1, 2, -1)))
        planned.append((service, max(1, base + delta)))
    if draw(st.booleans()):  # often one number for every service
        n = max(p for _, p in planned)
        planned = [(s, n) for s, _ in planned]
    return tuple(planned)


@st.composite
def sources(draw, design: str | None = None) -> Spec:
    """A small valid source of one of the five designs (all five when ``design`` is None)."""
    design = design or draw(st.sampled_from(DESIGNS))
    if design == "paired":
        parts = draw(paired_design())
    elif design == "repeated":
        parts = draw(repeated_design())
    else:
        parts = draw(rate_design(design))
    metric = parts.get("metric", "first_pass_rate")
    services = parts["services"]
    rows, extra = draw(_extras(parts["rows"], design, metric))
    score = metric == "score"
    slices: tuple[str, ...] = ()
    if parts["use_slices"] and draw(st.booleans()):
        registered = draw(st.lists(st.sampled_from(("s1", "s2", "never-logged")), unique=True, max_size=2))
        slices = tuple(registered)
    return Spec(
        design=design, baseline=services[0], candidates=tuple(services[1:]),
        planned=_draw_planned(draw, services, rows, design, parts.get("n_units")),
        blocks=parts["blocks"] if parts["blocks_form"] != "absent" else (),
        blocks_form=parts["blocks_form"], metric=metric,
        higher_is_better=draw(st.sampled_from((None, True, False))),
        alpha=draw(st.sampled_from((0.05, 0.05, 0.1, 0.01, 0.2))),
        min_useful_effect=draw(st.sampled_from((None, 0.5, 2.0) if score else (None, 0.0, 0.05, 0.1, 0.3))),
        noninferiority_margin=draw(st.sampled_from((None, 0.5, 1.0) if score else (None, 0.05, 0.1, 0.5))),
        slices=slices,
        failure_score=draw(st.sampled_from((None, 0.0))) if score else None,
        retry=extra.get("retry"), exclusion_rules=extra.get("exclusion_rules", ()),
        resamples=draw(st.sampled_from((None, 1000))),
        rows=tuple(rows),
    )


# ------------------------------------------------------------------ building and checking

@dataclass(frozen=True)
class Failure:
    category: str  # which invariant: the key used to group and shrink failures
    message: str


def build(source: Path, out: Path):
    return CliRunner().invoke(main, ["build", str(source), "--out", str(out), "-q", "--no-cache"])


def check_build(spec: Spec, root: Path) -> list[Failure]:
    """Write, build and verify ``spec`` under ``root``; every broken invariant."""
    source = write_source(spec, root)
    out = root / "site"
    result = build(source, out)
    if result.exit_code != 0:
        return [Failure("build-exit", f"build exited {result.exit_code}: {result.output.strip()[-2000:]}")]
    return check_site(out)


def check_site(out: Path) -> list[Failure]:
    version = out / "v1"
    failures: list[Failure] = []
    verified = CliRunner().invoke(main, ["verify", str(version)])
    if verified.exit_code != 0:
        failures.append(Failure("verify-exit", f"verify exited {verified.exit_code}: "
                                f"{verified.output.strip()[-2000:]}"))
    for page in sorted(out.rglob("*.html")):
        failures += page_failures(page, out)
    claims_text = (version / "data" / "results.json").read_text("utf-8")
    try:
        body = json.loads(claims_text, parse_constant=_reject_constant)
    except ValueError as exc:
        return failures + [Failure("json-nonfinite", f"data/results.json: {exc}")]
    claims = {c["id"]: c for c in body["claims"]}
    published = tomllib.loads((version / "data" / RUN_ID / "run.toml").read_text("utf-8"))
    contract, services = published["run"], [s["id"] for s in published["service"]]
    with (version / "data" / RUN_ID / "calls.csv").open(newline="", encoding="utf-8") as handle:
        log = list(csv.DictReader(handle))
    failures += verdict_failures(claims, contract)
    failures += oracle_failures(claims, contract, services, log)
    return failures


def _reject_constant(name: str):
    raise ValueError(f"JSON holds the non-finite constant {name}")


# ---- pages

BAD_WORD = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)


class _Page(HTMLParser):
    """A page's visible text (outside script and style) and every id, in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.ids: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "template"):
            self._hidden += 1
        for name, value in attrs:
            if name == "id":
                self.ids.append(value or "")

    def handle_startendtag(self, tag, attrs):
        for name, value in attrs:
            if name == "id":
                self.ids.append(value or "")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "template") and self._hidden:
            self._hidden -= 1

    def handle_data(self, data):
        if not self._hidden:
            self.text.append(data)


def page_failures(page: Path, out: Path) -> list[Failure]:
    parser = _Page()
    parser.feed(page.read_text("utf-8"))
    rel = page.relative_to(out).as_posix()
    failures = []
    text = re.sub(r"\s+", " ", " ".join(parser.text))
    for match in BAD_WORD.finditer(text):
        context = text[max(0, match.start() - 80):match.end() + 80]
        failures.append(Failure("page-nan-inf", f"{rel}: visible text has {match.group(0)!r}: ...{context}..."))
        break
    for match in re.finditer(r"\bp = [<>]", text):
        context = text[max(0, match.start() - 80):match.end() + 20]
        failures.append(Failure("page-p-phrase", f"{rel}: reads 'p = <' or 'p = >': ...{context}..."))
        break
    counts = Counter(parser.ids)
    for value, n in counts.items():
        if n > 1:
            failures.append(Failure("page-duplicate-id", f"{rel}: id {value!r} appears {n} times"))
        if not value or re.search(r"\s", value):
            failures.append(Failure("page-bad-id", f"{rel}: id {value!r} is empty or contains whitespace"))
    return failures


# ---- verdicts

DIRECTIONAL = ("useful_improvement", "improvement_not_useful_size", "candidate_worse")


def verdict_failures(claims: dict[str, dict], contract: dict) -> list[Failure]:
    failures = []
    higher = contract.get("higher_is_better", True)
    alpha = contract.get("alpha", 0.05)
    mue = contract.get("min_useful_effect")
    margin = contract.get("noninferiority_margin")
    for cid, c in claims.items():
        verdict = c.get("verdict")
        if verdict is None:
            continue
        interval = c.get("interval") or {}
        low, high = interval.get("low"), interval.get("high")
        text = c.get("verdict_text") or ""
        where = f"{cid}: verdict {verdict!r} on [{low}, {high}] (higher_is_better={higher})"
        if verdict in DIRECTIONAL:
            if low is None or high is None:
                failures.append(Failure("verdict-direction", f"{where}: a direction without an interval"))
                continue
            better_low, better_high = (low, high) if higher else (-high, -low)
            if verdict == "candidate_worse" and not better_high < 0:
                failures.append(Failure("verdict-direction", f"{where}: 'worse' but the interval does not lie "
                                        "on the worse side of zero"))
            if verdict != "candidate_worse" and not better_low > 0:
                failures.append(Failure("verdict-direction", f"{where}: an improvement but the interval does "
                                        "not lie on the better side of zero"))
            if verdict == "useful_improvement" and not (mue is not None and better_low > abs(mue)):
                failures.append(Failure("verdict-direction", f"{where}: 'useful' but the interval does not clear "
                                        f"the minimum useful effect {mue}"))
            if verdict == "improvement_not_useful_size" and mue is not None and better_low > abs(mue):
                failures.append(Failure("verdict-direction", f"{where}: 'not useful size' but the interval clears "
                                        f"the minimum useful effect {mue}"))
            test = claims.get(cid.removesuffix(".verdict") + ".fisher") or claims.get(
                cid.removesuffix(".verdict") + ".welch")
            if test is not None:
                p = test.get("adjusted_p_value")
                p = test.get("p_value") if p is None else p
                if p is None or not p < alpha:
                    failures.append(Failure("verdict-test", f"{where}: its test has p = {p} "
                                            f"(adjusted {test.get('adjusted_p_value')}), not below alpha {alpha}"))
            paired = claims.get(cid.removesuffix(".verdict") + ".paired_difference")
            if paired is not None and "paired t interval" in c.get("statement", ""):
                p = paired.get("p_value")
                if p is None or p > alpha + TOLERANCE:
                    failures.append(Failure("verdict-test", f"{where}: read on the paired t interval, whose "
                                            f"t test has p = {p}, not below alpha {alpha}"))
                mcnemar = claims.get(cid.removesuffix(".verdict") + ".mcnemar")
                if mcnemar is not None and not mcnemar.get("p_value", 1.0) < alpha:
                    failures.append(Failure("verdict-test", f"{where}: its exact McNemar test, printed beside "
                                            f"it, has p = {mcnemar.get('p_value')}, not below alpha {alpha}"))
        if verdict == "no_difference_shown" and "contains zero" in text and (
                low is None or high is None or not low <= 0 <= high):
            failures.append(Failure("verdict-contains-zero", f"{where}: says the interval contains zero: {text!r}"))
        if margin is not None and low is not None and high is not None:
            better_low = low if higher else -high
            if text and "Non-inferior within" in text and not better_low > -abs(margin) - TOLERANCE:
                failures.append(Failure("verdict-noninferiority", f"{where}: says non-inferior within the margin "
                                        f"{margin}: {text!r}"))
            if "Non-inferiority not shown" in text and not better_low <= -abs(margin) + TOLERANCE:
                failures.append(Failure("verdict-noninferiority", f"{where}: says non-inferiority is not shown "
                                        f"with margin {margin}: {text!r}"))
    return failures


# ---- oracles from the published log

TRUE = ("true", "1", "yes")


def _counted(row: dict[str, str]) -> bool:
    attempt = int((row.get("attempt") or "1").strip())
    return attempt == 1 and (row.get("phase") or "formal").strip() == "formal" and not _excluded(row)


def _excluded(row: dict[str, str]) -> bool:
    return (row.get("excluded") or "").strip().lower() in TRUE


def _first_formal(row: dict[str, str]) -> bool:
    return int((row.get("attempt") or "1").strip()) == 1 and (row.get("phase") or "formal").strip() == "formal"


def _passed(row: dict[str, str]) -> bool:
    return row["status"].strip() == "ok" and row["qualified"].strip().lower() in TRUE


def _natural(text: str) -> tuple:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text))


def _close(a, b) -> bool:
    return a is not None and b is not None and abs(a - b) <= TOLERANCE


def _planned(contract: dict, services: list[str]) -> dict[str, int]:
    raw = contract["planned_calls"]
    return {s: raw for s in services} if isinstance(raw, int) else {s: raw[s] for s in services}


def _registered_blocks(contract: dict) -> list[str]:
    blocks = contract.get("blocks", [])
    return [str(i) for i in range(1, blocks + 1)] if isinstance(blocks, int) else [str(b) for b in blocks]


Rates = dict[str, dict[str, tuple[int, int]]]  # scope ("", "block-W41.", "slice-s1.") -> service -> (x, n)


def _complete(row: dict[str, str]) -> bool:
    return row["status"].strip() == "ok"


def rate_id(scope: str, service: str, measure: str = "first_pass_rate") -> str:
    return f"{RUN_ID}.{scope}{service}.{measure}"


def expected_rates(contract: dict, services: list[str], log: list[dict[str, str]],
                   passed: Callable[[dict[str, str]], bool] = _passed) -> tuple[Rates, list[str]]:
    """(passes, denominator) of every first_pass_rate claim (``passed``: what counts; a
    score run's completed claims count complete returns), by the counting rules:
    formal first submissions not excluded; overall denominator max(planned - excluded,
    logged); a block's max(planned / blocks - its excluded, logged) when the plan divides evenly over
    the registered blocks, else logged; a slice's the logged count. Also the blocks
    (windows) in order."""
    planned = _planned(contract, services)
    counted = [r for r in log if _counted(r)]
    excluded = Counter(r["service"] for r in log if _first_formal(r) and _excluded(r))
    rates: Rates = {"": {}}
    for s in services:
        mine = [r for r in counted if r["service"] == s]
        rates[""][s] = (sum(map(passed, mine)), max(planned[s] - excluded[s], len(mine)))
    registered = _registered_blocks(contract)
    blocks = registered or sorted({r["block_id"] for r in counted}, key=_natural)
    for block in blocks:
        scope = rates[f"block-{block}."] = {}
        for s in services:
            mine = [r for r in counted if r["service"] == s and r["block_id"] == block]
            if registered and planned[s] % len(registered) == 0:
                # An excluded call leaves its block's share of the plan as it leaves the total.
                out = sum(1 for r in log if r["service"] == s and r["block_id"] == block
                          and _first_formal(r) and _excluded(r))
                den = max(planned[s] // len(registered) - out, len(mine))
            else:
                den = len(mine)
            scope[s] = (sum(map(passed, mine)), den)
    registered_slices = [str(s) for s in contract.get("slices", [])]
    seen = sorted({r.get("slice", "") for r in counted} - {""} - set(registered_slices))
    for name in registered_slices + seen:
        scope = rates[f"slice-{name}."] = {}
        for s in services:
            mine = [r for r in counted if r["service"] == s and r.get("slice", "") == name]
            scope[s] = (sum(map(passed, mine)), len(mine))
    return rates, blocks


def oracle_failures(claims: dict[str, dict], contract: dict, services: list[str],
                    log: list[dict[str, str]]) -> list[Failure]:
    failures: list[Failure] = []
    alpha = contract.get("alpha", 0.05)
    scored = contract.get("primary_metric") == "score"
    rates, blocks = expected_rates(contract, services, log, _complete if scored else _passed)
    # A score run's calls are scored, not passed: no claim counts passes; each service
    # says (overall) how many of its planned calls completed, over the same denominator.
    measure = "completed" if scored else "first_pass_rate"
    expected_ids = {rate_id(scope, s, measure): xn for scope, per in rates.items() for s, xn in per.items()
                    if not scored or scope == ""}
    # Every such claim is one the oracle expects, and the other way round.
    kinds = (".completed", ".first_pass_rate", ".complete_pass_rate") if scored else (".first_pass_rate",)
    published = {cid for cid in claims if cid.endswith(kinds)}
    for cid in sorted(published ^ set(expected_ids)):
        failures.append(Failure("rate-claims-set", f"{cid}: {'not expected' if cid in published else 'missing'}"))
    for cid, (x, n) in expected_ids.items():
        if cid in claims:
            failures += _rate_failures(cid, claims[cid], x, n, 1 - alpha)
    design = contract["design"]
    candidates = contract["candidates"] if isinstance(contract["candidates"], list) else [contract["candidates"]]
    baseline = contract["baseline"]
    if design in ("paired", "repeated"):
        return failures + paired_failures(claims, contract, services, log)
    if contract.get("primary_metric") == "score":
        return failures + welch_failures(claims, contract, services, log)
    # Fisher's exact test of each comparison of two independent rates, overall, per block, per slice.
    for scope, per in rates.items():
        for cand in candidates:
            cid = f"{RUN_ID}.{scope}{cand}_vs_{baseline}.fisher"
            (xc, nc), (xb, nb) = per[cand], per[baseline]
            failures += _fisher_failures(cid, claims.get(cid), [[xc, nc - xc], [xb, nb - xb]])
    # Several candidates: the overall p-values adjusted together (Holm).
    raw = [claims.get(f"{RUN_ID}.{cand}_vs_{baseline}.fisher", {}).get("p_value") for cand in candidates]
    if len(candidates) > 1 and None not in raw:
        expected = multipletests(raw, method="holm")[1]
        for cand, want in zip(candidates, expected):
            cid = f"{RUN_ID}.{cand}_vs_{baseline}.fisher"
            got = claims[cid].get("adjusted_p_value")
            if not _close(got, float(want)):
                failures.append(Failure("oracle-holm", f"{cid}: adjusted_p_value {got}, statsmodels "
                                        f"multipletests(holm) gives {float(want)} from raw {raw}"))
    if design == "longitudinal":
        failures += _change_failures(claims, services, rates, blocks)
    return failures


def _compared_scores(contract: dict, rows: list[dict[str, str]], n_planned: int) -> list[float]:
    """A service's scores as compared between independent samples: every complete return's
    score, and failure_score for each other planned call when the contract registers one."""
    scores = [float(r["score"]) for r in rows if r["status"] == "ok" and (r.get("score") or "").strip()]
    failure = contract.get("failure_score")
    complete = sum(1 for r in rows if r["status"] == "ok")
    return scores + ([float(failure)] * (max(n_planned, len(rows)) - complete) if failure is not None else [])


def welch_failures(claims: dict[str, dict], contract: dict, services: list[str],
                   log: list[dict[str, str]]) -> list[Failure]:
    """Each overall score comparison against scipy's Welch test and interval, and Holm
    across a leaderboard's candidates (statsmodels)."""
    out: list[Failure] = []
    planned = _planned(contract, services)
    excluded = Counter(r["service"] for r in log if _first_formal(r) and _excluded(r))
    counted = [r for r in log if _counted(r)]
    values = {s: _compared_scores(contract, [r for r in counted if r["service"] == s], planned[s] - excluded[s])
              for s in services}
    baseline = contract["baseline"]
    candidates = contract["candidates"] if isinstance(contract["candidates"], list) else [contract["candidates"]]
    level = 1 - contract.get("alpha", 0.05)
    raw = {}
    for cand in candidates:
        cid = f"{RUN_ID}.{cand}_vs_{baseline}"
        b, a = values[cand], values[baseline]
        test, diff = claims.get(cid + ".welch"), claims.get(cid + ".difference")
        if test is None or diff is None:
            out.append(Failure("oracle-welch", f"{cid}: no Welch test or difference published"))
            continue
        if len(b) < 2 or len(a) < 2 or (len(set(b)) == 1 and len(set(a)) == 1):
            if test.get("p_value") is not None:
                out.append(Failure("oracle-welch", f"{cid}: p = {test.get('p_value')} from samples {b} vs {a}, "
                                   "which define no Welch test"))
            continue
        oracle = sps.ttest_ind(b, a, equal_var=False)
        low, high = oracle.confidence_interval(level)
        interval = diff.get("interval") or {}
        if not (_close(test.get("p_value"), float(oracle.pvalue)) and _close(interval.get("low"), float(low))
                and _close(interval.get("high"), float(high))):
            out.append(Failure("oracle-welch", f"{cid}: p {test.get('p_value')} [{interval.get('low')}, "
                               f"{interval.get('high')}], scipy ttest_ind(equal_var=False) gives {oracle.pvalue} "
                               f"[{low}, {high}] from {b} vs {a}"))
        raw[cand] = float(oracle.pvalue)
    if len(candidates) > 1 and raw:
        expected = multipletests(list(raw.values()), method="holm")[1]
        for cand, want in zip(raw, expected):
            got = claims[f"{RUN_ID}.{cand}_vs_{baseline}.welch"].get("adjusted_p_value")
            if not _close(got, float(want)):
                out.append(Failure("oracle-holm", f"{cand}: Welch adjusted p {got}, statsmodels holm gives {want}"))
    return out


def _rate_failures(cid: str, c: dict, x: int, n: int, level: float) -> list[Failure]:
    out = []
    if (c["numerator"], c["denominator"]) != (x, n):
        out.append(Failure("oracle-rate-counts", f"{cid}: {c['numerator']}/{c['denominator']}, the log gives {x}/{n}"))
        return out
    interval = c.get("interval") or {}
    if n == 0:
        if c.get("estimate") is not None:
            out.append(Failure("oracle-wilson", f"{cid}: a rate of 0/0 has estimate {c['estimate']}"))
        return out
    low, high = proportion_confint(x, n, alpha=1 - level, method="wilson")
    if not (_close(c.get("estimate"), x / n) and _close(interval.get("low"), float(low))
            and _close(interval.get("high"), float(high))):
        out.append(Failure("oracle-wilson", f"{cid}: {c.get('estimate')} [{interval.get('low')}, "
                           f"{interval.get('high')}], statsmodels wilson gives {x / n} [{low}, {high}] "
                           f"at level {level}"))
    if interval.get("confidence_level") is None or abs(interval["confidence_level"] - level) > TOLERANCE:
        out.append(Failure("oracle-wilson", f"{cid}: confidence level {interval.get('confidence_level')}, "
                           f"the contract's 1 - alpha is {level}"))
    return out


def _fisher_failures(cid: str, c: dict | None, table: list[list[int]]) -> list[Failure]:
    if c is None:
        return [Failure("oracle-fisher", f"{cid}: missing from results.json (table {table})")]
    want = float(sps.fisher_exact(table).pvalue)
    if not _close(c.get("p_value"), want):
        return [Failure("oracle-fisher", f"{cid}: p_value {c.get('p_value')}, scipy fisher_exact{table} gives {want}")]
    return []


def _change_failures(claims, services, rates: Rates, blocks: list[str]) -> list[Failure]:
    """A longitudinal service's change from the first to the last populated window."""
    populated = [b for b in blocks if any(n for _, n in rates[f"block-{b}."].values())]
    out = []
    for s in services:
        cid = f"{RUN_ID}.{s}.change.fisher"
        if len(populated) < 2:
            if cid in claims:
                out.append(Failure("oracle-change", f"{cid}: a change with fewer than two populated windows"))
            continue
        x1, n1 = rates[f"block-{populated[0]}."][s]
        x2, n2 = rates[f"block-{populated[-1]}."][s]
        out += _fisher_failures(cid, claims.get(cid), [[x2, n2 - x2], [x1, n1 - x1]])
        change = claims.get(f"{RUN_ID}.{s}.change")
        if change is not None and n1 and n2 and not _close(change.get("estimate"), x2 / n2 - x1 / n1):
            out.append(Failure("oracle-change", f"{RUN_ID}.{s}.change: estimate {change.get('estimate')}, the log "
                               f"gives {x2}/{n2} - {x1}/{n1}"))
    return out


def _unit_values(contract: dict, services: list[str], log: list[dict[str, str]]):
    """Per unit (pair or task): the baseline's and the candidate's value, None when left out."""
    score = contract.get("primary_metric") == "score"
    failure_score = contract.get("failure_score")
    baseline, candidate = contract["baseline"], contract["candidates"][0]
    counted = [r for r in log if _counted(r) and r["service"] in (baseline, candidate)]

    def value(row):
        if not score:
            return 0.0 if row is None else float(_passed(row))
        if row is not None and row["status"] == "ok" and row.get("score", "").strip():
            return float(row["score"])
        if failure_score is not None and (row is None or row["status"] != "ok"):
            return float(failure_score)
        return None

    units: dict[str, dict[str, list]] = defaultdict(lambda: {baseline: [], candidate: []})
    if contract["design"] == "paired":
        for r in counted:
            units[r["pair_id"]][r["service"]].append(r)
        out = {}
        for unit, sides in units.items():
            out[unit] = tuple(value(sides[s][0] if sides[s] else None) for s in (baseline, candidate))
        return out
    for r in counted:
        units[r["task_id"]][r["service"]].append(r)
    out = {}
    for unit, sides in units.items():
        means = []
        for s in (baseline, candidate):
            kept = [v for v in (value(r) for r in sides[s]) if v is not None]
            means.append(sum(kept) / len(kept) if kept else None)
        out[unit] = tuple(means)
    return out


def paired_failures(claims, contract, services, log) -> list[Failure]:
    """The paired t interval and test (scipy ttest_rel on the units), the 2x2 table and the
    exact McNemar test (scipy binomtest), and no decision from one unit or equal differences."""
    baseline, candidate = contract["baseline"], contract["candidates"][0]
    key = f"{RUN_ID}.{candidate}_vs_{baseline}"
    level = 1 - contract.get("alpha", 0.05)
    units = _unit_values(contract, services, log)
    usable = [(b, c) for b, c in units.values() if b is not None and c is not None]
    out = []
    d = claims.get(f"{key}.paired_difference")
    if d is None:
        return [Failure("oracle-paired", f"{key}.paired_difference: missing from results.json")]
    if d.get("numerator") != len(usable):
        out.append(Failure("oracle-paired", f"{key}.paired_difference: {d.get('numerator')} units, the log gives "
                           f"{len(usable)}"))
    diffs = [c - b for b, c in usable]
    if len(usable) >= 2 and max(diffs) - min(diffs) > 1e-12:
        t = sps.ttest_rel([c for _, c in usable], [b for b, _ in usable])
        ci = t.confidence_interval(level)
        interval = d.get("interval") or {}
        got = (d.get("estimate"), interval.get("low"), interval.get("high"), d.get("p_value"))
        want = (sum(diffs) / len(diffs), float(ci.low), float(ci.high), float(t.pvalue))
        if not all(_close(g, w) for g, w in zip(got, want)):
            out.append(Failure("oracle-paired", f"{key}.paired_difference: (estimate, low, high, p) {got}, scipy "
                               f"ttest_rel gives {want}"))
    elif claims.get(f"{key}.verdict", {}).get("verdict") not in (None, "not_decidable", "blocked_by_critical"):
        # One unit, or every difference equal: the interval has no width, so nothing is decided.
        # "verdict-float-ties": the differences are equal in the log's decimals but not in
        # binary floating point (1/3 - 0 against 2/3 - 1/3), which the build must not read as spread.
        category = "verdict-float-ties" if len(usable) >= 2 and len(set(diffs)) > 1 else "verdict-undecidable"
        out.append(Failure(category, f"{key}.verdict: {claims[key + '.verdict']['verdict']!r} from "
                           f"{len(usable)} units with differences {sorted(set(diffs))}: no interval can show that"))
    if contract.get("primary_metric") != "score" and contract["design"] == "paired":
        only_c = sum(1 for b, c in usable if c > b)
        only_b = sum(1 for b, c in usable if b > c)
        for name, want in (("only_candidate", only_c), ("only_baseline", only_b)):
            cell = claims.get(f"{key}.pairs.{name}")
            if cell is None or cell.get("numerator") != want:
                out.append(Failure("oracle-mcnemar", f"{key}.pairs.{name}: {None if cell is None else cell.get('numerator')}"
                                   f", the log gives {want}"))
        m = claims.get(f"{key}.mcnemar")
        want_p = float(sps.binomtest(only_c, only_c + only_b, 0.5).pvalue) if only_c + only_b else 1.0
        if m is None or not _close(m.get("p_value"), want_p):
            out.append(Failure("oracle-mcnemar", f"{key}.mcnemar: p_value {None if m is None else m.get('p_value')}, "
                               f"scipy binomtest({only_c}, {only_c + only_b}) gives {want_p}"))
    return out


# ------------------------------------------------------------------ shrinking (for the script)

def smaller(spec: Spec) -> list[Spec]:
    """Simpler variants of ``spec`` that are still valid sources: the contract's options
    back to their defaults first (cheap, rarely the cause), then fewer services, blocks
    and rows, then simpler outcomes."""
    out: list[Spec] = []
    rows = list(spec.rows)
    for name, default in (("resamples", None), ("min_useful_effect", None), ("noninferiority_margin", None),
                          ("higher_is_better", None), ("alpha", 0.05), ("failure_score", None)):
        if getattr(spec, name) != default:
            out.append(dataclasses.replace(spec, **{name: default}))
    simple_rows = tuple(dataclasses.replace(r, artifact=False, disputed=False) for r in rows if not r.phase)
    if simple_rows != spec.rows:
        out.append(dataclasses.replace(spec, rows=simple_rows))
    if any(r.attempt > 1 for r in rows):
        out.append(dataclasses.replace(spec, retry=None, rows=tuple(r for r in rows if r.attempt == 1)))
    if spec.exclusion_rules:
        out.append(dataclasses.replace(spec, exclusion_rules=(),
                                       rows=tuple(dataclasses.replace(r, excluded=False) for r in rows)))
    if spec.slices or any(r.slice for r in rows):
        out.append(dataclasses.replace(spec, slices=(), rows=tuple(dataclasses.replace(r, slice="") for r in rows)))
    if len(spec.candidates) > 1:  # fewer candidates (keeping at least one)
        for cand in spec.candidates:
            out.append(_without_service(spec, cand))
    if len(spec.blocks) > 1:
        for block in spec.blocks:
            kept = tuple(r for r in rows if r.block != block)
            out.append(dataclasses.replace(spec, blocks=tuple(b for b in spec.blocks if b != block),
                                           blocks_form="list" if spec.blocks_form == "count" else spec.blocks_form,
                                           rows=kept))
    # Chunks of rows (halves, quarters, ...), down to single rows.
    n = len(rows)
    size = n // 2
    while size >= 1:
        for start in range(0, n, size):
            out.append(dataclasses.replace(spec, rows=tuple(rows[:start] + rows[start + size:])))
        size //= 2
    logged = Counter(r.service for r in rows if r.attempt == 1 and not r.phase)
    exact = tuple((s, max(1, logged[s])) for s, _ in spec.planned)
    if exact != spec.planned:
        out.append(dataclasses.replace(spec, planned=exact))
    for i, r in enumerate(rows):  # a technical failure becomes a plain failure
        if r.outcome in TECHNICAL and r.attempt == 1:
            out.append(dataclasses.replace(spec, rows=tuple(rows[:i] + [dataclasses.replace(
                r, outcome="fail", score=("1" if spec.metric == "score" else ""))] + rows[i + 1:])))
    return [s for s in out if _valid(s)]


def _without_service(spec: Spec, service: str) -> Spec:
    return dataclasses.replace(spec, candidates=tuple(c for c in spec.candidates if c != service),
                               planned=tuple(p for p in spec.planned if p[0] != service),
                               rows=tuple(r for r in spec.rows if r.service != service))


def _valid(spec: Spec) -> bool:
    if not any(r.attempt == 1 and not r.phase for r in spec.rows):
        return False
    if spec.blocks_form == "count" and spec.blocks != tuple(str(i) for i in range(1, len(spec.blocks) + 1)):
        return False
    if spec.blocks_form != "absent" and not spec.blocks:
        return False
    return bool(spec.exclusion_rules) or not any(r.excluded for r in spec.rows)


def shrink(spec: Spec, still_fails, budget: int) -> tuple[Spec, int]:
    """Greedy shrinking: move to the first simpler variant for which ``still_fails``
    holds, until none does or ``budget`` builds are spent (a variant is built once).
    Returns the smallest failing spec found and the number of builds used."""
    used = 0
    tried: set[str] = set()
    improved = True
    while improved and used < budget:
        improved = False
        for candidate in smaller(spec):
            key = repr(candidate)
            if key in tried:
                continue
            if used >= budget:
                break
            tried.add(key)
            used += 1
            if still_fails(candidate):
                spec, improved = candidate, True
                break
    return spec, used


def describe(spec: Spec) -> str:
    return (f"{spec.design}, {len(spec.services)} services, {len(spec.rows)} rows, blocks {spec.blocks} "
            f"({spec.blocks_form}), metric {spec.metric}")

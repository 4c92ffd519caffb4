"""``reportgen.toml`` and ``run.toml`` -> frozen SiteConfig and RunContract.

Loading is separate from the call log so that every contract problem is reported
together with every log problem (see ``validate.load_source``).
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from reportgen.errors import Collector
from reportgen.model.config import (
    DESIGNS,
    METRICS,
    PAIRED_DESIGNS,
    SAFE_ID,
    RunContract,
    Service,
    SiteConfig,
    _line_of,
    parse_timestamp,
)


def read_toml(path: Path, rel: str, problems: Collector) -> tuple[dict[str, Any], str] | None:
    """The parsed table and the text it came from (kept for line numbers in messages)."""
    try:
        text = path.read_text(encoding="utf-8")
        return tomllib.loads(text), text
    except FileNotFoundError:
        problems.add(rel, 0, "", "file not found")
    except tomllib.TOMLDecodeError as exc:
        line = _toml_error_line(str(exc))
        problems.add(rel, line, "", f"not valid TOML: {exc}")
    except (OSError, UnicodeDecodeError) as exc:
        problems.add(rel, 0, "", f"cannot be read: {exc}")
    return None


def _toml_error_line(message: str) -> int:
    match = re.search(r"line (\d+)", message)
    return int(match.group(1)) if match else 0


def load_site_config(source: Path, problems: Collector) -> SiteConfig | None:
    rel = "reportgen.toml"
    read = read_toml(source / rel, rel, problems)
    if read is None:
        return None
    data, text = read

    def bad(key: str, message: str) -> None:
        problems.add(rel, _line_of(text, key), key, message)

    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        bad("title", "required: a non-empty string naming the report")
        title = ""
    version = data.get("version", "v1")
    if not isinstance(version, str) or not SAFE_ID.match(version):
        bad("version", f"{version!r} is not a usable version label (letters, digits, '.', '_', '-')")
        version = "v1"
    theme = data.get("theme", "default")
    if not isinstance(theme, str) or not theme:
        bad("theme", "must be a theme name or folder")
        theme = "default"
    experiments = data.get("experiments")
    if experiments is not None:
        if not isinstance(experiments, list) or not all(isinstance(e, str) and SAFE_ID.match(e) for e in experiments):
            bad("experiments", "must be a list of experiment folder names")
            experiments = None
        else:
            experiments = tuple(experiments)
    base_url = data.get("base_url", "")
    if not isinstance(base_url, str):
        bad("base_url", "must be a string")
        base_url = ""
    built_at = data.get("built_at")
    if built_at is not None:
        if isinstance(built_at, datetime):
            built_at = built_at.isoformat()
        if not isinstance(built_at, str) or parse_timestamp(built_at) is None:
            bad("built_at", "must be an ISO 8601 date and time with a UTC offset")
            built_at = None
    previous = data.get("previous")
    if previous is not None and (not isinstance(previous, str) or not SAFE_ID.match(previous)):
        bad("previous", f"{previous!r} is not a version label")
        previous = None
    if previous is not None and previous == version:
        bad("previous", "a version cannot supersede itself")
        previous = None
    return SiteConfig(title, version, theme, experiments, base_url, built_at, previous)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def load_contract(folder: Path, rel_folder: str, problems: Collector) -> RunContract | None:
    rel = f"{rel_folder}/run.toml"
    read = read_toml(folder / "run.toml", rel, problems)
    if read is None:
        return None
    data, text = read
    run = data.get("run")
    if not isinstance(run, dict):
        problems.add(rel, 0, "run", "missing [run] table: the contract needs run.id, run.design, ...")
        return None

    def bad(key: str, message: str) -> None:
        problems.add(rel, _line_of(text, key), key, message)

    def string(key: str, required: bool = True, default: str | None = None) -> str | None:
        value = run.get(key, default)
        if value is None:
            if required:
                bad(f"run.{key}", "required")
            return None
        if isinstance(value, datetime):
            value = value.isoformat()
        if not isinstance(value, str):
            bad(f"run.{key}", f"must be a string, got {value!r}")
            return None
        return value

    def number(key: str, low: float | None = None, high: float | None = None) -> float | None:
        value = run.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            bad(f"run.{key}", f"must be a number, got {value!r}")
            return None
        if (low is not None and value <= low) or (high is not None and value >= high):
            bad(f"run.{key}", f"must be between {low} and {high} (exclusive), got {value!r}")
            return None
        return float(value)

    run_id = string("id") or ""
    if run_id and run_id != rel_folder.rsplit("/", 1)[-1]:
        bad("run.id", f"{run_id!r} differs from the experiment folder name {rel_folder.rsplit('/', 1)[-1]!r}")
    design = string("design") or ""
    if design and design not in DESIGNS:
        bad("run.design", f"{design!r} is not one of {', '.join(DESIGNS)}")
    phase = string("phase", default="formal") or "formal"
    if phase not in ("pilot", "formal"):
        bad("run.phase", f"must be 'pilot' or 'formal', got {phase!r}")
    registered_at = string("registered_at") or ""
    if registered_at and parse_timestamp(registered_at) is None:
        bad("run.registered_at", f"{registered_at!r} is not an ISO 8601 time with a UTC offset")
    primary_metric = string("primary_metric", default="first_pass_rate") or "first_pass_rate"
    if primary_metric not in METRICS:
        bad("run.primary_metric", f"{primary_metric!r} is not one of {', '.join(METRICS)}")
    elif primary_metric == "score" and design not in PAIRED_DESIGNS:
        bad("run.primary_metric", f"a numeric score is analysed in the paired or repeated designs; "
            f"the {design} design compares pass rates (use 'first_pass_rate')")
    higher = run.get("higher_is_better", True)
    if not isinstance(higher, bool):
        bad("run.higher_is_better", f"must be true or false, got {higher!r}")
        higher = True
    alpha = number("alpha", 0.0, 1.0)
    if alpha is None and "alpha" not in run:
        alpha = 0.05
    alpha = alpha if alpha is not None else 0.05

    services = _load_services(data, rel, text, problems)
    service_ids = [s.id for s in services]
    baseline = string("baseline") or ""
    candidates = run.get("candidates", [])
    if isinstance(candidates, str):
        candidates = [candidates]
    if not isinstance(candidates, list) or not candidates or not all(isinstance(c, str) for c in candidates):
        bad("run.candidates", "required: a list of candidate service ids")
        candidates = []
    for key, ids in (("run.baseline", [baseline] if baseline else []), ("run.candidates", candidates)):
        for sid in ids:
            if sid not in service_ids:
                bad(key, f"{sid!r} is not a [[service]] id (known: {', '.join(service_ids) or 'none'})")
    if design in ("independent", *PAIRED_DESIGNS) and len(candidates) != 1:
        bad("run.candidates", f"the {design} design compares exactly one candidate with the baseline")
    bootstrap = run.get("bootstrap", {})
    if not isinstance(bootstrap, dict):
        bad("run.bootstrap", "must be a table {resamples = 10000, seed = 20261001}")
        bootstrap = {}
    resamples, seed = bootstrap.get("resamples", 10_000), bootstrap.get("seed")
    if not isinstance(resamples, int) or isinstance(resamples, bool) or not 100 <= resamples <= 1_000_000:
        bad("run.bootstrap", f"resamples must be an integer from 100 to 1,000,000, got {resamples!r}")
        resamples = 10_000
    if seed is None:  # a fixed seed per run, so the build stays deterministic
        seed = int(hashlib.sha256(run_id.encode()).hexdigest()[:8], 16)
    elif not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        bad("run.bootstrap", f"seed must be a non-negative integer, got {seed!r}")
        seed = 0

    planned_raw = run.get("planned_calls")
    planned: dict[str, int] = {}
    if isinstance(planned_raw, int) and not isinstance(planned_raw, bool) and planned_raw > 0:
        planned = {sid: planned_raw for sid in service_ids}
    elif isinstance(planned_raw, dict):
        for sid, value in planned_raw.items():
            if sid not in service_ids:
                bad("run.planned_calls", f"{sid!r} is not a [[service]] id")
            elif not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                bad("run.planned_calls", f"{sid}: must be a positive integer, got {value!r}")
            else:
                planned[sid] = value
        for sid in service_ids:
            if sid not in planned_raw:
                bad("run.planned_calls", f"no planned count for service {sid!r}")
    else:
        bad("run.planned_calls", "required: a positive integer per service, or a table {service = n}")

    blocks = run.get("blocks", [])
    if isinstance(blocks, int) and not isinstance(blocks, bool):
        blocks = [str(i) for i in range(1, blocks + 1)]
    if not isinstance(blocks, list):
        bad("run.blocks", "must be a list of block ids or a number of blocks")
        blocks = []
    blocks = [str(b) for b in blocks]

    for key in ("window_start", "window_end"):
        value = string(key, required=False)
        if value and parse_timestamp(value) is None:
            bad(f"run.{key}", f"{value!r} is not an ISO 8601 time with a UTC offset")
    concurrency = run.get("concurrency")
    if concurrency is not None and (not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1):
        bad("run.concurrency", f"must be a positive integer, got {concurrency!r}")
        concurrency = None
    exclusion_rules = run.get("exclusion_rules", [])
    if not isinstance(exclusion_rules, list) or not all(isinstance(r, str) for r in exclusion_rules):
        bad("run.exclusion_rules", "must be a list of strings")
        exclusion_rules = []
    block_on_critical = run.get("block_on_critical", False)
    if not isinstance(block_on_critical, bool):
        bad("run.block_on_critical", f"must be true or false, got {block_on_critical!r}")
        block_on_critical = False
    candidates_tried = run.get("candidates_tried")
    if candidates_tried is not None and (not isinstance(candidates_tried, int) or isinstance(candidates_tried, bool) or candidates_tried < 1):
        bad("run.candidates_tried", f"must be a positive integer, got {candidates_tried!r}")
        candidates_tried = None
    slices = run.get("slices", [])
    if not isinstance(slices, list) or not all(isinstance(x, str) and x for x in slices):
        bad("run.slices", "must be a list of slice names (values of the log's slice column)")
        slices = []
    failure_score = run.get("failure_score")
    if failure_score is not None and (isinstance(failure_score, bool) or not isinstance(failure_score, (int, float))):
        bad("run.failure_score", f"must be a number (the score a technical failure counts as), got {failure_score!r}")
        failure_score = None
    tasks = data.get("task", [])
    tasks = [tasks] if isinstance(tasks, dict) else tasks
    if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        bad("task", "must be a [task] table or [[task]] tables")
        tasks = []
    environment = data.get("environment", {})
    if not isinstance(environment, dict):
        bad("environment", "must be a table")
        environment = {}

    return RunContract(
        id=run_id, title=string("title", required=False) or run_id,
        question=string("question") or "", phase=phase, registered_at=registered_at,
        design=design, primary_metric=primary_metric, higher_is_better=higher,
        baseline=baseline, candidates=tuple(candidates), alpha=alpha,
        # A rate's thresholds are fractions; a score's are on the score's own scale.
        min_useful_effect=number("min_useful_effect", *((None, None) if primary_metric == "score" else (-1.0, 1.0))),
        noninferiority_margin=number("noninferiority_margin", 0.0, None if primary_metric == "score" else 1.0),
        planned_calls=MappingProxyType(planned), blocks=tuple(blocks),
        window_start=string("window_start", required=False),
        window_end=string("window_end", required=False),
        order=string("order", required=False), timeout_s=number("timeout_s", 0.0),
        retry=string("retry", required=False), concurrency=concurrency,
        exclusion_rules=tuple(exclusion_rules), dispute_rule=string("dispute_rule", required=False),
        block_on_critical=block_on_critical, candidates_tried=candidates_tried,
        slices=tuple(slices), failure_score=None if failure_score is None else float(failure_score),
        bootstrap_resamples=resamples, bootstrap_seed=seed,
        services=tuple(services), tasks=tuple(_freeze(t) for t in tasks),
        environment=_freeze(environment), raw=_freeze(data), text=text,
    )


def _load_services(data: dict[str, Any], rel: str, text: str, problems: Collector) -> list[Service]:
    raw = data.get("service")
    if not isinstance(raw, list) or not raw:
        problems.add(rel, 0, "service", "the contract needs at least one [[service]] table")
        return []
    services: list[Service] = []
    for index, entry in enumerate(raw, 1):
        if not isinstance(entry, dict):
            problems.add(rel, 0, f"service[{index}]", "must be a table")
            continue
        sid = entry.get("id")
        if not isinstance(sid, str) or not SAFE_ID.match(sid):
            problems.add(rel, _line_of(text, "id", "[[service]]", index), f"service[{index}].id",
                         f"{sid!r} is not a usable service id (letters, digits, '.', '_', '-'; "
                         "it names pages and files)")
            continue
        if sid in (s.id for s in services):
            problems.add(rel, 0, f"service[{index}].id", f"duplicate service id {sid!r}")
            continue
        params = entry.get("params", {})
        if not isinstance(params, dict):
            problems.add(rel, 0, f"service.{sid}.params", "must be a table")
            params = {}

        def text_field(key: str, default: str = "unknown") -> str:
            value = entry.get(key, default)
            return value if isinstance(value, str) else str(value)

        services.append(Service(
            id=sid, group=text_field("group", ""), requested_model=text_field("requested_model"),
            snapshot=text_field("snapshot"), params=_freeze(params),
        ))
    return services

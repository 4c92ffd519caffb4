"""``reportgen.toml`` and ``run.toml`` -> frozen SiteConfig and RunContract.

Loading is separate from the call log so that every contract problem is reported
together with every log problem (see ``validate.load_source``).
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from reportgen.errors import Collector
from reportgen.load.harness_table import harness_table, partial_credit_of
from reportgen.load.registered_plan import read_plan, read_schedule
from reportgen.model.config import (
    DEFAULT_VIEWPORT,
    DESIGNS,
    METRICS,
    PAIRED_DESIGNS,
    PHASES,
    SAFE_ID,
    Design,
    HarnessReported,
    Metric,
    Phase,
    RunContract,
    Service,
    UNKNOWN,
    SiteConfig,
    _line_of,
    parse_timestamp,
)

Message = str | Callable[[Any], str]  # a fixed text, or one built from the bad value


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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # TOML's true is not 1


class _Reader:
    """Typed reads of one parsed TOML table. A bad value is reported as ``file:line:
    field: message`` (the field named ``prefix + key``) and read as a fallback, so
    that loading goes on and every problem is reported at once."""

    def __init__(self, table: dict[str, Any], text: str, rel: str, problems: Collector, prefix: str = ""):
        self.table, self.text, self.rel, self.problems, self.prefix = table, text, rel, problems, prefix

    def get(self, key: str, default: Any = None) -> Any:
        return self.table.get(key, default)

    def bad(self, key: str, message: str) -> None:
        field = self.prefix + key
        self.problems.add(self.rel, _line_of(self.text, field), field, message)

    def check(self, key: str, ok: Callable[[Any], Any], message: Message, default: Any = None,
              fallback: Any = None) -> Any:
        """The value (``default`` when absent) if ``ok`` accepts it; else ``fallback``
        (``default`` unless given)."""
        value = self.table.get(key, default)
        if ok(value):
            return value
        self.bad(key, message if isinstance(message, str) else message(value))
        return default if fallback is None else fallback

    def string(self, key: str, required: bool = True, default: str | None = None) -> str | None:
        value = self.table.get(key, default)
        if value is None:
            if required:
                self.bad(key, "required")
            return None
        if isinstance(value, datetime):
            value = value.isoformat()
        if not isinstance(value, str):
            self.bad(key, f"must be a string, got {value!r}")
            return None
        return value

    def choice(self, key: str, options: tuple[str, ...], default: str | None = None,
               message: Callable[[str], str] | None = None) -> str:
        """A string from ``options``; without a default it is required ("" when missing)."""
        value = self.string(key, required=default is None, default=default) or default or ""
        if value and value not in options:
            self.bad(key, message(value) if message else f"{value!r} is not one of {', '.join(options)}")
        return value

    def timestamp(self, key: str, required: bool = True) -> str:
        value = self.string(key, required=required) or ""
        if value and parse_timestamp(value) is None:
            self.bad(key, f"{value!r} is not an ISO 8601 time with a UTC offset")
        return value

    def flag(self, key: str, default: bool) -> bool:
        return self.check(key, lambda v: isinstance(v, bool), lambda v: f"must be true or false, got {v!r}", default)

    def number(self, key: str, low: float | None = None, high: float | None = None,
               what: str = "a number") -> float | None:
        value = self.table.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.bad(key, f"must be {what}, got {value!r}")
            return None
        if not math.isfinite(value):  # TOML has nan and inf: every comparison with nan is false
            self.bad(key, f"must be {what}, finite, got {value!r}")
            return None
        if (low is not None and value <= low) or (high is not None and value >= high):
            self.bad(key, f"must be between {low} and {high} (exclusive), got {value!r}")
            return None
        return float(value)

    def positive_int(self, key: str) -> int | None:
        return self.check(key, lambda v: v is None or (_is_int(v) and v >= 1),
                          lambda v: f"must be a positive integer, got {v!r}")

    def str_list(self, key: str, message: str, item: Callable[[str], Any] = bool) -> tuple[str, ...] | None:
        """A list of strings each ``item`` accepts (by default: non-empty); None when absent or bad."""
        value = self.table.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) and item(v) for v in value):
            self.bad(key, message)
            return None
        return tuple(value)

    def table_of(self, key: str, message: str = "must be a table") -> dict[str, Any]:
        return self.check(key, lambda v: isinstance(v, dict), message, {})


def load_site_config(source: Path, problems: Collector, version_label: str | None = None) -> SiteConfig | None:
    """reportgen.toml; ``version_label`` (``build --version``) replaces its version, before
    the version is checked against the one it supersedes."""
    rel = "reportgen.toml"
    read = read_toml(source / rel, rel, problems)
    if read is None:
        return None
    site = _Reader(*read, rel, problems)
    title = site.check("title", lambda v: isinstance(v, str) and v.strip(),
                       "required: a non-empty string naming the report", fallback="")
    version = site.check("version", _is_label, lambda v: f"{v!r} is not a usable version label "
                         "(letters, digits, '.', '_', '-')", default="v1")
    version = version_label or version
    theme = site.check("theme", lambda v: isinstance(v, str) and v, "must be a theme name or folder", "default")
    experiments = site.str_list("experiments", "must be a list of experiment folder names", SAFE_ID.match)
    base_url = site.check("base_url", lambda v: isinstance(v, str), "must be a string", "")
    built_at = _built_at(site)
    previous = site.check("previous", lambda v: v is None or _is_label(v), lambda v: f"{v!r} is not a version label")
    if previous is not None and previous == version:
        given = f" (version {version!r} is given to the build)" if version_label else ""
        site.bad("previous", f"a version cannot supersede itself{given}")
        previous = None
    return SiteConfig(title, version, theme, experiments, base_url, built_at, previous, _audit_table(site))


AUDIT_KEYS = ("not_credentials",)


def _audit_table(site: _Reader) -> tuple[str, ...]:
    """``[audit] not_credentials``: each a non-empty string, matched exactly."""
    table = site.get("audit")
    if table is None:
        return ()
    if not isinstance(table, dict):
        site.bad("audit", "must be a table ([audit] with not_credentials = [\"...\"])")
        return ()

    def line(key: str) -> int:
        return _line_of(site.text, key, "[audit]")

    for key in sorted(table):
        if key not in AUDIT_KEYS:
            site.problems.add(site.rel, line(key), f"audit.{key}",
                              f"unknown key; [audit] takes {', '.join(AUDIT_KEYS)}")
    values = table.get("not_credentials", [])
    if not isinstance(values, list):
        site.problems.add(site.rel, line("not_credentials"), "audit.not_credentials",
                          f"must be a list of strings, got {values!r}")
        return ()
    bad = [(i, v) for i, v in enumerate(values) if not isinstance(v, str) or not v.strip()]
    for i, v in bad:
        site.problems.add(site.rel, line("not_credentials"), f"audit.not_credentials[{i}]",
                          f"must be a non-empty string (the exact text declared not a credential), got {v!r}")
    return () if bad else tuple(dict.fromkeys(values))


def _is_label(value: Any) -> bool:
    return isinstance(value, str) and SAFE_ID.match(value) is not None


def _built_at(site: _Reader) -> str | None:
    value = site.get("built_at")
    if isinstance(value, datetime):
        value = value.isoformat()
    if value is None or (isinstance(value, str) and parse_timestamp(value) is not None):
        return value
    site.bad("built_at", "must be an ISO 8601 date and time with a UTC offset")
    return None


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def load_contract(folder: Path, rel_folder: str, problems: Collector) -> RunContract | None:
    readers = _contract_readers(folder, rel_folder, problems)
    if readers is None:
        return None
    top, run = readers
    run_id = _run_id(run, rel_folder.rsplit("/", 1)[-1])
    design = run.choice("design", DESIGNS)
    phase = run.choice("phase", PHASES, "formal", lambda v: f"must be 'pilot' or 'formal', got {v!r}")
    # "unknown": the contract was written after the run (an import); the audit says so
    # beside every decision, and no page calls it pre-registered.
    registered_at = "unknown" if run.get("registered_at") == UNKNOWN else run.timestamp("registered_at")
    primary_metric = _primary_metric(run, design)
    higher = run.flag("higher_is_better", True)
    alpha = run.number("alpha", 0.0, 1.0)
    services = _load_services(top.table, top.rel, top.text, top.problems)
    service_ids = [s.id for s in services]
    baseline = run.string("baseline") or ""
    candidates = _candidates(run, design, baseline, service_ids)
    resamples, seed = _bootstrap(run, run_id)
    planned = _planned_calls(run, service_ids)
    blocks, block_count = _blocks(run)
    window_start = run.timestamp("window_start", required=False) or None
    window_end = run.timestamp("window_end", required=False) or None
    concurrency = run.positive_int("concurrency")
    exclusion_rules = run.str_list("exclusion_rules", "must be a list of strings", item=lambda _: True) or ()
    block_on_critical = run.flag("block_on_critical", False)
    candidates_tried = run.positive_int("candidates_tried")
    slices = run.str_list("slices", "must be a list of slice names (values of the log's slice column)") or ()
    failure_score = run.number("failure_score", what="a number (the score a technical failure counts as)")
    unmatched_units = run.choice("unmatched_units", UNMATCHED_UNITS, "count")
    tasks, environment = _tasks(top), top.table_of("environment")
    harness = harness_table(top, service_ids)
    partial_credit = partial_credit_of(run, primary_metric)
    title, question = run.string("title", required=False) or run_id, run.string("question") or ""
    # A rate's thresholds are fractions; a score's are on the score's own scale.
    score = primary_metric == "score"
    min_useful_effect = _magnitude(run, "min_useful_effect", None if score else 1.0)
    noninferiority_margin = _magnitude(run, "noninferiority_margin", None if score else 1.0, open_at_zero=True)
    order = run.string("order", required=False)
    run.number("timeout_s", 0.0)  # nothing uses it, but a bad value is still reported
    retry, dispute_rule = run.string("retry", required=False), run.string("dispute_rule", required=False)
    plan = read_plan(top.get("plan"), run.table, top.rel,
                     lambda key, table: _line_of(top.text, key, table) if table else 0, problems)
    schedule = read_schedule(folder, rel_folder, service_ids, problems)
    return RunContract(
        id=run_id, title=title, question=question, phase=cast(Phase, phase), registered_at=registered_at,
        design=cast(Design, design), primary_metric=cast(Metric, primary_metric), higher_is_better=higher,
        baseline=baseline, candidates=candidates, alpha=0.05 if alpha is None else alpha,
        min_useful_effect=min_useful_effect, noninferiority_margin=noninferiority_margin,
        planned_calls=MappingProxyType(planned), blocks=blocks, window_start=window_start, window_end=window_end,
        order=order, retry=retry, concurrency=concurrency, exclusion_rules=exclusion_rules,
        dispute_rule=dispute_rule, block_on_critical=block_on_critical, candidates_tried=candidates_tried,
        slices=slices, failure_score=failure_score, bootstrap_resamples=resamples, bootstrap_seed=seed,
        services=tuple(services), tasks=tasks, environment=_freeze(environment), raw=_freeze(top.table),
        text=top.text, block_count=block_count, unmatched_units=unmatched_units,
        render_viewport=_render_viewport(tasks, top),
        harness=harness, partial_credit=partial_credit, plan=plan, schedule=schedule,
    )


def _contract_readers(folder: Path, rel_folder: str, problems: Collector) -> tuple[_Reader, _Reader] | None:
    """Readers of the whole contract and of its [run] table; None (reported) without them."""
    rel = f"{rel_folder}/run.toml"
    read = read_toml(folder / "run.toml", rel, problems)
    if read is None:
        return None
    data, text = read
    if not isinstance(data.get("run"), dict):
        problems.add(rel, 0, "run", "missing [run] table: the contract needs run.id, run.design, ...")
        return None
    return _Reader(data, text, rel, problems), _Reader(data["run"], text, rel, problems, "run.")


def _run_id(run: _Reader, folder_name: str) -> str:
    run_id = run.string("id") or ""
    if run_id and run_id != folder_name:
        run.bad("id", f"{run_id!r} differs from the experiment folder name {folder_name!r}")
    return run_id


UNMATCHED_UNITS = ("count", "leave_out")


def _primary_metric(run: _Reader, design: str) -> str:
    metric = run.choice("primary_metric", METRICS, "first_pass_rate")
    # A score is compared by paired differences (paired, repeated) or as two independent
    # samples (independent, leaderboard); the change between windows is of pass rates.
    if metric == "score" and design == "longitudinal":
        run.bad("primary_metric", "a numeric score is not analysed in the longitudinal design, whose change "
                "between windows compares pass rates (use 'first_pass_rate')")
    return metric


def _candidates(run: _Reader, design: str, baseline: str, service_ids: list[str]) -> tuple[str, ...]:
    candidates = run.get("candidates", [])
    if isinstance(candidates, str):
        candidates = [candidates]
    if not isinstance(candidates, list) or not all(isinstance(c, str) for c in candidates) or (
            not candidates and not (design == "independent" and len(service_ids) == 1)):
        # Empty only for an independent run of one service: it reports rates, compares nothing.
        run.bad("candidates", "required: a list of candidate service ids")
        candidates = []
    for key, ids in (("baseline", [baseline] if baseline else []), ("candidates", candidates)):
        for sid in ids:
            if sid not in service_ids:
                run.bad(key, f"{sid!r} is not a [[service]] id (known: {', '.join(service_ids) or 'none'})")
    if design in ("independent", *PAIRED_DESIGNS) and len(candidates) != 1 and not (
            design == "independent" and len(service_ids) == 1):
        run.bad("candidates", f"the {design} design compares exactly one candidate with the baseline")
    return tuple(candidates)


def _magnitude(run: _Reader, key: str, high: float | None, open_at_zero: bool = False) -> float | None:
    """A threshold given as a magnitude in the direction of better: a negative one is
    refused rather than silently flipped (higher_is_better already says which way)."""
    raw = run.table.get(key)
    negative = isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw < 0
    value = run.number(key, 0.0 if open_at_zero and not negative else None, high)
    if value is not None and value < 0:
        run.bad(key, f"must not be negative, got {value:g}: it is a magnitude in the direction of better "
                     f"(run.higher_is_better says which way that is); write {-value:g}")
        return None
    return value


def _bootstrap(run: _Reader, run_id: str) -> tuple[int, int]:
    bootstrap = run.table_of("bootstrap", "must be a table {resamples = 10000, seed = 20261001}")
    resamples, seed = bootstrap.get("resamples", 10_000), bootstrap.get("seed")
    if not _is_int(resamples) or not 100 <= resamples <= 1_000_000:
        run.bad("bootstrap", f"resamples must be an integer from 100 to 1,000,000, got {resamples!r}")
        resamples = 10_000
    if seed is None:  # a fixed seed per run, so the build stays deterministic
        seed = int(hashlib.sha256(run_id.encode()).hexdigest()[:8], 16)
    elif not _is_int(seed) or seed < 0:
        run.bad("bootstrap", f"seed must be a non-negative integer, got {seed!r}")
        seed = 0
    return resamples, seed


def _planned_calls(run: _Reader, service_ids: list[str]) -> dict[str, int]:
    raw = run.get("planned_calls")
    if _is_int(raw) and raw > 0:
        return {sid: raw for sid in service_ids}
    if not isinstance(raw, dict):
        run.bad("planned_calls", "required: a positive integer per service, or a table {service = n}")
        return {}
    planned: dict[str, int] = {}
    for sid, value in raw.items():
        if sid not in service_ids:
            run.bad("planned_calls", f"{sid!r} is not a [[service]] id")
        elif not _is_int(value) or value <= 0:
            run.bad("planned_calls", f"{sid}: must be a positive integer, got {value!r}")
        else:
            planned[sid] = value
    for sid in service_ids:
        if sid not in raw:
            run.bad("planned_calls", f"no planned count for service {sid!r}")
    return planned


def _blocks(run: _Reader) -> tuple[tuple[str, ...], int | None]:
    """The registered block ids, and the count when only a count was registered (its
    ids then come from the log: ``load.blocks``)."""
    blocks = run.get("blocks", [])
    if _is_int(blocks):
        if blocks < 1:
            run.bad("blocks", f"must be a positive number of blocks, got {blocks}")
            return (), None
        return (), blocks
    if not isinstance(blocks, list):
        run.bad("blocks", "must be a list of block ids or a number of blocks")
        return (), None
    return tuple(str(b) for b in blocks), None


def _tasks(top: _Reader) -> tuple[Any, ...]:
    tasks = top.get("task", [])
    tasks = [tasks] if isinstance(tasks, dict) else tasks
    if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        top.bad("task", "must be a [task] table or [[task]] tables")
        return ()
    return tuple(_freeze(t) for t in tasks)


_VIEWPORT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[x×]\s*(\d+(?:\.\d+)?)\s*$")


def _render_viewport(tasks: tuple[Any, ...], top: _Reader) -> tuple[float, float]:
    """The first task's ``render_viewport`` ("400x300", width by height): the size an SVG
    that gives none is rendered at."""
    for nth, task in enumerate(tasks, 1):
        if "render_viewport" not in task:
            continue
        value = task["render_viewport"]
        match = _VIEWPORT.match(value) if isinstance(value, str) else None
        if match is not None and float(match.group(1)) > 0 and float(match.group(2)) > 0:
            return float(match.group(1)), float(match.group(2))
        line = _line_of(top.text, "render_viewport", "[[task]]", nth) or _line_of(top.text, "render_viewport", "[task]")
        top.problems.add(top.rel, line, "task.render_viewport",
                         f"{value!r} is not a size: write width x height in pixels, as \"400x300\"")
        break
    return DEFAULT_VIEWPORT


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
        services.append(Service(
            id=sid, group=_text(entry, "group", ""), requested_model=_text(entry, "requested_model"),
            snapshot=_text(entry, "snapshot"), params=_freeze(params),
        ))
    return services


def _text(entry: dict[str, Any], key: str, default: str = "unknown") -> str:
    value = entry.get(key, default)
    return value if isinstance(value, str) else str(value)

"""Analysis -> charts: altair specifications saved as static SVG with vl-convert.

No JavaScript and no CDN: the SVG is produced at build time, deterministically, and
shown through <img>. Each chart carries its data (as JSON in the SVG's <metadata>)
and is published with a caption, alt text and the table it was drawn from.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict
from xml.sax.saxutils import escape

import altair as alt
import pandas as pd
import vl_convert

from reportgen.analysis.results import ExperimentAnalysis
from reportgen.model.outcomes import STATUS_LABELS
from reportgen.render import present
from reportgen.model.numbers import counted

WIDTH = 520
MAX_POINTS = 2000  # past this a chart summarises instead of drawing every call
PALETTE = ["#1f5f99", "#c0392b", "#2e7d32", "#8e44ad", "#b9770e", "#16a085", "#555555"]
OUTCOME_COLOURS = {"passed": "#2e7d32", "scored": "#2e7d32", "failed the task": "#c0392b", "missing from the log": "#777777"}


@dataclass(frozen=True)
class Chart:
    name: str
    title: str
    caption: str
    alt: str
    svg: bytes
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # the table beside the chart, already formatted


class _IntervalRow(TypedDict):
    """One interval of an interval chart: its label, estimate and ends; its colour group."""

    row: str
    label: NotRequired[str]  # the row's name wrapped into lines, as the axis draws it
    estimate: float
    low: float
    high: float
    n: NotRequired[str]  # passes/denominator, for a rate
    measure: NotRequired[str]
    service: NotRequired[str]
    kind: NotRequired[str]


class _Line(TypedDict):
    """A dashed reference line: where, its label, and its label's height (staggered)."""

    at: float
    line: str
    y: NotRequired[int]


class _OutcomeRow(TypedDict):
    service: str
    label: NotRequired[str]
    outcome: str
    calls: int
    order: int
    share: float


@dataclass(frozen=True)
class ChartPlan:
    """A chart before it is drawn: its Vega-Lite specification in place of the SVG."""

    name: str
    title: str
    caption: str
    alt: str
    spec: dict
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


class ChartDrawer:
    """Vega-Lite to SVG with vl-convert: here, or in a worker process (``background``),
    so that a large run's charts are drawn while the build goes on auditing it:
    vl-convert holds the interpreter for the seconds a board of 50 services takes."""

    def __init__(self, background: bool = False) -> None:
        self.pool: ProcessPoolExecutor | None = None
        if background:
            from reportgen.render.svg import worker_context

            self.pool = ProcessPoolExecutor(1, mp_context=worker_context())

    def __enter__(self) -> "ChartDrawer":
        return self

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def draw(self, spec: dict) -> Future:
        """The SVG text of ``spec``, when it is drawn."""
        if self.pool is not None:
            return self.pool.submit(vl_convert.vegalite_to_svg, spec)
        done: Future = Future()
        done.set_result(vl_convert.vegalite_to_svg(spec))
        return done


def start_charts(analysis: ExperimentAnalysis, drawer: ChartDrawer) -> Callable[[], tuple[Chart, ...]]:
    """The run's charts, planned here and drawn by ``drawer``: call the result to have them."""
    plans = plan_charts(analysis)
    drawing = [drawer.draw(plan.spec) for plan in plans]

    def finished() -> tuple[Chart, ...]:
        return tuple(Chart(p.name, p.title, p.caption, p.alt, _with_data(_drawn(svg, p.spec), p.columns, p.rows),
                           p.columns, p.rows) for p, svg in zip(plans, drawing))

    return finished


def _drawn(svg: Future, spec: dict) -> str:
    try:
        return svg.result()
    except BrokenProcessPool:  # the worker died (killed, out of memory): drawn here instead
        return vl_convert.vegalite_to_svg(spec)


def _with_data(svg: str, columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> bytes:
    """The SVG with the table it was drawn from, as JSON in its <metadata>."""
    data = json.dumps({"columns": list(columns), "rows": [list(r) for r in rows]}, ensure_ascii=False)
    head, sep, rest = svg.partition(">")
    return f"{head}{sep}<metadata>{escape(data)}</metadata>{rest}".encode()


LABEL_CHARS = 30  # a label line's length: a longer service id is wrapped, never cut
LINE_PX = 14  # a label line's height


def wrap_label(text: str, width: int = LABEL_CHARS) -> str:
    """``text`` in lines of at most ``width`` characters, broken after a separator
    ("-", "_", ".", "/", ":", " ") where there is one, else anywhere: the lines joined
    give ``text`` back, so a long id is shown whole."""
    lines: list[str] = []
    rest = text
    while len(rest) > width:
        cut = max(rest.rfind(sep, 0, width) for sep in "-_./: ")
        cut = cut + 1 if cut > 0 else width
        lines.append(rest[:cut])
        rest = rest[cut:]
    return "\n".join(lines + [rest]) if rest or not lines else "\n".join(lines)


def _label_axis(title: str | None = None) -> alt.Axis:
    """A band axis whose labels are drawn whole, one line per "\\n" of the label."""
    lines = "length(split(datum.label, '\\n'))"
    return alt.Axis(labelLimit=0, labelBaseline="middle", labelLineHeight=LINE_PX,
                    labelExpr="split(datum.label, '\\n')", title=title,
                    labelOffset=alt.ExprRef(f"-{LINE_PX / 2:g} * ({lines} - 1)"))  # centred on its row


POINTS = "points"  # an axis of percentage points: signed, as the tables write them


def _number_axis(title: str, axis_format: str) -> alt.Axis:
    """A value axis with its tick format: ``POINTS`` is "+10", "0", "−10"."""
    if axis_format == POINTS:
        return alt.Axis(title=title, format="~f", labelExpr="datum.value > 0 ? '+' + datum.label : datum.label")
    return alt.Axis(title=title, format=axis_format)


def _band(labels, base: int) -> int:
    """A row's height: ``base``, or more for a wrapped label."""
    return max([base] + [LINE_PX * (1 + str(label).count("\n")) + 8 for label in labels])


def _base(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    return chart.configure(font="DejaVu Sans").configure_view(stroke=None).configure_axis(
        labelFontSize=12, titleFontSize=12, grid=True, gridColor="#e5e8eb")


def plan_charts(analysis: ExperimentAnalysis) -> tuple[ChartPlan, ...]:
    # A score run's "pass" only says a call completed: no pass-rate charts for it.
    scored = analysis.run.contract.metric.scored
    rates = None if scored else _rates(analysis)
    charts = [rates] if rates is not None else []
    if analysis.overall.comparisons:
        charts.append(_difference(analysis))
    # Pass/fail pairs take only three differences: their 2×2 table says it all.
    if analysis.paired is not None and analysis.paired.difference.n and analysis.paired.binary is None:
        charts.append(_paired(analysis))
    if analysis.blocks and len(analysis.overall.services) <= 6 and not scored:  # past 6, the table reads better
        charts.append(_blocks(analysis))
    latency = _latency(analysis)
    if latency is not None:
        charts.append(latency)
    outcomes = _outcomes(analysis)
    return tuple(charts) + ((outcomes,) if outcomes is not None else ())


def _interval_chart(df: pd.DataFrame, y: str, colour: str, x_title: str, row: int,
                    domain: tuple[float, float] = (0.0, 1.0)) -> alt.LayerChart | alt.FacetChart:
    """Intervals, a row each of at least ``row`` pixels (more for a wrapped label)."""
    height = _band(df[y], row) * len(df)
    return alt.layer(*_interval_layers(df, y, colour, x_title, domain)).properties(width=WIDTH, height=height)


def _interval_layers(df: pd.DataFrame, y: str, colour: str, x_title: str,
                     domain: tuple[float, float], axis_format: str = "%") -> list[alt.Chart]:
    """A bar from low to high and a dot at the estimate, per row."""
    scale = alt.Scale(domain=list(domain))
    axis = _number_axis(x_title, axis_format)
    legend = alt.Legend(title=None, orient="bottom") if df[colour].nunique() > 1 else None
    colours = alt.Color(f"{colour}:N", scale=alt.Scale(range=PALETTE), legend=legend)
    y_axis = alt.Y(f"{y}:N", title=None, sort=None, axis=_label_axis())
    rule = alt.Chart(df).mark_rule(strokeWidth=3).encode(
        x=alt.X("low:Q", scale=scale, axis=axis), x2="high:Q", y=y_axis, color=colours)
    point = alt.Chart(df).mark_point(filled=True, size=90, opacity=1).encode(
        x="estimate:Q", y=y_axis, color=colours)
    return [rule, point]


def _rates(analysis: ExperimentAnalysis) -> ChartPlan | None:
    rows: list[_IntervalRow] = []
    for s in analysis.overall.services:
        for label, est in (("all planned first submissions", s.first_pass),
                           ("among complete returns", s.complete_pass)):
            if est.is_defined:
                rows.append({"row": f"{s.service} · {label}", "label": f"{wrap_label(s.service)}\n{label}",
                             "measure": label, "estimate": est.estimate,
                             "low": est.low, "high": est.high, "n": f"{est.numerator}/{est.denominator}"})
    if not rows:  # every call excluded: no rate is defined, so there is nothing to draw
        return None
    df = pd.DataFrame(rows)
    level = present.percent(analysis.run.contract.confidence_level, 0)
    chart = _base(_interval_chart(df, "label", "measure", f"pass rate, {level} Wilson interval", 34))
    table = tuple((r["row"], r["n"], present.percent(r["estimate"]),
                   f"[{present.percent(r['low'])}, {present.percent(r['high'])}]") for r in rows)
    columns = ("service and measure", "passes", "rate", f"{level} interval")
    text = "; ".join(f"{r[0]} {r[2]} {r[3]}" for r in table)
    return ChartPlan("rates", "Pass rate of each service, with its interval",
                 f"Each dot is a pass rate, each bar its {level} Wilson interval. The headline is the rate over "
                 "all planned first submissions; the rate among complete returns answers a narrower question.",
                 f"Interval chart of pass rates: {text}.", chart.to_dict(), columns, table)


def _threshold_labels(lines: list[dict]) -> alt.Chart:
    """The dashed lines' names, above the plot, each on a level of its own: clear of
    the points and of one another however close the lines are."""
    named = [line for line in lines if line["line"]]
    for index, line in enumerate(named):
        line["y"] = -4 - 13 * index
    return alt.Chart(pd.DataFrame(named)).mark_text(
        align="left", baseline="bottom", dx=3, fontSize=10, color="#333").encode(
        x="at:Q", y=alt.Y("y:Q", scale=None), text="line:N")


def _threshold_rules(lines: list[dict]) -> alt.Chart:
    return alt.Chart(pd.DataFrame(lines)).mark_rule(strokeDash=[5, 4], color="#555").encode(x="at:Q")


def _difference(analysis: ExperimentAnalysis) -> ChartPlan:
    contract = analysis.run.contract
    metric = contract.metric
    score = metric.scored
    # As the tables show it: a difference of rates in percentage points, a score on its scale.
    scale = metric.axis_scale
    rows: list[dict[str, Any]] = [{"row": f"{c.candidate} − {c.baseline}", "label": wrap_label(f"{c.candidate} − {c.baseline}"),
             "estimate": c.difference.estimate, "low": c.difference.low, "high": c.difference.high,
             "kind": "difference"}
            for c in analysis.overall.comparisons]
    lines: list[dict[str, Any]] = [{"at": 0.0, "line": "zero"}]
    if contract.min_useful_effect is not None:
        lines.append({"at": contract.min_useful_effect, "line": "minimum useful effect"})
    if contract.noninferiority_margin is not None:
        lines.append({"at": -contract.noninferiority_margin, "line": "− non-inferiority margin"})
    ends = [abs(v) for r in rows for v in (r["estimate"], r["low"], r["high"]) if math.isfinite(v)]
    if score:  # a score has its own scale: the axis fits the intervals and the thresholds
        reach = max(1e-9, *ends, *(abs(x["at"]) for x in lines)) * 1.1
        domain = (-reach, reach)
    else:
        reach = max(0.25, *ends, *(abs(x["at"]) for x in lines))
        domain = (-min(1.0, reach + 0.05) * scale, min(1.0, reach + 0.05) * scale)
    df = pd.DataFrame([dict(r, **{k: r[k] * scale for k in ("estimate", "low", "high")}) for r in rows])
    drawn = [dict(x, at=x["at"] * scale) for x in lines]
    level = present.percent(contract.confidence_level, 0)
    quantity, method = metric.quantity, metric.interval_short
    unit = "" if score else " (percentage points)"
    body = _interval_layers(df, "label", "kind", f"difference in {quantity}{unit}, {level} {method} interval",
                            domain, "~g" if score else POINTS)
    height = 70 + _band(df["label"], 26) * len(rows)
    chart = _base(alt.layer(*body, _threshold_rules(drawn), _threshold_labels(drawn)).properties(
        width=WIDTH, height=height))
    table = tuple((r["row"], metric.difference_text(r["estimate"]), metric.interval_text(r["low"], r["high"]))
                  for r in rows)
    table += tuple((f"line: {x['line']}", metric.difference_text(x["at"]), "") for x in lines)
    columns = ("quantity", "value", f"{level} interval")
    return ChartPlan("difference", "The difference against zero and the registered thresholds",
                 f"The dot is the difference candidate − baseline in {quantity}"
                 f"{'' if score else ', in percentage points'}; the bar is its "
                 f"{level} {method} interval. Dashed lines: zero, the minimum useful effect and minus the "
                 "non-inferiority margin registered in the contract.",
                 "Difference chart: " + "; ".join(f"{r[0]} {r[1]} {r[2]}".strip() for r in table) + ".",
                 chart.to_dict(), columns, table)


MAX_UNIT_ROWS = 40  # past this many pairs or tasks, a histogram of the differences


def _paired(analysis: ExperimentAnalysis) -> ChartPlan:
    """Each pair's (or task's) difference as a dot, or their histogram when there are
    many; with zero, the mean and its interval, and the minimum useful effect."""
    contract = analysis.run.contract
    p = analysis.paired
    assert p is not None
    d = p.difference
    level = present.percent(contract.confidence_level, 0)
    unit = "task" if p.unit == "task" else "pair"
    score = p.metric.scored
    what = ("score" if score else
            "task pass rate (mean over repetitions)" if p.unit == "task" else "pass (1) / non-pass (0)")
    # As the tables show it: a difference of pass rates in percentage points, a score on its scale.
    scale, shown = p.metric.axis_scale, (present.score if score else lambda v: present.points(v, 2))
    diffs = [(r.unit, r.difference) for r in p.rows if r.difference is not None]
    lines: list[dict[str, Any]] = [{"at": 0.0, "line": "zero"}, {"at": d.estimate, "line": "mean"}]
    if d.low < d.high:
        lines += [{"at": d.low, "line": f"{level} t interval"}, {"at": d.high, "line": ""}]
    if contract.min_useful_effect is not None:
        lines.append({"at": contract.min_useful_effect * (1 if contract.higher_is_better else -1),
                      "line": "minimum useful effect"})
    x_title = f"{p.candidate} − {p.baseline}, difference in {what}{'' if score else ' (percentage points)'}"
    axis = alt.Axis(title=x_title) if score else _number_axis(x_title, POINTS)
    if len(diffs) <= MAX_UNIT_ROWS:
        df = pd.DataFrame([{"unit": wrap_label(u), "difference": v * scale} for u, v in diffs])
        body = alt.Chart(df).mark_point(filled=True, size=70, opacity=1, color=PALETTE[0]).encode(
            x=alt.X("difference:Q", title=x_title, axis=axis), y=alt.Y("unit:N", sort=None, title=None, axis=_label_axis()))
        height = _band(df["unit"], 22) * len(diffs) + 30
        table = tuple((u, shown(v)) for u, v in diffs)
        columns = (unit, "difference" if score else "difference, points")
        shape = f"Each dot is one {unit}'s difference"
    else:
        counts = pd.Series([v for _, v in diffs]).round(6).value_counts().sort_index()
        df = pd.DataFrame({"difference": counts.index * scale, "count": counts.values})
        body = alt.Chart(df).mark_bar(color=PALETTE[0], size=14).encode(
            x=alt.X("difference:Q", title=x_title, axis=axis), y=alt.Y("count:Q", title=f"{unit}s"))
        height = 180
        table = tuple((shown(v), str(n)) for v, n in zip(counts.index, counts.values))
        columns = ("difference" if score else "difference, points", f"{unit}s")
        shape = f"Each bar counts the {unit}s with that difference"
    drawn = [dict(x, at=x["at"] * scale) for x in lines]
    chart = _base(alt.layer(body, _threshold_rules(drawn), _threshold_labels(drawn)).properties(
        width=WIDTH, height=height))
    table += tuple((f"line: {x['line'] or 'interval end'}", shown(x["at"])) for x in lines)
    return ChartPlan("paired", f"Every {unit}'s difference",
                 f"{shape} ({p.candidate} − {p.baseline}, {counted(d.n, unit)}"
                 f"{'' if score else ', in percentage points'}). "
                 f"Dashed lines: zero, the mean, the ends of "
                 f"its {level} t interval and the registered minimum useful effect. Read the spread, not only the mean.",
                 "Paired differences: " + "; ".join(f"{a} {b}" for a, b in table) + ".",
                 chart.to_dict(), columns, table)


def _blocks(analysis: ExperimentAnalysis) -> ChartPlan:
    rows: list[_IntervalRow] = []
    for block in analysis.blocks:
        for s in block.services:
            if s.first_pass.is_defined:
                rows.append({"row": f"block {block.block} · {s.service}", "service": s.service,
                             "label": f"block {block.block}\n{wrap_label(s.service)}",
                             "estimate": s.first_pass.estimate, "low": s.first_pass.low,
                             "high": s.first_pass.high, "n": f"{s.first_pass.numerator}/{s.first_pass.denominator}"})
    df = pd.DataFrame(rows)
    level = present.percent(analysis.run.contract.confidence_level, 0)
    chart = _base(_interval_chart(df, "label", "service", f"first-submission pass rate, {level} Wilson interval",
                                  26))
    table = tuple((r["row"], r["n"], present.percent(r["estimate"]),
                   f"[{present.percent(r['low'])}, {present.percent(r['high'])}]") for r in rows)
    columns = ("block and service", "passes", "rate", f"{level} interval")
    return ChartPlan("blocks", "Pass rate per block",
                 "The same rate inside each block of the design. A difference that lives in one block only "
                 "points to a time effect rather than a service effect. Small blocks have wide intervals.",
                 "Per-block interval chart: " + "; ".join(f"{r[0]} {r[2]}" for r in table) + ".",
                 chart.to_dict(), columns, table)


def _latency(analysis: ExperimentAnalysis) -> ChartPlan | None:
    run = analysis.run
    counted = {cid for s in analysis.overall.services for cid in s.complete_calls}
    # As columns, each service's label wrapped once: a row of four a call, as a dict, was
    # a million dicts at a million calls (2 s, and 400 MB while the table was made).
    services: list[str] = []
    seconds: list[float] = []
    ids: list[str] = []
    for c in run.calls:
        if c.latency_ms is not None and c.call_id in counted:
            services.append(c.service)
            seconds.append(c.latency_ms / 1000)
            ids.append(c.call_id)
    if not services:
        return None
    labels = {service: wrap_label(service) for service in set(services)}
    df = pd.DataFrame({"service": services, "label": [labels[s] for s in services], "seconds": seconds, "call": ids})
    colours = alt.Color("service:N", scale=alt.Scale(range=PALETTE), legend=None)
    x_title = "latency of complete returns (s)"
    x = alt.X("seconds:Q", title=x_title, scale=alt.Scale(zero=True))
    medians = df.groupby("label", as_index=False)["seconds"].median()
    y = alt.Y("label:N", title=None, axis=_label_axis())
    median_marks = alt.Chart(medians).mark_tick(thickness=4, size=34, color="#111").encode(x="seconds:Q", y=y)
    if len(df) <= MAX_POINTS:
        marks = [alt.Chart(df).mark_tick(thickness=2, size=22, opacity=0.8).encode(
            x=x, y=y, color=colours)]
        how = "One thin tick per complete return; the thick black tick is the median."
    else:  # too many calls to draw one by one: the 5th to 95th percentile and the quartiles
        q = df.groupby(["service", "label"])["seconds"].quantile([0.05, 0.25, 0.75, 0.95]).unstack().reset_index()
        q.columns = ["service", "label", "p5", "p25", "p75", "p95"]
        marks = [alt.Chart(q).mark_rule(strokeWidth=2).encode(x=alt.X("p5:Q", title=x_title, scale=alt.Scale(zero=True)), x2="p95:Q",
                                                               y=y, color=colours),
                 alt.Chart(q).mark_bar(height=14).encode(x="p25:Q", x2="p75:Q", y=y, color=colours)]
        how = "The line spans the 5th to the 95th percentile, the bar the middle half; the black tick is the median."
    chart = _base(alt.layer(*marks, median_marks).properties(width=WIDTH, height=max(44, _band(df["label"].unique(), 22) * df["service"].nunique())))
    by_service = {s.service: s for s in analysis.overall.services}
    table = tuple((svc, str(len(group)), present.milliseconds(by_service[svc].latency_median_ms),
                   present.milliseconds(by_service[svc].latency_p90_ms))
                  for svc, group in df.groupby("service", sort=True))
    columns = ("service", "complete returns", "median", "90th percentile")
    return ChartPlan("latency", "Latency of complete returns",
                 f"{how} Technical failures are left out here (a timeout's latency is the timeout) and counted "
                 "in the outcome chart.",
                 "Latency strip chart: " + "; ".join(f"{r[0]} median {r[2]}, p90 {r[3]}" for r in table) + ".",
                 chart.to_dict(), columns, table)


def _outcomes(analysis: ExperimentAnalysis) -> ChartPlan | None:
    rows: list[_OutcomeRow] = []
    score = analysis.run.contract.metric.scored
    for s in analysis.overall.services:
        passes = s.first_pass.numerator
        # A score run's complete returns are scored, not passed or failed.
        parts = ([("scored", len(s.scored_calls)), ("complete, no score", len(s.complete_calls) - len(s.scored_calls))]
                 if score else [("passed", passes), ("failed the task", len(s.complete_calls) - passes)])
        parts += [(STATUS_LABELS[status], len(ids)) for status, ids in s.failures]
        parts += [("missing from the log", s.n_missing)] if s.n_missing else []
        for order, (outcome, count) in enumerate(parts):
            if count:
                rows.append({"service": s.service, "label": wrap_label(s.service), "outcome": outcome,
                             "calls": count, "order": order,
                             "share": count / s.planned if s.planned else 0.0})
    if not rows:  # every call excluded: no planned call is left to show
        return None
    df = pd.DataFrame(rows)
    names = list(dict.fromkeys(df["outcome"]))
    colours = [OUTCOME_COLOURS.get(n, PALETTE[3 + i % 4]) for i, n in enumerate(names)]
    chart = _base(alt.Chart(df).mark_bar().encode(
        x=alt.X("share:Q", stack="zero", axis=alt.Axis(format="%", title="share of planned first submissions")),
        y=alt.Y("label:N", title=None, axis=_label_axis()),
        color=alt.Color("outcome:N", scale=alt.Scale(domain=names, range=colours),
                        legend=alt.Legend(title=None, orient="bottom")),
        order=alt.Order("order:Q"),
    ).properties(width=WIDTH, height=_band(df["label"], 40) * df["service"].nunique()))
    table = tuple((r["service"], r["outcome"], str(r["calls"]), present.percent(r["share"])) for r in rows)
    columns = ("service", "outcome", "calls", "share of planned")
    return ChartPlan("outcomes", "What happened to every planned call",
                 f"Each bar is all planned first submissions of a service: {'scored' if score else 'passed, failed the task'}"
                 ", and each kind of technical failure kept apart.",
                 "Stacked bar chart of outcomes: " + "; ".join(f"{r[0]} {r[1]} {r[2]} ({r[3]})" for r in table) + ".",
                 chart.to_dict(), columns, table)

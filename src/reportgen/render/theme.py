"""The theme: the user's templates over the default ones, the filters and globals every
page uses, and a template class made cheaper to render for sites of 100,000 pages."""

from __future__ import annotations

import html
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping
from urllib.parse import quote

import jinja2
import markupsafe
from markupsafe import Markup

from reportgen import __version__
from reportgen.claims.claim import Claim
from reportgen.model.findings import Finding
from reportgen.model.measures import Measure
from reportgen.model.grading import REVIEW_WORDS
from reportgen.model.numbers import counted
from reportgen.model.outcomes import SHOWN_LABELS, STATUS_LABELS
from reportgen.render import escaping, present

if TYPE_CHECKING:
    from reportgen.analysis.results import ExperimentAnalysis
    from reportgen.model.config import RunContract
    from reportgen.plan.sensitivity import Sensitivity


def _plan_sensitivity(contract: RunContract, observed: ExperimentAnalysis | float | None) -> Sensitivity:
    """The experiment page's sensitivity block (imported when a page asks: it needs scipy).
    ``observed``: the run's analysis (or, from older templates, the baseline's pass rate)."""
    from reportgen.plan.sensitivity import observed_of, sensitivity

    if observed is None or isinstance(observed, (int, float)):
        return sensitivity(contract, observed)
    return sensitivity(contract, observed_of(observed))


# No script at all. (frame-ancestors cannot be set from a <meta> tag; browsers ignore it there.)
CSP = "default-src 'none'; img-src 'self'; style-src 'self'; base-uri 'none'; form-action 'none'"


class PageTemplate(jinja2.Template):
    """A jinja2 template made cheaper to render, for sites of 100,000 pages.

    - Its output expressions escape through ``escaping.escape`` (markupsafe's result,
      fewer steps; a call page has some eighty of them).
    - Its globals are a plain dict. jinja2 keeps them as a ChainMap over the
      environment's and copies that into a new dict at every render, a key at a time:
      a quarter of the time of a call page. ``theme_environment`` sets every global
      before the first template is loaded and none changes after, so the copy made
      once here holds the same.
    """

    @classmethod
    def from_code(cls, environment, code, globals, uptodate=None):
        template = super().from_code(environment, code, globals, uptodate)
        # The compiled module imported markupsafe's escape by name; its blocks and
        # macros look the name up there at every call.
        namespace = template.root_render_func.__globals__
        if namespace.get("escape") is markupsafe.escape:
            namespace["escape"] = escaping.escape
        template.globals = dict(template.globals)
        return template


def claim_renderer(env: jinja2.Environment, findings: Mapping[str, tuple[str, Finding]]
                   ) -> Callable[[Claim, str], str]:
    """A claim cited in the narrative, as the ``claim`` macro shows it on every page."""
    template = env.from_string('{% from "_macros.html" import claim with context %}{{ claim(c, root) }}')
    return lambda c, root: template.render(c=c, root=Markup(root), findings=findings)


def anchor(claim_id: str) -> str:
    """A claim id as an HTML id and URL fragment: percent-encoded, so that any block or
    slice id the log may hold (spaces included) gives a valid id, one-to-one."""
    return quote(claim_id, safe="")


def theme_environment(source_root: Path, theme: str) -> jinja2.Environment:
    """The user's theme folder (if the config names one) over the default theme."""
    default = resources.files("reportgen.themes") / "default" / "templates"
    loaders: list[jinja2.BaseLoader] = []
    user = source_root / theme
    if theme != "default" and (user / "templates").is_dir():
        loaders.append(jinja2.FileSystemLoader(str(user / "templates")))
    loaders.append(jinja2.FileSystemLoader(str(default)))
    # Templates do not change during a build: no file check on every page (auto_reload).
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders), autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, auto_reload=False,
    )
    env.template_class = PageTemplate
    env.filters["text"] = element_text
    env.filters["anchor"] = anchor
    env.globals.update(
        percent=present.percent, points=present.points, p_value=present.p_value, p_is=present.p_is,
        milliseconds=present.milliseconds, claim_value=present.value,
        claim_interval=present.interval, claim_level=present.level, decision_basis=present.decision_basis,
        magnitude_points=present.magnitude_points, score=present.score,
        p_reading=present.p_value_reading, status_labels=STATUS_LABELS, plan_sensitivity=_plan_sensitivity,
        outcome_labels=SHOWN_LABELS, review_words=REVIEW_WORDS, csp=CSP, reportgen_version=__version__,
        counted=counted,
    )
    env.globals["Measure"] = Measure  # claims are looked up by measure: run.claim(s.id, Measure.FIRST_PASS_RATE)
    return env


def element_text(value: str) -> Markup:
    """Text for element content such as <pre>: only &, < and > need escaping there;
    quotes matter in attribute values only, and model output is full of them."""
    return Markup(html.escape(str(value), quote=False))


def theme_static(source_root: Path, theme: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    default = resources.files("reportgen.themes") / "default" / "static"
    for item in sorted(default.iterdir(), key=lambda p: p.name):
        if item.is_file():
            files[f"static/{item.name}"] = item.read_bytes()
    user = source_root / theme / "static"
    if theme != "default" and user.is_dir():
        for item in sorted(user.iterdir()):
            if item.is_file() and not item.is_symlink():
                files[f"static/{item.name}"] = item.read_bytes()
    return files

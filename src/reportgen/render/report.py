"""What the render stage is handed: every run's analysis, claims, artifacts, renders,
findings and charts, and the source they came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from reportgen.analysis.results import ExperimentAnalysis
from reportgen.claims.claim import Claim
from reportgen.model.artifacts import CallArtifacts, Render, RenderSettings
from reportgen.model.findings import Finding
from reportgen.model.source import ValidatedSource
from reportgen.render.narrative import RenderedPage

if TYPE_CHECKING:  # charts imports altair and pandas: a second, which pages never need
    from reportgen.render.charts import Chart


@dataclass(frozen=True)
class RunReport:
    analysis: ExperimentAnalysis
    claims: tuple[Claim, ...]
    artifacts: Mapping[str, CallArtifacts]
    renders: Mapping[str, Render]  # by SVG sha256
    settings: RenderSettings
    findings: tuple[Finding, ...] = ()
    charts: tuple[Chart, ...] = ()


@dataclass(frozen=True)
class Report:
    source: ValidatedSource
    runs: tuple[RunReport, ...]
    built_at: str
    pages: tuple[RenderedPage, ...] = ()

    @property
    def claims(self) -> tuple[Claim, ...]:
        return tuple(c for r in self.runs for c in r.claims)

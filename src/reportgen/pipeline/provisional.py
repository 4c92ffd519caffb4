"""What a rebuild makes of a large run while its folder is listed apart.

The folder of a large source is listed by a forked copy of the build while the build
parses the logs (see ``source_reading``); at a million calls the build then waited some
thirty seconds for the listing, with the run's calls parsed. Meanwhile it analyses the
run and audits what of it reads only its contract, calls, grading and log
(``audit.stage.known_findings``), as the run will load if the listing changes none of
its calls (``load.source.provisional_run``). The listing may yet change them (an
artifact path that is not there drops a call; a grades/ folder joins grades to them):
what is made here is used only for a run loaded with the very same contract, calls and
grading (``load.source.same_run``), and made again otherwise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from reportgen.analysis.results import ExperimentAnalysis
from reportgen.analysis.run import analyze_run
from reportgen.audit.stage import KnownFindings, known_findings
from reportgen.load.source import same_run
from reportgen.model.config import SiteConfig
from reportgen.model.source import ValidatedRun, ValidatedSource


@dataclass(frozen=True)
class Provisional:
    """A run's analysis and what of its audit reads only its contract, calls, grading and
    log (``audit.stage.KnownFindings``), of ``run``."""

    run: ValidatedRun
    analysis: ExperimentAnalysis
    known: KnownFindings


def made_while_listed(config: SiteConfig, run: ValidatedRun) -> Provisional:
    """``Provisional`` of ``run``; ``config``: the source's, loaded once with the run (its
    texts declared not credentials are those the build's audit goes by)."""
    return Provisional(run, analyze_run(run), known_findings(run, config.not_credentials))


def of_runs_loaded(made: Mapping[str, Provisional], validated: ValidatedSource) -> dict[str, Provisional]:
    """What was made of each run loaded, by run id, with the run loaded in place of the
    provisional one: only for a run that is the same (see the module's docstring)."""
    loaded = {}
    for run in validated.runs:
        found = made.get(run.contract.id)
        if found is not None and same_run(found.run, run):
            loaded[run.contract.id] = Provisional(run, dataclasses.replace(found.analysis, run=run), found.known)
    return loaded

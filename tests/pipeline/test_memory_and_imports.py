"""The build's process rules: the cycle collector off while it builds and handed back as
it was found; the later stages and the heavy libraries left unimported by a build whose
version is up to date."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import pytest

from conftest import SourceFactory
from reportgen.pipeline.memory_and_imports import collector_paused, freeze_made
from reportgen.pipeline.pipeline import build_site

# The stages after loading, and the libraries they need: scipy (the statistics), pandas,
# altair and vl-convert (the charts).
DEFERRED = ("reportgen.pipeline.stages", "reportgen.render.charts", "scipy", "pandas", "altair", "vl_convert")

UP_TO_DATE = """\
import json, sys
from pathlib import Path
from reportgen.pipeline.pipeline import build_site
summary = build_site(Path(sys.argv[1]), Path(sys.argv[2]), cache=Path(sys.argv[3]))
print(json.dumps({"up_to_date": summary.up_to_date, "imported": [m for m in sys.argv[4:] if m in sys.modules]}))
"""


@pytest.fixture(scope="module")
def imported_when_up_to_date(tmp_path_factory) -> list[str]:
    """What a build found up to date imports, of ``DEFERRED``: the source built once here,
    then again in a fresh interpreter (this one imported them all for the first build)."""
    root = tmp_path_factory.mktemp("up-to-date")
    source, out, cache = SourceFactory(root)(), root / "site", root / "cache"
    assert not build_site(source, out, cache=cache).up_to_date
    result = subprocess.run([sys.executable, "-c", UP_TO_DATE, str(source), str(out), str(cache), *DEFERRED],
                            capture_output=True, text=True, check=True)
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["up_to_date"] is True
    return found["imported"]


def test_the_collector_is_off_while_building_and_handed_back_as_found():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        made = [[] for _ in range(100)]
        freeze_made()
        assert gc.get_freeze_count() >= len(made)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        with collector_paused():
            freeze_made()
        assert not gc.isenabled() and gc.get_freeze_count() == 0  # a caller's choice is kept
    finally:
        gc.enable()


@pytest.mark.slow  # a build, then another in a fresh interpreter
def test_a_build_found_up_to_date_imports_neither_the_later_stages_nor_their_libraries(
        imported_when_up_to_date):
    assert imported_when_up_to_date == []


def test_the_later_stages_come_with_the_statistics_they_compute():
    """``later_stages`` imports scipy.stats with the stages: a large build imports them
    while its folder is listed apart, and the analysis does not stop for it."""
    code = ("import sys\nfrom reportgen.pipeline.memory_and_imports import later_stages\n"
            "before = 'scipy.stats' in sys.modules\nlater_stages()\nprint(before, 'scipy.stats' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]

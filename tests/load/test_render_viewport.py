"""[task] render_viewport is read by the contract reader: a size it cannot read is a
problem at its line, reported by ``reportgen check`` before anything is rendered."""

from __future__ import annotations

import pytest

from reportgen.errors import Collector
from reportgen.load.contract import load_contract
from tests.conftest import CONTRACT


def _with_viewport(make_source, written: str | None):
    """The usual source, its [task] table given ``render_viewport = <written>``."""
    assert 'render_viewport = "40x30"\n' in CONTRACT
    line = "" if written is None else f"render_viewport = {written}\n"
    source = make_source(contract=CONTRACT.replace('render_viewport = "40x30"\n', line))
    return source, source / "experiments" / "mini"


@pytest.mark.parametrize("written, size", [('"640x480"', (640.0, 480.0)), ('"12.5 × 30"', (12.5, 30.0))])
def test_a_viewport_is_read_as_width_and_height(make_source, written, size):
    _, folder = _with_viewport(make_source, written)
    problems = Collector()
    contract = load_contract(folder, "experiments/mini", problems)
    assert problems.problems == [] and contract is not None
    assert contract.render_viewport == size


def test_without_a_viewport_an_svg_is_rendered_at_400_by_300(make_source):
    _, folder = _with_viewport(make_source, None)
    contract = load_contract(folder, "experiments/mini", Collector())
    assert contract is not None and contract.render_viewport == (400.0, 300.0)


@pytest.mark.parametrize("written", ['"40 by 30"', '"0x300"', "400"])
def test_check_reports_a_viewport_it_cannot_read_at_its_line(make_source, run_cli, written):
    source, folder = _with_viewport(make_source, written)
    line = (folder / "run.toml").read_text().splitlines().index(f"render_viewport = {written}") + 1
    result = run_cli("check", source)
    assert result.exit_code == 1
    shown = repr(written.strip('"')) if written.startswith('"') else written
    assert (f"experiments/mini/run.toml:{line}: error [invalid] task.render_viewport: {shown} is not a size: "
            'write width x height in pixels, as "400x300"') in result.output.splitlines()

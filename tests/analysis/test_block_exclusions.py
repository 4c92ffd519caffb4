"""A call excluded under a registered rule leaves the denominators of its block as it
leaves the overall one: the blocks' rates add up to the overall rate, and an excluded
call is never counted as a missing one."""

from __future__ import annotations

from reportgen.analysis.run import analyze_run
from reportgen.load.source import load_source
from tests.conftest import CONTRACT, default_rows


def _with_one_exclusion(make_source):
    rows = [dict(r, excluded="", exclusion_reason="") for r in default_rows()]
    # X-3 (block 2, a failed call) is excluded under the registered rule.
    rows[2] = dict(rows[2], excluded="true", exclusion_reason="grader outage")
    contract = CONTRACT.replace("alpha = 0.05\n", 'alpha = 0.05\nexclusion_rules = ["grader outage"]\n')
    assert contract != CONTRACT
    return load_source(make_source(rows, contract=contract))


def test_an_excluded_call_leaves_its_blocks_denominator(make_source):
    analysis = analyze_run(_with_one_exclusion(make_source).runs[0])
    overall = analysis.overall.service("X")
    assert (overall.first_pass.numerator, overall.first_pass.denominator, overall.n_missing) == (3, 3, 0)
    by_block = {b.block: b.service("X") for b in analysis.blocks}
    assert {b: (s.first_pass.numerator, s.first_pass.denominator, s.n_missing) for b, s in by_block.items()} == {
        "1": (2, 2, 0), "2": (1, 1, 0)}


def test_the_blocks_denominators_add_up_to_the_overall_one(make_source):
    analysis = analyze_run(_with_one_exclusion(make_source).runs[0])
    for service in ("X", "Y"):
        overall = analysis.overall.service(service).first_pass
        blocks = [b.service(service).first_pass for b in analysis.blocks]
        assert sum(b.denominator for b in blocks) == overall.denominator
        assert sum(b.numerator for b in blocks) == overall.numerator

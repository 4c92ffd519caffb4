"""A narrative word that claims a direction or significance ("significantly better",
"worse", "improved") beside a citation whose decision does not show it is a build
warning naming the page and line, shown on the page and listed in the audit section."""

from __future__ import annotations

import html

from sitecheck import text


def with_page(source, body: str):
    (source / "pages").mkdir(exist_ok=True)
    (source / "pages" / "notes.md").write_text(body, encoding="utf-8")
    return source


PAGE = """# Notes

Some context first.

Y is significantly better than X: {claim}`mini.Y_vs_X.difference`.
Y is not significantly better than X: {claim}`mini.Y_vs_X.fisher`.
The tasks where both agree say nothing about which is better.
"""


def test_a_significance_word_beside_a_no_difference_citation_is_a_build_warning(make_source, run_cli, tmp_path):
    source = with_page(make_source(), PAGE)
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    version = tmp_path / "site/v1"
    expected = ('pages/notes.md:5: wording: "significantly" beside the citation of mini.Y_vs_X.verdict, whose '
                'decision is "no difference shown"')
    page = html.unescape(text(version / "pages/notes.html"))
    audit = html.unescape(text(version / "experiments/mini/index.html"))
    assert expected in page and expected in audit
    assert '"better" beside' in page  # "better" in the same sentence, line 5
    assert "notes.md:6" not in page and "notes.md:7" not in page  # negated; no citation
    assert run_cli("verify", version).exit_code == 0


def test_a_word_the_decision_supports_is_not_flagged(make_source, run_cli, tmp_path):
    from reportgen.analysis.run import analyze_run
    from reportgen.claims.make import build_claims
    from reportgen.load.source import load_source
    from reportgen.render.narrative import Page, wording_cautions

    claims = {c.id: c for c in build_claims(analyze_run(load_source(make_source()).runs[0]))}
    verdict = claims["mini.Y_vs_X.verdict"]
    assert verdict.verdict == "no_difference_shown"
    worse = Page("p", "pages/p.md", "Y did worse: {claim}`mini.Y_vs_X.verdict`.\n", "p")
    assert wording_cautions(worse, claims) == (
        'pages/p.md:1: wording: "worse" beside the citation of mini.Y_vs_X.verdict, whose decision is "no '
        'difference shown": the data do not show that; say what the interval shows',)
    plain = Page("p", "pages/p.md", "The decision: {claim}`mini.Y_vs_X.verdict`.\n", "p")
    assert wording_cautions(plain, claims) == ()


def test_the_build_prints_each_wording_warning_with_its_file_and_line(make_source, run_cli, tmp_path):
    result = run_cli("build", with_page(make_source(), PAGE), "--out", tmp_path / "site")
    assert result.exit_code == 0, result.output
    assert 'warning: pages/notes.md:5: wording: "significantly" beside the citation of mini.Y_vs_X.verdict' \
        in result.output

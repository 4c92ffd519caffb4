"""The line a build ends with: its counts, one of a thing in the singular."""

from pathlib import Path

from reportgen.pipeline.summary import BuildSummary


def summary(**changed) -> BuildSummary:
    fields = dict(version="v1", folder=Path("site/v1"), n_calls=10, n_pages=9, n_drawings=0, n_renders=0,
                  n_render_failures=0, n_renders_reused=0, n_sheets=1, n_sheets_written=1, n_claims=8,
                  n_warnings=1, seconds=2.4)
    return BuildSummary(**{**fields, **changed})


def test_one_sheet_and_one_warning_are_counted_in_the_singular():
    assert summary().text() == (
        "built site/v1: 10 calls, 8 claims, 9 pages and 1 sheet of calls (1 written, 0 shared with earlier "
        "builds), 0 drawings (0 distinct, 0 rendered, 0 reused), 1 audit warning shown beside the claims, in 2.4 s")


def test_many_and_failures_and_no_warning():
    text = summary(n_calls=1, n_sheets=3, n_sheets_written=1, n_drawings=1, n_renders=1, n_render_failures=1,
                   n_warnings=0).text()
    assert text.startswith("built site/v1: 1 call, 8 claims, 9 pages and 3 sheets of calls (1 written, 2 shared")
    assert "1 drawing (1 distinct, 1 rendered, 0 reused, 1 not renderable), in 2.4 s" in text
    assert "audit warning" not in text


def test_up_to_date():
    assert summary(up_to_date=True, n_claims=1).text() == (
        "site/v1 is up to date: built before from these same inputs and unchanged since (10 calls, 1 claim, "
        "9 pages); nothing written, in 2.4 s")

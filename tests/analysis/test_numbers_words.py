"""Counts as the pages write them: one of a thing in the singular."""

from reportgen.model.numbers import counted


def test_counted_is_singular_for_one_only():
    assert [counted(n, "call") for n in (0, 1, 2)] == ["0 calls", "1 call", "2 calls"]
    assert counted(1, "scheduled call") == "1 scheduled call"
    assert counted(3, "analysis", "analyses") == "3 analyses" and counted(1, "analysis", "analyses") == "1 analysis"

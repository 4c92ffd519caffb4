"""What the pages hold of each call, and the order the page writers take the sheets in:
the lookups that replace a dict a call, against those dicts; the sheets in log order."""

from __future__ import annotations

from types import SimpleNamespace

import pytest


def test_calls_by_run_is_the_mapping_the_templates_had():
    from reportgen.render.views import CallsByRun

    views = [SimpleNamespace(id=run, by_id={f"{run}-{i}": SimpleNamespace(n=i) for i in range(n)})
             for run, n in (("board", 3), ("weekly", 0), ("daily", 2))]
    made = CallsByRun(views)  # type: ignore[arg-type]
    flat = {(v.id, cid): view for v in views for cid, view in v.by_id.items()}
    assert dict(made) == flat and len(made) == 5 and list(made) == list(flat)
    assert made[("daily", "daily-1")] is flat[("daily", "daily-1")]
    for missing in (("board", "daily-1"), ("nowhere", "board-0"), "board", ("board",), None):
        assert missing not in made
        with pytest.raises(KeyError):
            made[missing]  # type: ignore[index]


def test_call_links_are_the_links_a_dict_held():
    from urllib.parse import quote

    from reportgen.render.sheets import sheet_hrefs

    ids = [["a-1", "a 2", "a/3"], [], ["b#4", "ünï"]]
    places = [SimpleNamespace(calls=[SimpleNamespace(call_id=i) for i in group]) for group in ids]
    links = sheet_hrefs(places, ["s1.html", "s2.html", "s3.html"], "../store/")  # type: ignore[arg-type]
    want = {i: f"../store/{name}#call-{quote(i, safe='')}" for group, name in zip(ids, ("s1.html", "s2.html", "s3.html"))
            for i in group}
    assert dict(links) == want and list(links) == list(want) and len(links) == 5
    assert links.sheet_of["a 2"] is links.sheet_of["a/3"]  # one string a sheet
    with pytest.raises(KeyError):
        links["nowhere"]


def test_sheets_are_handed_to_the_writers_in_the_log_order_of_their_first_calls():
    from reportgen.render.shared import _in_log_order
    from reportgen.render.sheets import SheetPlace

    # Two services taking turns in the log (lines 2, 3, 4, ...), three sheets each.
    lines = {"a": range(2, 302, 2), "b": range(3, 303, 2)}
    places = [SheetPlace(s, n + 1, 3, 50 * n + 1, 150, tuple(SimpleNamespace(line=l) for l in list(lines[s])[50 * n:50 * n + 50]))
              for s in ("a", "b") for n in range(3)]  # type: ignore[misc]
    order = _in_log_order(places)
    assert sorted(order) == list(range(6))
    assert [(places[i].service, places[i].number) for i in order] == [("a", 1), ("b", 1), ("a", 2), ("b", 2),
                                                                      ("a", 3), ("b", 3)]

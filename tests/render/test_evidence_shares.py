"""A long evidence list is shown by sheet: for each sheet, how many of its calls are in
the list, their outcomes, and the shorter of the two lists (members, or the calls left
out). Checked against the direct computation (each sheet's calls looked up one by one in
the set) on lists shaped to trip it, and on a whole build."""

from __future__ import annotations

import random
import re
from collections import Counter
from types import SimpleNamespace

import pytest

from reportgen.model.outcomes import OUTCOME_LABELS, SHOWN_LABELS
from reportgen.render.evidence import EVIDENCE_ROWS, set_members, sheet_shares

OUTCOMES = list(SHOWN_LABELS)  # a score run's among them
LABELS = {label: outcome for outcome, label in SHOWN_LABELS.items()}


def direct(run, service, ids):
    """The plain way: a set of ids, and every call of every sheet looked up in it."""
    view = next((s for s in run.services if s.id == service), None)
    sheets = view.sheets if view else ()
    members = set(ids)
    on_sheets = {c for sheet in sheets for c in sheet.calls}
    if len(ids) <= EVIDENCE_ROWS or len(members) != len(ids) or not members <= on_sheets:
        return None
    shares = []
    for sheet in sheets:
        inside = [run.by_id[c] for c in sheet.calls if c in members]
        if not inside:
            continue
        left = [run.by_id[c] for c in sheet.calls if c not in members]
        counts = Counter(v.outcome for v in inside)
        listed = left if len(left) < len(inside) else inside
        shares.append((sheet.href, len(inside), len(left), [v.call.call_id for v in listed],
                       [plain_count(o, counts[o]) for o in SHOWN_LABELS if counts[o]]))
    return shares


def plain_count(outcome, n):
    label = SHOWN_LABELS[outcome]
    return f"{n} {label}{'s' if outcome == 'technical_failure' and n != 1 else ''}"


def a_run(rng: random.Random, sizes: dict[str, int]):
    calls, services = [], []
    for service, n in sizes.items():
        own = [SimpleNamespace(call=SimpleNamespace(call_id=f"{service}-{i}", service=service),
                               outcome=rng.choice(OUTCOMES)) for i in range(n)]
        calls += own
        sheets = [SimpleNamespace(first=start + 1, last=min(start + 50, n), href=f"{service}-{start}.html",
                                  calls=tuple(c.call.call_id for c in own[start:start + 50]))
                  for start in range(0, n, 50)]
        services.append(SimpleNamespace(id=service, calls=tuple(own), sheets=tuple(sheets)))
    rng.shuffle(calls)  # the run's own order is the log's, services taking turns
    return SimpleNamespace(services=tuple(services), by_id={c.call.call_id: c for c in calls})


def shown(result):
    if result["shares"] is None:
        return None
    for s in result["shares"]:  # as a theme written before the counts were reads them too
        assert [plain_count(o, n) for o, n in ((LABELS[label], n) for label, n in s.counts)] == list(s.count_texts)
        assert len(s.members) == s.n_members and len(s.left_out) == s.n_left_out
        assert s.listed == (s.left_out if s.lists_left_out else s.members)
    return [(s.sheet.href, s.n_members, s.n_left_out, [v.call.call_id for v in s.listed], list(s.count_texts))
            for s in result["shares"]]


@pytest.mark.parametrize("seed", range(12))
def test_shares_match_the_direct_computation(seed):
    rng = random.Random(seed)
    run = a_run(rng, {"a": rng.choice([201, 250, 420, 777]), "b": rng.choice([30, 260]), "c": 0})
    a_ids = [c.call.call_id for c in run.services[0].calls]
    lists = {
        "all": a_ids,
        "most": [c for c in a_ids if rng.random() < 0.9],
        "half": [c for c in a_ids if rng.random() < 0.5],
        "every other sheet": [c for i, c in enumerate(a_ids) if (i // 50) % 2 == 0],
        "a tie": [c for i, c in enumerate(a_ids) if i % 50 < 25],
        "the last call only, and the rest of one sheet": a_ids[:EVIDENCE_ROWS] + a_ids[-1:],
        "short": a_ids[:EVIDENCE_ROWS],
        "an id twice": a_ids + a_ids[:1],
        "another service's call": a_ids + [c.call.call_id for c in run.services[1].calls][:1],
    }
    sets = {name: ("r", "a", tuple(ids)) for name, ids in lists.items()}
    members = set_members(sets, {"r": run})
    for name, ids in lists.items():
        got = sheet_shares(run, "a", ids, members.get(name))
        assert shown(got) == direct(run, "a", ids), name
        if got["shares"] is None:
            assert [v.call.call_id for v in got["entries"]] == list(ids)


@pytest.fixture(scope="module")
def long_lists_site(tmp_path_factory):
    """Two services of 260 calls (timeouts among them): their rates' lists are long."""
    import sys
    from conftest import ROOT
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from make_leaderboard import generate
    from reportgen.pipeline.pipeline import build_site

    root = tmp_path_factory.mktemp("long-lists")
    generate(root / "source", services=2, calls=260, distinct_svgs=8, blocks=2, seed=5, drawings="cheap")
    build_site(root / "source", root / "site", cache=root / "cache")
    return root / "source", root / "site" / "v1"


LINE = re.compile(r'calls (\d+)–(\d+)</a>: (?:all (\d+)|(\d+) of (\d+)) \(([^)]*)\)(, all but|:)?(.*?)</li>', re.S)


def test_a_built_site_lists_each_long_set_by_sheet_exactly(long_lists_site):
    import hashlib
    import json
    from reportgen.load.source import load_source

    source, version = long_lists_site
    run = load_source(source).runs[0]
    by_service: dict[str, list] = {}
    for call in run.calls:
        by_service.setdefault(call.service, []).append(call)
    claims = json.loads((version / "data" / "results.json").read_text())["claims"]
    checked = partial = 0
    for claim in claims:
        for service, calls in by_service.items():
            ids = [c for c in claim["evidence"] if c.split("-b")[0] == service]
            if len(ids) <= EVIDENCE_ROWS or len(ids) != len(claim["evidence"]):
                continue
            key = hashlib.sha256("\x1f".join((run.contract.id, service, *ids)).encode()).hexdigest()[:16]
            html = (version / "evidence" / run.contract.id / f"{key}.html").read_text()
            words = re.sub(r"<[^>]+>", "", html)
            assert not re.search(r"all but\S|\):\S", words)  # a word, then the calls it names
            assert set(re.findall(r"(\d+) technical failure(?=[;)])", words)) <= {"1"}  # else "failures"
            members = set(ids)
            want = []
            for start in range(0, len(calls), 50):
                sheet = calls[start:start + 50]
                inside = [c for c in sheet if c.call_id in members]
                if not inside:
                    continue
                left = [c for c in sheet if c.call_id not in members]
                listed = left if len(left) < len(inside) else inside if left else []
                counts = Counter(c.outcome for c in inside)
                counts = [plain_count(o, counts[o]) for o in OUTCOME_LABELS if counts[o]]
                want.append((start + 1, start + len(sheet), len(inside), len(sheet), counts,
                             [c.call_id for c in listed]))
            got = []
            for m in LINE.finditer(html):
                n = int(m[3] or m[4])
                counts = m[6].split("; ")
                listed = re.findall(r'#call-[^"]*">([^<]+)</a>', m[8])
                got.append((int(m[1]), int(m[2]), n, int(m[5] or n), counts, listed))
            assert got == want, (claim["id"], service)
            partial += sum(1 for g in got if g[2] != g[3])
            checked += 1
    assert checked >= 4 and partial  # each service's rate and its complete returns (some calls left out)


# A theme's evidence.html as it was written before the counts were made ready to read:
# the members and the calls left out as lists, each count as a pair.
OLDER_THEME = """{% extends "base.html" %}
{% block title %}Evidence{% endblock %}
{% block main %}
{% if entries is none %}<ul class="by-sheet">
{% for share in shares %}<li>{{ share.members|length }} of {{ share.sheet.calls|length }}, {{ share.left_out|length }} out
({% for label, n in share.counts %}{{ n }} {{ label }}{{ "; " if not loop.last }}{% endfor %}):
{% for v in share.listed %}{{ v.call.call_id }} {% endfor %}</li>
{% endfor %}</ul>{% endif %}
{% endblock %}
"""


@pytest.mark.slow
def test_a_theme_written_before_the_counts_still_builds(long_lists_site, tmp_path):
    import shutil
    from reportgen.pipeline.pipeline import build_site

    source = tmp_path / "source"
    shutil.copytree(long_lists_site[0], source)
    (source / "older" / "templates").mkdir(parents=True)
    (source / "older" / "templates" / "evidence.html").write_text(OLDER_THEME)
    config = source / "reportgen.toml"
    config.write_text(config.read_text() + 'theme = "older"\n')
    build_site(source, tmp_path / "site", cache=tmp_path / "cache")
    pages = list((tmp_path / "site" / "v1" / "evidence").rglob("*.html"))
    lines = [m for p in pages for m in re.findall(r"<li>(\d+) of (\d+), (\d+) out", p.read_text())]
    assert lines and all(int(a) + int(c) == int(b) for a, b, c in lines)

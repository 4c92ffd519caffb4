"""A service's page answers "is this entry's place on the board supported?" on its own."""

from __future__ import annotations

import json
import re

from sitecheck import parse, text


def section(page: str) -> str:
    return page.split('<section id="standing">')[1].split("</section>")[0]


def hrefs(html: str) -> set[str]:
    return set(re.findall(r'href="([^"]+)"', html))


def test_a_leaderboard_entry_shows_its_standing_each_number_a_claim(demo_site):
    claims = {c["id"]: c for c in json.loads(text(demo_site / "data" / "results.json"))["claims"]}
    page = text(demo_site / "experiments" / "relay-leaderboard" / "relay-04.html")
    standing = section(page)
    links = hrefs(standing)
    key = "relay-leaderboard.relay-04_vs_relay-01"
    for cid in ("relay-leaderboard.relay-04.rank", f"{key}.difference", f"{key}.fisher", f"{key}.verdict",
                *(f"relay-leaderboard.block-{b}.relay-04.first_pass_rate" for b in "1234"),
                *(f"{key.replace('relay-leaderboard.', f'relay-leaderboard.block-{b}.')}.difference" for b in "1234")):
        assert f"../../claims/relay-leaderboard.html#{cid}" in links, cid
    verdict = claims[f"{key}.verdict"]
    assert verdict["verdict_label"] in standing and verdict["verdict_text"].split(":")[0] in standing
    holm = claims[f"{key}.fisher"]["adjusted_p_value"]
    assert f"holm {holm:.4f}" in standing
    rank = claims["relay-leaderboard.relay-04.rank"]
    mates = [c["id"].split(".")[1] for c in claims.values()
             if c["id"].endswith(".rank") and c["group"] == rank["group"] and ".relay-04." not in c["id"]]
    assert all(m in standing for m in mates)
    # The audit findings that weaken its claims, linked to the audit.
    findings = set(claims["relay-leaderboard.relay-04.first_pass_rate"]["findings"])
    for fid in findings:
        assert f"index.html#finding-{fid}" in links
    audit_ids = set(parse(demo_site / "experiments" / "relay-leaderboard" / "index.html").ids)
    assert all(f"finding-{fid}" in audit_ids for fid in findings)


def test_the_baseline_says_it_is_the_baseline(demo_site):
    standing = section(text(demo_site / "experiments" / "relay-leaderboard" / "relay-01.html"))
    assert "relay-01 is the baseline: every comparison in this run is a candidate minus relay-01." in standing
    assert "claims/relay-leaderboard.html#relay-leaderboard.relay-01.rank" in standing


def test_a_paired_candidate_shows_its_paired_decision(demo_site):
    standing = section(text(demo_site / "experiments" / "seeds-paired" / "tuned.html"))
    assert "claims/seeds-paired.html#seeds-paired.tuned_vs_current.paired_difference" in standing
    assert "claims/seeds-paired.html#seeds-paired.tuned_vs_current.verdict" in standing

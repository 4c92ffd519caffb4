"""A score run shows scores, never a pass rate that only counts completed calls."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from sitecheck import text


def visible(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_a_score_run_tables_its_scores_and_completions(demo_site):
    frame = pd.read_csv(demo_site / "data" / "seeds-paired" / "calls.csv")
    claims = {c["id"]: c for c in json.loads(text(demo_site / "data" / "results.json"))["claims"]}
    for service, scores in frame.groupby("service")["score"]:
        assert claims[f"seeds-paired.{service}.mean_score"]["estimate"] == pytest.approx(np.mean(scores), abs=1e-12)
        sd = claims[f"seeds-paired.{service}.score_sd"]
        assert sd["estimate"] == pytest.approx(np.std(scores, ddof=1), abs=1e-12)
        completed = claims[f"seeds-paired.{service}.completed"]
        assert (completed["numerator"], completed["denominator"]) == (5, 5)
    page = text(demo_site / "experiments" / "seeds-paired" / "index.html")
    results = visible(page.split('<section id="results">')[1].split("</section>")[0])
    assert "Mean score" in results and "71.3 (5 scored)" in results and "sd 0.532" in results
    assert "Complete returns, all planned first submissions" in results
    assert "pass rate" not in results.lower()
    assert "Pass rate of each service" not in page and "Pass rate per block" not in page
    service = visible(text(demo_site / "experiments" / "seeds-paired" / "tuned.html"))
    assert "Mean score of complete returns" in service and "First-submission pass rate" not in service
    front = visible(text(demo_site / "index.html"))
    seeds = front.split("Fine-tuned model vs current model on five seeds")[1].split("Full results")[0]
    assert "Mean score" in seeds and "pass rate, all planned" not in seeds.lower()

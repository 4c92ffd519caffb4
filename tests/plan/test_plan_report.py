"""The report uses the registered plan: the experiment page states the design's
sensitivity (never post-hoc power), check reports schedule findings, and a published
version that embeds the schedule verifies."""

from __future__ import annotations

import re
from pathlib import Path

from test_plan_schedule import follow, planned_source, write_log


def _page(site: Path) -> str:
    return (site / "v1" / "experiments" / "ab" / "index.html").read_text(encoding="utf-8")


def test_plan_schedule_log_build_check_and_verify(tmp_path: Path, run_cli) -> None:
    source = planned_source(tmp_path)
    log = follow(source)
    write_log(source, log)
    checked = run_cli("check", source)
    assert "schedule-" not in checked.output, checked.output
    site = tmp_path / "site"
    built = run_cli("build", source, "--out", site, "--no-cache", "-q")
    assert built.exit_code == 0, built.output
    page = _page(site)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "Planned for 80% power to detect 35 points at a baseline of 50%" in text
    passes = sum(1 for row in log if row["service"] == "baseline" and row["qualified"] == "true")
    observed = f"{100 * passes / 32:.0f}%" if (100 * passes) % 32 == 0 else f"{100 * passes / 32:.1f}%"
    assert re.search(rf"At the observed baseline of {re.escape(observed)} the same sample detects an improvement "
                     r"of \d+(\.\d)? points or a drop of \d+(\.\d)? points with 80% power", text), text
    assert "not “post-hoc power”" in text
    assert "schedule.csv, seed 20261001, sha256:" in text
    assert "schedule-" not in page
    assert (site / "v1" / "data" / "ab" / "schedule.csv").read_bytes() == \
        (source / "experiments" / "ab" / "schedule.csv").read_bytes()
    verified = run_cli("verify", site / "v1")
    assert verified.exit_code == 0, verified.output

    # One deviation: check names it before any build, and the page shows it.
    log[3]["started_at"], log[4]["started_at"] = log[4]["started_at"], log[3]["started_at"]
    if log[3]["service"] == log[4]["service"]:
        i = next(i for i in range(len(log) - 1) if log[i]["service"] != log[i + 1]["service"]
                 and log[i]["block_id"] == log[i + 1]["block_id"])
        log[i]["started_at"], log[i + 1]["started_at"] = log[i + 1]["started_at"], log[i]["started_at"]
    write_log(source, log)
    checked = run_cli("check", source)
    assert "warning [schedule-order]" in checked.output


def test_a_run_without_a_plan_says_so(make_source, tmp_path: Path, run_cli) -> None:
    source = make_source()
    site = tmp_path / "site"
    built = run_cli("build", source, "--out", site, "--no-cache", "-q")
    assert built.exit_code == 0, built.output
    page = (site / "v1" / "experiments" / "mini" / "index.html").read_text(encoding="utf-8")
    assert "No sample-size plan was registered" in page
    assert "Planned for" not in page


def test_the_sensitivity_sentence_is_of_the_design_not_of_the_observed_effect(tmp_path: Path) -> None:
    import dataclasses

    from reportgen.load.source import load_source
    from reportgen.plan import fisher_power
    from reportgen.plan.sensitivity import NO_PLAN, sensitivity

    source = planned_source(tmp_path, effect=0.1, baseline=0.5)
    write_log(source, follow(source))
    contract = load_source(source).runs[0].contract
    said = sensitivity(contract, 0.8)
    n = contract.plan.calls_per_service
    assert said.planned.startswith("Planned for 80% power to detect 10 points at a baseline of 50% (Fisher's exact "
                                   f"test, two-sided, α = 0.05): {n} calls per service")
    up = float(re.search(r"an improvement of (\d+(?:\.\d)?) points", said.observed).group(1)) / 100
    assert fisher_power(n, n, 0.8 + up, 0.8, 0.05) >= 0.8 > fisher_power(n, n, 0.8 + up - 0.002, 0.8, 0.05)
    # Only the design and the observed baseline enter: never the observed difference.
    assert sensitivity(contract, 0.8) == said
    assert "post-hoc power" in said.why
    assert sensitivity(dataclasses.replace(contract, plan=None), 0.8).planned == NO_PLAN

"""`reportgen plan` as scripts and people use it: JSON fields, text, files written,
and one clear line for each bad input."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

BASE = ["plan", "--design", "independent", "--baseline-rate", "0.5", "--min-useful-effect", "0.2"]


def test_json_of_the_independent_design(run_cli) -> None:
    result = run_cli(*BASE, "--alpha", "0.05", "--power", "0.8", "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["calls_per_service"] == 102 and 0.8 <= body["power"] < 0.82
    assert body["objectives"][0]["test"] == "fisher-exact"
    assert body["objectives"][0]["power_holds_up_to"] >= 112


def test_json_of_leaderboard_and_paired(run_cli) -> None:
    board = json.loads(run_cli("plan", "--design", "leaderboard", "--candidates", "5", "--baseline-rate", "0.5",
                               "--min-useful-effect", "0.2", "--json").output)
    assert board["services"] == 6 and board["alpha_per_comparison"] == pytest.approx(0.01)
    assert board["calls_per_service"] > 102 and board["power"] >= 0.8
    paired = json.loads(run_cli("plan", "--design", "paired", "--discordant-rate", "0.3", "--min-useful-effect",
                                "0.1", "--json").output)
    assert paired["unit"] == "pairs" and paired["objectives"][0]["test"] == "mcnemar-exact"
    assert paired["calls_per_service"] == paired["size"] and paired["power"] >= 0.8


def test_text_and_files(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "pelican-ab"
    result = run_cli(*BASE, "--blocks", "4", "--out", out)
    assert result.exit_code == 0, result.output
    assert "Planned: 104 calls per service, 208 in all (the rule gives 102, rounded up to fill 4 equal blocks)." \
        in result.output
    assert "What 104 calls per service detect with 80% power" in result.output
    contract = tomllib.loads((out / "run.toml").read_text(encoding="utf-8"))
    assert contract["run"]["planned_calls"] == 104 and contract["run"]["blocks"] == 4
    assert contract["plan"]["calls_per_service"] == 104 and contract["plan"]["schedule_seed"] == 20261001
    lines = (out / "schedule.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "block,slot,service,task,repetition" and len(lines) == 1 + 208
    again = run_cli(*BASE, "--blocks", "4", "--out", out)
    assert again.exit_code == 2 and "exists" in again.output


@pytest.mark.parametrize("args, start", [
    (["--power", "1"], "error: --power: must be between 0 and 1"),
    (["--power", "1.2"], "error: --power: must be between 0 and 1"),
    (["--alpha", "0.6"], "error: --alpha: must be in (0, 0.5]"),
    (["--alpha", "0"], "error: --alpha: must be in (0, 0.5]"),
    (["--min-useful-effect", "0.6"], "error: --min-useful-effect: 0.6 is more than the room above the baseline"),
    (["--noninferiority-margin", "-0.05"], "error: --noninferiority-margin: the largest acceptable loss is a positive"),
    (["--design", "leaderboard", "--candidates", "0"], "error: --candidates: a leaderboard compares at least 1"),
    (["--design", "leaderboard"], "error: --candidates: required for the leaderboard design"),
    (["--design", "paired", "--discordant-rate", "0.1"], "error: --min-useful-effect: 0.2 is not below the discordant"),
    (["--design", "sequential"], "error: --design: 'sequential' is not one of"),
])
def test_bad_input_is_one_line(run_cli, args: list[str], start: str) -> None:
    result = run_cli(*BASE, *args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(start), result.output
    assert "Traceback" not in result.output

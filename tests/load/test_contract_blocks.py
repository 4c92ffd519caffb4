"""``blocks = N`` in run.toml: a number of blocks whose ids come from the log.

A registered count accepts any N distinct block ids in the log (in natural order), and
a log with another number of blocks is one error at the contract's ``blocks`` line. A
registered list of ids keeps checking every row against the list."""

from __future__ import annotations

import json
import re

from conftest import CONTRACT, default_rows
from sitecheck import text

RUN = "experiments/mini/run.toml"
LOG = "experiments/mini/calls.csv"
BLOCKS_LINE = 13  # ``blocks = ...`` in conftest's CONTRACT


def counted(n: int) -> str:
    contract = CONTRACT.replace('blocks = ["1", "2"]', f"blocks = {n}")
    assert contract != CONTRACT
    return contract


def renamed_blocks(names: dict[str, str]) -> list[dict[str, str]]:
    rows = default_rows()
    for row in rows:
        row["block_id"] = names[row["block_id"]]
    return rows


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if " error [" in line]


def test_a_count_takes_the_block_ids_of_the_log(make_source, run_cli, tmp_path):
    rows = [r for r in renamed_blocks({"1": "b10", "2": "b2"}) if r["call_id"] != "Y-4"]
    source = make_source(rows=rows, contract=counted(2))
    result = run_cli("check", source)
    assert error_lines(result.output) == [], result.output
    built = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert built.exit_code == 0, built.output
    site = tmp_path / "site" / "v1"
    claims = json.loads(text(site / "data" / "results.json"))["claims"]
    blocks = list(dict.fromkeys(m.group(1) for c in claims if (m := re.match(r"mini\.block-([^.]+)\.", c["id"]))))
    assert blocks == ["b2", "b10"]  # natural order, not "b10" before "b2"
    by_id = {c["id"]: c for c in claims}
    # The plan (4 per service) splits over the log's 2 blocks: Y-4 is missing from b2,
    # so b2's denominator stays the planned 2, not the 1 call observed.
    assert by_id["mini.block-b2.Y.first_pass_rate"]["denominator"] == 2
    assert by_id["mini.block-b2.Y.first_pass_rate"]["numerator"] == 0
    assert by_id["mini.block-b10.Y.first_pass_rate"]["numerator"] == 1
    assert by_id["mini.block-b10.X.first_pass_rate"]["denominator"] == 2
    page = text(site / "experiments" / "mini" / "index.html")
    per_block = page[page.index('<section id="blocks">'):]
    per_block = per_block[:per_block.index("</section>")]
    shown = list(dict.fromkeys(re.findall(r"\.html#mini\.block-([^.]+)\.", per_block)))
    assert shown == ["b2", "b10"]
    assert run_cli("verify", site).exit_code == 0  # the published run.toml still says blocks = 2


def test_a_count_other_than_the_log_is_one_error_at_the_contract(make_source, run_cli):
    rows = renamed_blocks({"1": "b1", "2": "b2"})
    result = run_cli("check", make_source(rows=rows, contract=counted(4)))
    assert result.exit_code == 1
    assert error_lines(result.output) == [
        (f"{RUN}:{BLOCKS_LINE}: error [invalid] run.blocks: 4 blocks are registered, but {LOG} has 2 distinct "
         "block ids (b1, b2); register the number the run had, or list the ids")]


def test_a_count_with_no_block_ids_in_the_log_is_one_error(make_source, run_cli):
    rows = renamed_blocks({"1": "", "2": ""})
    result = run_cli("check", make_source(rows=rows, contract=counted(2)))
    assert error_lines(result.output) == [
        (f"{RUN}:{BLOCKS_LINE}: error [invalid] run.blocks: 2 blocks are registered, but no row of {LOG} "
         "names its block (block_id)")]


def test_a_count_names_each_row_without_a_block(make_source, run_cli):
    rows = renamed_blocks({"1": "b1", "2": "b2"})
    rows[3]["block_id"] = ""  # X-4, line 5
    result = run_cli("check", make_source(rows=rows, contract=counted(2)))
    assert error_lines(result.output) == [
        f"{LOG}:5: error [invalid] block_id: '' is not one of the registered blocks (b1, b2)"]


def test_a_count_with_numbered_ids_keeps_a_block_without_calls(make_source, run_cli, tmp_path):
    """Ids 1..N are what a count always meant: block 3 had no calls (a missed window)."""
    source = make_source(contract=counted(3))
    assert error_lines(run_cli("check", source).output) == []
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    claims = json.loads(text(tmp_path / "site/v1/data/results.json"))["claims"]
    by_id = {c["id"]: c for c in claims}
    assert by_id["mini.block-3.X.first_pass_rate"]["numerator"] == 0
    assert by_id["mini.block-1.X.first_pass_rate"]["numerator"] == 2


def test_a_count_must_be_positive(make_source, run_cli):
    result = run_cli("check", make_source(contract=counted(0)))
    assert f"{RUN}:{BLOCKS_LINE}: error [invalid] run.blocks: must be a positive number of blocks, got 0" \
        in error_lines(result.output)


def test_a_list_of_ids_is_still_checked_row_by_row(make_source, run_cli):
    rows = renamed_blocks({"1": "b1", "2": "b2"})
    result = run_cli("check", make_source(rows=rows))
    errors = error_lines(result.output)
    assert len(errors) == len(rows)
    assert errors[0] == f"{LOG}:2: error [invalid] block_id: 'b1' is not one of the registered blocks (1, 2)"

"""The contract and site-config readers: each kind of bad value gives one exact line,
as ``reportgen check`` prints it (file:line: error [invalid] field: message).

Each case starts from the valid small source of conftest and breaks one value. The
line numbers refer to conftest's CONTRACT (``[run]`` on line 1, ``concurrency`` on 14,
an appended key on 15)."""

from __future__ import annotations

import pytest

from conftest import CONTRACT

RUN = "experiments/mini/run.toml"
SITE = "reportgen.toml"


def replaced(old: str, new: str) -> str:
    assert old in CONTRACT, old
    return CONTRACT.replace(old, new, 1)


def appended(line: str) -> str:
    """A key added to [run] right after ``concurrency = 1``: it lands on line 15."""
    return replaced("concurrency = 1\n", f"concurrency = 1\n{line}\n")


def invalid(file: str, line: int, field: str, message: str) -> str:
    return f"{file}:{line}: error [invalid] {field}: {message}"


CONTRACT_CASES = {
    # string: wrong type, and missing when required
    "string type": (replaced('title = "Mini run"', "title = 5"),
                    invalid(RUN, 3, "run.title", "must be a string, got 5")),
    "string required": (replaced('question = "Do X and Y differ in first-submission pass rate?"\n', ""),
                        invalid(RUN, 0, "run.question", "required")),
    # choice: a value outside the vocabulary, with each of the three messages
    "choice design": (replaced('design = "independent"', 'design = "crossover"'),
                      invalid(RUN, 7, "run.design",
                              "'crossover' is not one of independent, paired, repeated, leaderboard, longitudinal")),
    "choice phase": (replaced('phase = "formal"', 'phase = "final"'),
                     invalid(RUN, 5, "run.phase", "must be 'pilot' or 'formal', got 'final'")),
    "choice metric": (replaced('primary_metric = "first_pass_rate"', 'primary_metric = "f1"'),
                      invalid(RUN, 8, "run.primary_metric", "'f1' is not one of first_pass_rate, score")),
    "choice wrong type": (replaced('design = "independent"', "design = 3"),
                          invalid(RUN, 7, "run.design", "must be a string, got 3")),
    # timestamp
    "timestamp no offset": (replaced('registered_at = "2026-10-01T08:00:00+00:00"', 'registered_at = "2026-10-01"'),
                            invalid(RUN, 6, "run.registered_at",
                                    "'2026-10-01' is not an ISO 8601 time with a UTC offset")),
    "window not a string": (appended("window_start = 5"),
                            invalid(RUN, 15, "run.window_start", "must be a string, got 5")),
    # flag
    "flag type": (appended('higher_is_better = "yes"'),
                  invalid(RUN, 15, "run.higher_is_better", "must be true or false, got 'yes'")),
    # number: wrong type, out of range, and the failure score's own wording
    "number type": (replaced("alpha = 0.05", 'alpha = "small"'),
                    invalid(RUN, 11, "run.alpha", "must be a number, got 'small'")),
    "number range": (replaced("alpha = 0.05", "alpha = 5"),
                     invalid(RUN, 11, "run.alpha", "must be between 0.0 and 1.0 (exclusive), got 5")),
    "number bool": (appended("min_useful_effect = true"),
                    invalid(RUN, 15, "run.min_useful_effect", "must be a number, got True")),
    "number open range": (appended("noninferiority_margin = 0"),
                          invalid(RUN, 15, "run.noninferiority_margin",
                                  "must be between 0.0 and 1.0 (exclusive), got 0")),
    "number nan": (replaced("alpha = 0.05", "alpha = nan"),
                   invalid(RUN, 11, "run.alpha", "must be a number, finite, got nan")),
    "number infinite": (appended("failure_score = -inf"),
                        invalid(RUN, 15, "run.failure_score",
                                "must be a number (the score a technical failure counts as), finite, got -inf")),
    "number failure score": (appended('failure_score = "zero"'),
                             invalid(RUN, 15, "run.failure_score",
                                     "must be a number (the score a technical failure counts as), got 'zero'")),
    # positive integer: out of range, and a boolean is not an integer
    "positive int range": (replaced("concurrency = 1", "concurrency = 0"),
                           invalid(RUN, 14, "run.concurrency", "must be a positive integer, got 0")),
    "positive int bool": (appended("candidates_tried = true"),
                          invalid(RUN, 15, "run.candidates_tried", "must be a positive integer, got True")),
    # string lists: not a list, a non-string item, an empty item
    "list not a list": (appended('slices = "long"'),
                        invalid(RUN, 15, "run.slices",
                                "must be a list of slice names (values of the log's slice column)")),
    "list empty item": (appended('slices = ["long", ""]'),
                        invalid(RUN, 15, "run.slices",
                                "must be a list of slice names (values of the log's slice column)")),
    "list item type": (appended("exclusion_rules = [1]"),
                       invalid(RUN, 15, "run.exclusion_rules", "must be a list of strings")),
    "candidates": (replaced('candidates = ["Y"]', "candidates = []"),
                   invalid(RUN, 10, "run.candidates", "required: a list of candidate service ids")),
    "blocks": (replaced('blocks = ["1", "2"]', 'blocks = "1"'),
               invalid(RUN, 13, "run.blocks", "must be a list of block ids or a number of blocks")),
    # tables
    "table type": (appended("bootstrap = 3"),
                   invalid(RUN, 15, "run.bootstrap", "must be a table {resamples = 10000, seed = 20261001}")),
    "table resamples": (appended("bootstrap = {resamples = 50}"),
                        invalid(RUN, 15, "run.bootstrap",
                                "resamples must be an integer from 100 to 1,000,000, got 50")),
    "table seed": (appended("bootstrap = {seed = -1}"),
                   invalid(RUN, 15, "run.bootstrap", "seed must be a non-negative integer, got -1")),
    "planned table": (replaced("planned_calls = 4", "planned_calls = {X = 4, Y = 0}"),
                      invalid(RUN, 12, "run.planned_calls", "Y: must be a positive integer, got 0")),
}


@pytest.mark.parametrize("name", sorted(CONTRACT_CASES))
def test_contract_reader_messages(make_source, run_cli, name):
    contract, expected = CONTRACT_CASES[name]
    result = run_cli("check", make_source(contract=contract))
    assert result.exit_code == 1, result.output
    assert result.output.splitlines().count(expected) == 1, result.output


SITE_CASES = {
    "required": ('version = "v1"\n',
                 invalid(SITE, 0, "title", "required: a non-empty string naming the report")),
    "blank title": ('title = "  "\n', invalid(SITE, 1, "title", "required: a non-empty string naming the report")),
    "label": ('title = "T"\nversion = "v 1/.."\n',
              invalid(SITE, 2, "version", "'v 1/..' is not a usable version label (letters, digits, '.', '_', '-')")),
    "type": ('title = "T"\ntheme = 5\n', invalid(SITE, 2, "theme", "must be a theme name or folder")),
    "string": ('title = "T"\nbase_url = 3\n', invalid(SITE, 2, "base_url", "must be a string")),
    "list": ('title = "T"\nexperiments = "mini"\n',
             invalid(SITE, 2, "experiments", "must be a list of experiment folder names")),
    "list item": ('title = "T"\nexperiments = ["mini", "../up"]\n',
                  invalid(SITE, 2, "experiments", "must be a list of experiment folder names")),
    "timestamp": ('title = "T"\nbuilt_at = 2026-10-01\n',
                  invalid(SITE, 2, "built_at", "must be an ISO 8601 date and time with a UTC offset")),
    "previous label": ('title = "T"\nprevious = 2\n', invalid(SITE, 2, "previous", "2 is not a version label")),
    "previous itself": ('title = "T"\nversion = "v2"\nprevious = "v2"\n',
                        invalid(SITE, 3, "previous", "a version cannot supersede itself")),
}


@pytest.mark.parametrize("name", sorted(SITE_CASES))
def test_site_reader_messages(make_source, run_cli, name):
    site, expected = SITE_CASES[name]
    result = run_cli("check", make_source(site=site))
    assert result.exit_code == 1, result.output
    assert result.output.splitlines().count(expected) == 1, result.output


def test_valid_source_has_no_reader_messages(make_source, run_cli):
    result = run_cli("check", make_source())
    assert "error [invalid]" not in result.output, result.output

"""What an imported run's pages tell a reader at first sight: the harness's own number and
rule beside the headline, partial credit as a registrable choice, text runs described as
text, readable names, logs of one task with differently named scorers paired, and the
decision wording of a contract written after the run."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_import_inspect import INSPECT_VALUE, inspect_log, sample, write_eval, write_json

from reportgen.cli import main
from reportgen.errors import InputError
from reportgen.importers.assemble import assemble
from reportgen.importers.inspect import read_inspect
from reportgen.importers.names import model_ids
from reportgen.load.artifacts import artifact_kind
from reportgen.model.artifacts import Artifact, CallArtifacts, sha256
from reportgen.model.config import CHOSEN_AFTER, CHOSEN_BEFORE
from reportgen.render.text_runs import first_line, response_file

# Two models on the same 10 samples, each graded C/P/I by a scorer of its own name; one error.
ALPHA = ["C", "P", "I", "C", "P", "C", "error", "I", "C", "P"]
BETA = ["C", "I", "P", "P", "C", "I", "C", "C", "I", "P"]


def graded(values: list[str], scorer: str) -> list[dict]:
    return [sample(i, None, scorer=scorer, error={"message": "boom"}) if v == "error" else
            sample(i, v, scorer=scorer, text=f"Answer {v}\nbecause {i}") for i, v in enumerate(values, 1)]


def inspect_accuracy(values: list[str]) -> float:
    """Inspect's accuracy, computed here: C 1, P 0.5, I 0; errored samples left out."""
    counted = [INSPECT_VALUE[v] for v in values if v != "error"]
    return sum(counted) / len(counted)


def logs(folder: Path) -> list[Path]:
    return [write_json(folder / "a.json", inspect_log("openai/gpt-4o-mini", graded(ALPHA, "match"), scorer="match")),
            write_eval(folder / "b.eval", inspect_log("anthropic/claude-3-5-haiku", graded(BETA, "includes"),
                                                      scorer="includes"))]


def run_cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def build(src: Path, out: Path) -> Path:
    run_cli("build", str(src), "--out", str(out), "-q")
    run_cli("verify", str(out / "v1"))
    return out / "v1"


def visible_text(html: str) -> str:
    """What a reader sees: tags, scripts and styles out, entities read."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.fixture(scope="module")
def paired_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("paired")
    run_cli("import", "inspect", *map(str, logs(tmp / "logs")), "--into", str(tmp / "src"))
    return tmp / "src", build(tmp / "src", tmp / "site")


def test_readable_service_ids() -> None:
    assert model_ids(["openai/gpt-4o-mini", "anthropic/claude-3-7-sonnet-latest"]) == {
        "openai/gpt-4o-mini": "gpt-4o-mini", "anthropic/claude-3-7-sonnet-latest": "claude-3-7-sonnet-latest"}
    # Two providers of one model: the whole name tells them apart; no hash is needed.
    assert model_ids(["openai/gpt-4o", "azureai/gpt-4o"]) == {"openai/gpt-4o": "openai-gpt-4o",
                                                              "azureai/gpt-4o": "azureai-gpt-4o"}
    # Names that meet even whole get a short suffix, and stay distinct.
    ids = model_ids(["a/b:c", "a/b/c", "x/b c"])
    assert len(set(ids.values())) == 3 and all(re.fullmatch(r"[A-Za-z0-9._-]+", v) for v in ids.values())


def test_the_contract_records_the_harness_number_rule_and_the_choice(paired_site: tuple[Path, Path]) -> None:
    src, _ = paired_site
    [folder] = (src / "experiments").iterdir()
    text = (folder / "run.toml").read_text(encoding="utf-8")
    assert 'question = "Accuracy of gpt-4o-mini compared with claude-3-5-haiku on quiz (Inspect, scorer includes ' \
           'for claude-3-5-haiku, scorer match for gpt-4o-mini)"' in text
    assert '[harness]\nname = "Inspect"' in text and 'metric = "accuracy"' in text
    value = re.search(r"^value = \{claude-3-5-haiku = ([0-9.]+), gpt-4o-mini = ([0-9.]+)\}$", text, re.M)
    assert value and float(value[2]) == pytest.approx(inspect_accuracy(ALPHA))
    assert float(value[1]) == pytest.approx(inspect_accuracy(BETA))
    assert 'scorer = {claude-3-5-haiku = "includes", gpt-4o-mini = "match"}' in text
    assert "# and add: partial_credit = 0.5" in text  # the harness's rule, offered before building
    assert "total_time" in text and "scoring (grading)" in text


def test_the_page_shows_the_harness_number_and_rule_beside_the_headline(paired_site: tuple[Path, Path]) -> None:
    _, site = paired_site
    [page] = (site / "experiments").glob("*/index.html")
    html = page.read_text(encoding="utf-8")
    text = visible_text(html)
    expected = (f"Inspect reports accuracy {inspect_accuracy(BETA):.3g} for claude-3-5-haiku (scorer includes; C "
                "counts 1, P (partial credit) ½, I and N 0; samples that ended in an error are left out); this report "
                "counts partial credit (P) as a non-pass, as it does a technical failure: ")
    passes = BETA.count("C")
    assert f"{expected}{100 * passes / len(BETA):.1f}% ({passes}/{len(BETA)})" in text
    # The second service's line names its own scorer, and the rules once said.
    passes = ALPHA.count("C")
    assert (f"Inspect reports accuracy {inspect_accuracy(ALPHA):.3g} for gpt-4o-mini (scorer match); this report, by "
            f"the same rules: {100 * passes / len(ALPHA):.1f}% ({passes}/{len(ALPHA)})") in text
    # On the first screen: before the audit and the results.
    assert html.index('id="harness"') < html.index('id="audit"') and html.index('id="harness"') < html.index(
        'id="results"')
    assert "Latency (latency_ms) is Inspect's total_time of the sample: the model's calls and the scoring" in text


def test_an_imported_paired_page_does_not_claim_the_comparison_was_chosen_in_advance(
        paired_site: tuple[Path, Path]) -> None:
    _, site = paired_site
    for page in [*(site / "experiments").rglob("*.html"), site / "claims.html"]:
        assert CHOSEN_BEFORE not in page.read_text(encoding="utf-8"), page
    [page] = (site / "experiments").glob("*/index.html")
    assert CHOSEN_AFTER in unescape(page.read_text(encoding="utf-8"))
    results = json.loads((site / "data" / "results.json").read_text(encoding="utf-8"))
    assert not any(CHOSEN_BEFORE in a for c in results["claims"] for a in c.get("assumptions", []))


def test_first_line_of_a_response() -> None:
    def artifact(name: str, data: bytes) -> Artifact:
        return Artifact(name, sha256(data), data, artifact_kind(name))

    bundle = CallArtifacts("c", (artifact("messages.json", b'[{"role": "user"}]'), artifact("output.txt", b"\n  Yes,\tit is\nmore")))
    assert first_line(response_file(bundle)) == "Yes, it is"
    assert first_line(artifact("response.txt", b" \n\n")) == "empty response"
    assert first_line(None) == "no response"
    assert first_line(artifact("response.txt", b"x" * 200)) == "x" * 79 + "…"


DRAWING_WORDS = re.compile(r"drawing|render|cairosvg|\bpng\b|\bsvg\b|no output", re.I)


def test_a_text_run_never_speaks_of_drawings_and_lists_first_lines(paired_site: tuple[Path, Path]) -> None:
    _, site = paired_site
    pages = [p for p in site.parent.rglob("*.html")]
    assert len(pages) > 5
    for page in pages:
        found = DRAWING_WORDS.search(visible_text(page.read_text(encoding="utf-8")))
        assert found is None, f"{page.relative_to(site.parent)}: {found and found[0]!r}"
    [page] = (site / "experiments").glob("*/index.html")
    html = page.read_text(encoding="utf-8")
    assert '<span class="first-line">Answer C</span>' in html and '<span class="first-line">Answer P</span>' in html
    assert html.count('<span class="first-line">') == len(ALPHA) + len(BETA)
    sheets = [p.read_text(encoding="utf-8") for p in (site.parent / "store").glob("*.html")]
    assert sheets and all("No drawing was found" not in s for s in sheets)
    assert any("Answer P\nbecause 2" in unescape(s) for s in sheets)  # the response, shown as text


def test_partial_credit_reproduces_inspect_accuracy(tmp_path: Path) -> None:
    [log] = logs(tmp_path / "logs")[:1]
    src = tmp_path / "src"
    run_cli("import", "inspect", str(log), "--into", str(src))
    contract = src / "experiments" / "quiz" / "run.toml"
    text = contract.read_text(encoding="utf-8")
    assert 'primary_metric = "first_pass_rate"' in text
    contract.write_text(text.replace('primary_metric = "first_pass_rate"',
                                     'primary_metric = "score"\npartial_credit = 0.5'), encoding="utf-8")
    site = build(src, tmp_path / "site")
    claims = {c["id"]: c for c in json.loads((site / "data" / "results.json").read_text())["claims"]}
    mean = claims["quiz.gpt-4o-mini.mean_score"]
    assert mean["estimate"] == pytest.approx(inspect_accuracy(ALPHA), abs=1e-12)
    reported = json.loads(log.read_text())["results"]["scores"][0]["metrics"]["accuracy"]["value"]
    assert mean["estimate"] == pytest.approx(reported, abs=1e-12)
    text = visible_text((site / "experiments" / "quiz" / "index.html").read_text(encoding="utf-8"))
    assert "this report scores partial credit (P) as 0.5 (run.partial_credit), a pass as 1 and any other grade as " \
           "0; a call without a complete return is left out of the mean:" in text


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('[harness]\n', '[harness]\nextra = 1\n').replace('rule = ', 'old_rule = '),
     "harness.rule: required: a non-empty string"),
    (lambda t: t.replace("value = {gpt-4o-mini", "value = {nobody = 1.0, gpt-4o-mini"),
     "harness.value: 'nobody' is not a [[service]] id"),
    (lambda t: t.replace("value = {gpt-4o-mini = ", 'value = {gpt-4o-mini = "high", x = '),
     "harness.value: gpt-4o-mini: must be a finite number, got 'high'"),
    (lambda t: t.replace('primary_metric = "first_pass_rate"', 'primary_metric = "first_pass_rate"\npartial_credit = 0.5'),
     "run.partial_credit: needs primary_metric = \"score\""),
    (lambda t: t.replace('primary_metric = "first_pass_rate"', 'primary_metric = "score"\npartial_credit = 2'),
     "run.partial_credit: must be a number from 0 to 1"),
])
def test_the_contract_reader_checks_the_new_keys(tmp_path: Path, edit, message: str) -> None:
    [log] = logs(tmp_path / "logs")[:1]
    src = tmp_path / "src"
    run_cli("import", "inspect", str(log), "--into", str(src))
    contract = src / "experiments" / "quiz" / "run.toml"
    contract.write_text(edit(contract.read_text(encoding="utf-8")), encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(src)])
    assert result.exit_code == 1
    line = next(line for line in result.output.splitlines() if message in line)
    assert re.match(r"^\S*experiments/quiz/run\.toml:\d+: ", line), line


def test_pairing_errors_name_the_cause_and_the_flag(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    grades = write_json(folder / "g.json", inspect_log("acme/a", graded(ALPHA, "match")))
    numbers = write_json(folder / "n.json", inspect_log("acme/b", [sample(i, 0.5 * i) for i in range(1, 4)]))
    with pytest.raises(InputError, match=r"match is pass/fail \(acme/a\) and match a score \(acme/b\): they cannot "
                                         r"be compared; import each log apart \(--experiment NAME\)"):
        assemble(read_inspect([grades, numbers]))
    other = write_json(folder / "o.json", inspect_log("acme/b", graded(BETA, "match"), task="quiz-v2"))
    with pytest.raises(InputError, match=r"the logs hold 2 tasks \(quiz, quiz-v2\) and --experiment names one run: "
                                         r"import each task's logs apart, or add --same-task"):
        assemble(read_inspect([grades, other]), experiment="both")
    [run] = assemble(read_inspect([grades, other]), experiment="both", same_task=True)
    assert (run.id, run.design, [s.id for s in run.services]) == ("both", "paired", ["a", "b"])
    twice = write_json(folder / "t.json", inspect_log("acme/a", graded(BETA, "includes"), scorer="includes"))
    runs = assemble(read_inspect([grades, twice]))  # one model scored twice: a run per scorer
    assert sorted(r.id for r in runs) == ["quiz-includes", "quiz-match"]


def test_logs_of_one_model_with_different_solvers_are_two_services(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    plain = inspect_log("claude-3-7-sonnet-latest", graded(ALPHA, "match"))
    agent = inspect_log("claude-3-7-sonnet-latest", graded(BETA, "match"))
    agent["plan"]["steps"] = [{"solver": "btw_solver", "params": {}}]
    paths = [write_json(folder / "plain.json", plain), write_json(folder / "agent.json", agent)]
    [run] = assemble(read_inspect(paths))
    assert run.design == "paired"
    assert [s.id for s in run.services] == ["claude-3-7-sonnet-latest-btw_solver", "claude-3-7-sonnet-latest-generate"]
    assert any("claude-3-7-sonnet-latest-btw_solver ran claude-3-7-sonnet-latest with btw_solver" in n
               for n in run.notes)
    same = write_json(folder / "same.json", inspect_log("claude-3-7-sonnet-latest", graded(BETA, "match")))
    with pytest.raises(InputError, match=r"has 2 logs with the same solver \(scorers match, match\): a model is one "
                                         r"service of a run; import each log apart \(--experiment NAME\)"):
        assemble(read_inspect([paths[0], same]))


def test_a_percentage_accuracy_is_said_to_be_one(tmp_path: Path) -> None:
    raw = inspect_log("gpt-4o", graded(ALPHA, "match"))
    raw["results"]["scores"][0]["metrics"]["accuracy"]["value"] *= 100  # as R's vitals writes it
    [log] = read_inspect([write_json(tmp_path / "log.json", raw)])
    assert log.headline == "accuracy" and log.rule.endswith("the number is on a 0–100 scale (a percentage)")


def test_a_harness_number_that_is_not_finite_is_left_out_of_the_contract() -> None:
    from reportgen.importers.records import HarnessLog, Sample
    from reportgen.importers.write import contract_text

    samples = (Sample("1", 1, {"q": 1}, "ok", passed=True, started_at="2025-01-01T00:00:00+00:00"),)

    def log(value: float) -> HarnessLog:
        return HarnessLog("lm-eval", "0.4.9", "results.json", "task", "org/model", "acc", "pass",
                          "2025-01-01T00:00:00+00:00", samples, aggregate={"acc,none": value},
                          headline="acc,none", rule="the mean of acc over the documents it evaluated")

    [run] = assemble([log(0.5)])
    text = contract_text(run)
    assert '[harness]\nname = "lm-eval"' in text and 'metric = "acc"' in text and "value = {model = 0.5}" in text
    assert "scorer = " not in text  # lm-eval's metric is the harness's own name; Inspect names a scorer
    [run] = assemble([log(float("nan"))])
    assert "[harness]" not in contract_text(run)


def test_an_imported_leaderboard_does_not_claim_its_comparisons_were_chosen_in_advance(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    paths = [write_json(folder / f"{name}.json", inspect_log(f"acme/{name}", graded(values, "match")))
             for name, values in (("a", ALPHA), ("b", BETA), ("c", list(reversed(ALPHA))))]
    run_cli("import", "inspect", *map(str, paths), "--into", str(tmp_path / "src"))
    site = build(tmp_path / "src", tmp_path / "site")
    results = json.loads((site / "data" / "results.json").read_text(encoding="utf-8"))
    assumptions = [a for c in results["claims"] for a in c.get("assumptions", [])]
    assert CHOSEN_AFTER in assumptions and CHOSEN_BEFORE not in assumptions
    for page in [*(site / "experiments").rglob("*.html"), site / "claims.html"]:
        assert CHOSEN_BEFORE not in page.read_text(encoding="utf-8"), page

"""`reportgen grade` without its page: the items and the key, the sample stratified by
service, each grader's order, grades written durably, resume, and the refusals."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from grading_source import call_rows, pelican_source
from reportgen.cli import main
from reportgen.grading import GradingError, prepare, read_grades
from reportgen.grading import files as grade_files
from reportgen.grading.grades_file import HEADER
from reportgen.grading.items import draw_items, stratified_sample
from reportgen.grading.order import order_sha256
from reportgen.grading.experiment import load_experiment

EXP = "pelican-ab"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return pelican_source(tmp_path)


def grades_dir(source: Path) -> Path:
    return source / "experiments" / EXP / "grades"


def key_rows(source: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO((grades_dir(source) / "key.csv").read_text("utf-8"))))


def services_of(source: Path) -> dict[str, str]:
    return {row["call_id"]: row["service"] for row in call_rows(source)}


# ------------------------------------------------------------------ items and key


def test_every_call_with_an_output_becomes_an_item_with_an_opaque_id(source):
    session = prepare(source, EXP, "ann")
    rows = key_rows(source)
    assert rows[0] == ["item", "call_id"]
    ok_calls = [r["call_id"] for r in call_rows(source) if r["status"] == "ok"]
    assert sorted(call for _, call in rows[1:]) == sorted(ok_calls) and len(ok_calls) == 36
    for item, call_id in rows[1:]:
        assert len(item) == 12 and set(item) <= set("0123456789abcdef")
        assert call_id.lower() not in item
    assert [item for item, _ in rows[1:]] == sorted(item for item, _ in rows[1:])  # not in log order
    record = json.loads((grades_dir(source) / "sample.json").read_text("utf-8"))
    assert record["sample"] is None and record["items"] == 36 and isinstance(record["seed"], int)
    assert record["created_at"][-6] in "+-"  # an offset
    assert session.total == 36


def test_a_sample_is_stratified_by_service_seeded_and_reproducible(source, tmp_path):
    session = prepare(source, EXP, "ann", sample=20, seed=7)
    services = services_of(source)
    by_service = Counter(services[call] for call in session.items.key.values())
    assert by_service == {"A": 11, "B": 9}  # 20 of 36: 20 × 20/36 = 11.1 of A, 20 × 16/36 = 8.9 of B
    record = json.loads((grades_dir(source) / "sample.json").read_text("utf-8"))
    assert record == {**record, "seed": 7, "sample": 20, "stratified_by": "service", "items": 20}
    again = pelican_source(tmp_path / "again")
    assert prepare(again, EXP, "zoe", sample=20, seed=7).items.key == session.items.key
    other = pelican_source(tmp_path / "other")
    assert prepare(other, EXP, "ann", sample=20, seed=8).items.key != session.items.key


def test_stratified_sample_allocates_by_largest_remainder():
    import random
    from types import SimpleNamespace

    calls = [SimpleNamespace(service=s, call_id=f"{s}{i}") for s, n in (("x", 7), ("y", 2), ("z", 1))
             for i in range(n)]
    for seed in range(20):
        drawn = stratified_sample(calls, 5, random.Random(seed))  # type: ignore[arg-type]
        counts = Counter(c.service for c in drawn)
        assert counts == {"x": 4, "y": 1}  # exact 3.5, 1.0, 0.5: x's .5 ties z's and x comes first
        assert len({c.call_id for c in drawn}) == 5


def test_item_ids_do_not_depend_on_the_call_ids():
    from types import SimpleNamespace

    calls = [SimpleNamespace(service="s", call_id=f"c{i}") for i in range(10)]
    renamed = [SimpleNamespace(service="s", call_id=f"other-{i}") for i in range(10)]
    assert list(draw_items(calls, None, 3)) == list(draw_items(renamed, None, 3))  # type: ignore[arg-type]


def test_the_key_is_reused_by_every_later_grader(source):
    first = prepare(source, EXP, "ann", sample=12, seed=5)
    written = (grades_dir(source) / "key.csv").read_bytes()
    second = prepare(source, EXP, "bob")  # no --sample or --seed: the same items
    assert second.items.key == first.items.key and not second.items.created and first.items.created
    assert (grades_dir(source) / "key.csv").read_bytes() == written
    assert prepare(source, EXP, "cy", sample=12, seed=5).items.key == first.items.key  # the same values: fine


@pytest.mark.parametrize("given, field", [({"sample": 10}, "sample"), ({"seed": 6}, "seed"),
                                          ({"sample": 12, "seed": 6}, "seed"), ({"sample": 13, "seed": 5}, "sample")])
def test_a_conflicting_sample_or_seed_is_refused_in_one_line(source, given, field):
    prepare(source, EXP, "ann", sample=12, seed=5)
    with pytest.raises(GradingError) as caught:
        prepare(source, EXP, "bob", **given)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"experiments/{EXP}/grades/sample.json: {field}: the items were drawn with")


def test_each_grader_has_an_order_of_their_own_recorded(source):
    ann = prepare(source, EXP, "ann", sample=20, seed=1)
    bob = prepare(source, EXP, "bob")
    assert sorted(ann.order) == sorted(bob.order) == sorted(ann.items.key)
    assert ann.order != bob.order
    assert ann.order != list(ann.items.key)  # not key.csv's order either
    log_order = [r["call_id"] for r in call_rows(source)]
    shown = [ann.items.key[item] for item in ann.order]
    assert shown != sorted(shown, key=log_order.index)  # not the log's order
    record = json.loads((grades_dir(source) / "ann.order.json").read_text("utf-8"))
    assert record["grader"] == "ann" and record["order_sha256"] == order_sha256(ann.order)
    assert prepare(source, EXP, "ann").order == ann.order  # the same grader, the same order


def test_an_order_that_no_longer_matches_its_record_is_refused(source):
    prepare(source, EXP, "ann", sample=10, seed=1)
    path = grades_dir(source) / "ann.order.json"
    record = json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps({**record, "order_sha256": "0" * 64}), encoding="utf-8")
    with pytest.raises(GradingError, match="ann.order.json: order_sha256: does not match"):
        prepare(source, EXP, "ann")


# ------------------------------------------------------------------ grades, durably


def test_each_grade_is_on_disk_as_it_is_given_and_grading_resumes_there(source):
    session = prepare(source, EXP, "ann", sample=6, seed=2)
    first, second = session.order[:2]
    assert session.next_item() == first
    assert session.record(second, "pass", "") is None  # not the item waiting: nothing written
    assert not (grades_dir(source) / "ann.csv").exists()
    grade = session.record(first, "fail", 'wheels float, "no chain",\nnew line')
    assert grade is not None and grade.rule_version == "1" and grade.graded_at[-6] in "+-"
    assert session.record(first, "pass", "again") is None  # twice: refused, the first stands
    rows = list(csv.reader(io.StringIO((grades_dir(source) / "ann.csv").read_text("utf-8"))))
    assert rows == [list(HEADER), [first, "fail", 'wheels float, "no chain", new line', grade.graded_at, "1"]]
    restarted = prepare(source, EXP, "ann")  # a restarted command continues at the next item
    assert restarted.next_item() == second and restarted.n_graded == 1
    for item in restarted.order[1:]:
        assert restarted.record(item, "pass", "ok") is not None
    assert restarted.next_item() is None and prepare(source, EXP, "ann").next_item() is None


@pytest.mark.parametrize("step", ["write", "fsync", "replace"])
def test_a_kill_in_the_middle_of_writing_leaves_the_grades_file_valid(source, monkeypatch, step):
    session = prepare(source, EXP, "ann", sample=6, seed=2)
    session.record(session.order[0], "pass", "one")
    before = (grades_dir(source) / "ann.csv").read_bytes()

    class Killed(BaseException):
        pass

    def die(*args, **kwargs):
        raise Killed

    if step == "write":  # half the bytes written to the temporary file, then the end
        real_open = open

        def half_open(file, mode="r", *args, **kwargs):
            handle = real_open(file, mode, *args, **kwargs)
            if "w" in str(mode):
                real_write = handle.write
                handle.write = lambda data: (real_write(data[: len(data) // 2]), die())
            return handle

        monkeypatch.setattr("builtins.open", half_open)
    elif step == "fsync":
        monkeypatch.setattr(grade_files.os, "fsync", die)
    else:
        monkeypatch.setattr(grade_files, "replace", die)
    with pytest.raises(Killed):
        session.record(session.order[1], "fail", "two")
    monkeypatch.undo()
    assert (grades_dir(source) / "ann.csv").read_bytes() == before
    resumed = prepare(source, EXP, "ann")
    assert [g.item for g in resumed.grades.grades] == [session.order[0]]
    assert resumed.next_item() == session.order[1]
    assert resumed.record(session.order[1], "fail", "two") is not None


def test_a_temporary_file_left_by_a_kill_is_never_read_as_grades_and_is_removed(source):
    session = prepare(source, EXP, "ann", sample=6, seed=2)
    session.record(session.order[0], "pass", "")
    (grades_dir(source) / ".ann.csv.123.abcd.tmp").write_text("item,grade\nhalf", encoding="utf-8")
    (grades_dir(source) / ".bob.csv.123.abcd.tmp").write_text("item,grade\nhalf", encoding="utf-8")
    assert prepare(source, EXP, "ann").n_graded == 1
    assert [p.name for p in grade_files.leftover_temporaries(grades_dir(source))] == [".bob.csv.123.abcd.tmp"]


# ------------------------------------------------------------------ refusals


def grades_file_with(source: Path, *lines: str) -> None:
    prepare(source, EXP, "ann", sample=6, seed=2)
    (grades_dir(source) / "ann.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def first_items(source: Path) -> list[str]:
    return [row[0] for row in key_rows(source)[1:]]


@pytest.mark.parametrize("rows, where", [
    (["item,grade,reason"], "ann.csv:1: the header must be"),
    (["{h}", "zzzzzzzzzzzz,pass,,2026-10-02T10:15:03+07:00,1"], "ann.csv:2: item: 'zzzzzzzzzzzz' is not an item"),
    (["{h}", "{0},maybe,,2026-10-02T10:15:03+07:00,1"], "ann.csv:2: grade: 'maybe' is not one of pass, fail, disputed"),
    (["{h}", "{0},pass,,2026-10-02T10:15:03,1"], "ann.csv:2: graded_at: '2026-10-02T10:15:03' is not an ISO 8601"),
    (["{h}", "{0},pass,,2026-10-02T10:15:03+07:00,2"], "ann.csv:2: rule_version: '2', but the contract's"),
    (["{h}", "{0},pass,,2026-10-02T10:15:03+07:00,1", "{0},fail,,2026-10-02T10:16:03+07:00,1"],
     "ann.csv:3: item: {0} was graded already on line 2"),
    (["{h}", "{0},pass,2026-10-02T10:15:03+07:00,1"], "ann.csv:2: 4 fields; expected 5"),
])
def test_a_grades_file_that_does_not_parse_is_refused_in_one_line(source, rows, where):
    prepare(source, EXP, "ann", sample=6, seed=2)
    item = first_items(source)[0]
    grades_file_with(source, *(r.format(item, h=",".join(HEADER)) for r in rows))
    with pytest.raises(GradingError) as caught:
        prepare(source, EXP, "ann")
    assert str(caught.value).startswith(f"experiments/{EXP}/grades/" + where.format(item))
    assert "\n" not in str(caught.value)


def test_read_grades_reads_what_the_page_writes(source):
    session = prepare(source, EXP, "ann", sample=4, seed=3)
    for item, grade in zip(session.order, ("pass", "fail", "disputed", "pass")):
        session.record(item, grade, f"reason, with a comma for {grade}")
    versions = {item: "1" for item in session.items.key}
    read = read_grades(grades_dir(source) / "ann.csv", "ann.csv", versions)
    assert [(g.grade, g.reason) for g in read] == [(g, f"reason, with a comma for {g}")
                                                   for g in ("pass", "fail", "disputed", "pass")]


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["grade", *args, "--no-browser", "--port", "0"])
    return result.exit_code, result.output


@pytest.mark.parametrize("args, expected", [
    (["{src}", "nope", "--grader", "ann"], "error: {src}: experiment: no experiment 'nope' (experiments here: pelican-ab)"),
    (["{src}", EXP, "--grader", "a b"], "error: --grader: grader: 'a b' is not a grader name"),
    (["{src}", EXP, "--grader", "x" * 41], "error: --grader: grader: "),
    (["{src}", EXP, "--grader", "../ann"], "error: --grader: grader: '../ann' is not a grader name"),
    (["{src}", EXP, "--grader", "ann", "--sample", "99"], "error: --sample: sample: 99 items asked for, but 36"),
])
def test_the_command_refuses_bad_input_in_one_line(source, args, expected):
    code, output = run_cli(*(a.format(src=source) for a in args))
    assert code == 1
    assert output.strip().count("\n") == 0, output
    assert output.startswith(expected.format(src=source)), output
    assert not (grades_dir(source) / "key.csv").exists()


def test_the_command_refuses_an_experiment_without_calls_to_grade(source):
    log = source / "experiments" / EXP / "calls.csv"
    rows = call_rows(source)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "status": "timeout", "qualified": "", "artifact_path": "", "finish_reason": "",
                         "grade_reason": ""})
    log.write_text(buffer.getvalue(), encoding="utf-8")
    code, output = run_cli(str(source), EXP, "--grader", "ann")
    assert code == 1 and output.strip().count("\n") == 0
    assert output.startswith(f"error: experiments/{EXP}/calls.csv: status: no call returned an output to grade")


def test_the_command_refuses_a_rule_without_a_version(source):
    contract = source / "experiments" / EXP / "run.toml"
    contract.write_text(contract.read_text("utf-8").replace('grading_rule_version = "1"\n', ""), encoding="utf-8")
    code, output = run_cli(str(source), EXP, "--grader", "ann")
    assert code == 1 and output.strip().count("\n") == 0
    assert output.startswith(f"error: experiments/{EXP}/run.toml:43: grading_rule_version: not set"), output


def test_the_command_refuses_a_grades_file_that_does_not_parse(source):
    prepare(source, EXP, "ann", sample=6, seed=2)
    (grades_dir(source) / "ann.csv").write_text("item,grade\n", encoding="utf-8")
    code, output = run_cli(str(source), EXP, "--grader", "ann")
    assert code == 1
    assert output == f"error: experiments/{EXP}/grades/ann.csv:1: the header must be {','.join(HEADER)}\n"


def test_loading_does_not_write_into_the_experiment_before_grading(source):
    load_experiment(source, EXP)
    assert not grades_dir(source).exists()


def test_a_first_command_that_ended_between_key_and_sample_draws_again(source):
    prepare(source, EXP, "ann", sample=6, seed=2)
    (grades_dir(source) / "sample.json").unlink()
    (grades_dir(source) / "ann.order.json").unlink()
    again = prepare(source, EXP, "ann", sample=8, seed=3)
    assert again.items.created and again.total == 8


def test_two_commands_grading_as_one_grader_lose_no_grade(source):
    """Two sessions of one grader at once (two terminals): each grade is written over
    the grades on disk, under the grader's lock, never over a stale copy."""
    one = prepare(source, EXP, "ann", sample=6, seed=2)
    two = prepare(source, EXP, "ann")
    assert one.record(one.order[0], "pass", "") is not None
    assert two.record(two.order[0], "fail", "") is None  # graded by the other session already
    assert two.record(two.order[1], "fail", "") is not None
    assert one.record(one.order[2], "pass", "") is not None
    assert [g.item for g in prepare(source, EXP, "ann").grades.grades] == one.order[:3]


@pytest.mark.parametrize("no_browser", [False, True])
def test_the_command_opens_a_browser_unless_told_not_to(source, monkeypatch, no_browser):
    import webbrowser

    from reportgen.grading.server import GradingServer

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url) or True)

    def stop_at_once(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(GradingServer, "serve_forever", stop_at_once)
    args = ["grade", str(source), EXP, "--grader", "ann", "--port", "0", "--sample", "5", "--seed", "1"]
    result = CliRunner().invoke(main, args + (["--no-browser"] if no_browser else []))
    assert result.exit_code == 0, result.output
    url = result.stdout.splitlines()[0]
    assert url.startswith("http://127.0.0.1:") and url.endswith("/")
    assert opened == ([] if no_browser else [url])
    assert "drew 5 items (seed 1); 0 graded by ann" in result.output


def test_a_port_in_use_is_one_line(source):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["grade", str(source), EXP, "--grader", "ann", "--port", str(port),
                                           "--no-browser"])
    assert result.exit_code == 1
    assert result.output == f"error: cannot listen on 127.0.0.1:{port}: Address already in use; choose another --port\n"

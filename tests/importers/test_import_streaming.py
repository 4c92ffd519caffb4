"""Lazy Samples (records.Sample.payload): the writer loads each sample's request and
artifacts when it writes that sample, and writes the same bytes as for a held one."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest

from reportgen.importers.assemble import assemble
from reportgen.importers.lm_eval import read_lm_eval
from reportgen.importers.records import HarnessLog, Sample
from reportgen.importers.write import write_run
from test_import_lm_eval import lm_eval_run


def _held(log: HarnessLog) -> HarnessLog:
    """The log with every sample's request and artifacts held (the eager path)."""
    def held(sample: Sample) -> Sample:
        request, artifacts = sample.materialize()
        return dataclasses.replace(sample, request=request, artifacts=artifacts, payload=None)

    return dataclasses.replace(log, samples=tuple(held(s) for s in log.samples))


def _counted(log: HarnessLog, loads: list[str]) -> HarnessLog:
    def loader(sample: Sample):
        def load():
            loads.append(sample.unit)
            return sample.materialize()
        return load

    return dataclasses.replace(log, samples=tuple(dataclasses.replace(s, payload=loader(s)) for s in log.samples))


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_lazy_sample_writes_the_same_bytes_as_a_held_one(tmp_path: Path) -> None:
    logs = read_lm_eval([lm_eval_run(tmp_path / "run", {"acc": [1, 0, 1, 1]})])
    loads: list[str] = []
    assert all(s.payload is not None and s.request == {} and s.artifacts == () for log in logs for s in log.samples)
    [eager] = assemble([_held(log) for log in logs])
    [lazy] = assemble([_counted(log, loads) for log in logs])
    written_eager = _files(write_run(eager, tmp_path / "eager"))
    written_lazy = _files(write_run(lazy, tmp_path / "lazy"))
    assert written_lazy == written_eager
    assert sorted(loads) == sorted(c.sample.unit for c in lazy.calls)  # each loaded once, when written


def test_materialize_gives_the_held_fields_of_an_eager_sample() -> None:
    sample = Sample("1", 1, {"input": "x"}, "ok", passed=True, artifacts=(("output.txt", b"y"),))
    assert sample.materialize() == ({"input": "x"}, (("output.txt", b"y"),))


def test_a_large_lm_eval_samples_file_imports_in_bounded_memory(tmp_path: Path) -> None:
    import json
    import tracemalloc

    from reportgen.importers.stage import import_logs
    from test_import_lm_eval import STAMP

    n, filler = 4_000, "x" * 20_000  # ~80 MB of samples: each line carries a ~20 KB prompt
    folder = lm_eval_run(tmp_path / "run", {"acc": [i % 2 for i in range(3)]})
    samples = folder / f"samples_toy_{STAMP}.jsonl"
    results = json.loads((folder / f"results_{STAMP}.json").read_text(encoding="utf-8"))
    results["n-samples"]["toy"] = {"original": n, "effective": n}
    (folder / f"results_{STAMP}.json").write_text(json.dumps(results), encoding="utf-8")
    with samples.open("w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(json.dumps({"doc_id": i, "target": str(i), "arguments": {"gen_args_0": {
                "arg_0": f"{i} {filler}"}}, "filtered_resps": [f" {i}"], "filter": "none", "metrics": ["acc"],
                "acc": i % 2, "doc_hash": f"{i:064x}"}) + "\n")
    size = samples.stat().st_size
    tracemalloc.start()
    try:
        _, [imported] = import_logs("lm-eval", [folder], tmp_path / "src")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(imported.run.calls) == n
    assert peak < size * 0.25, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB samples file"
    print(f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB samples file")


def _traced_import(harness: str, paths: list[Path], into: Path):
    import tracemalloc

    from reportgen.importers.stage import import_logs

    tracemalloc.start()
    try:
        _, runs = import_logs(harness, paths, into)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return runs, peak


@pytest.mark.parametrize("writer", ["json", "eval"])
def test_a_large_inspect_log_imports_in_bounded_memory(tmp_path: Path, writer: str) -> None:
    """Each sample carries a ~40 KB transcript: the log is read one sample at a time, held
    in a spool, and written one sample at a time, so peak memory is a fraction of the log."""
    from test_import_inspect import inspect_log, sample, write_eval, write_json

    n, filler = 1_500, "y" * 20_000
    samples = []
    for i in range(n):
        one = sample(i + 1, "C" if i % 3 else "I", text=f"{i} {filler}")
        one["events"] = [{"event": "model", "output": filler}]  # dropped on reading
        samples.append(one)
    log = inspect_log("acme/alpha", samples)
    path = (write_json if writer == "json" else write_eval)(tmp_path / f"big.{writer}", log)
    size = sum(len(json.dumps(s)) for s in samples)
    [imported], peak = _traced_import("inspect", [path], tmp_path / "src")
    assert len(imported.run.calls) == n
    rows = list(csv.DictReader((imported.folder / "calls.csv").open(encoding="utf-8")))
    assert sum(r["qualified"] == "true" for r in rows) == sum(1 for i in range(n) if i % 3)
    output = imported.folder / rows[5]["artifact_path"] / "output.txt"
    assert output.read_text(encoding="utf-8") == f"5 {filler}"  # sample 6 is the sixth row
    assert peak < size * 0.25, f"peak {peak / 1e6:.1f} MB for {size / 1e6:.1f} MB of samples"
    print(f"peak {peak / 1e6:.1f} MB for {size / 1e6:.1f} MB of samples ({writer})")


def test_a_large_helm_run_imports_in_bounded_memory(tmp_path: Path) -> None:
    """scenario_state.json streamed: each request state read once, spooled, written once."""
    from test_import_helm import state, write_helm

    n, filler = 1_500, "z" * 40_000
    states = []
    for i in range(n):
        one = state(f"id{i}", f" {i}")
        one["request"]["prompt"] = f"{i} {filler}"
        states.append(one)
    folder = write_helm(tmp_path / "run", states, {(f"id{i}", 0): {"exact_match": float(i % 2)} for i in range(n)},
                        {"exact_match/test": 0.5})
    size = (folder / "scenario_state.json").stat().st_size
    [imported], peak = _traced_import("helm", [folder], tmp_path / "src")
    assert len(imported.run.calls) == n
    rows = list(csv.DictReader((imported.folder / "calls.csv").open(encoding="utf-8")))
    assert sum(r["qualified"] == "true" for r in rows) == n // 2
    request = json.loads((imported.folder / "requests" / f"{rows[7]['request_hash'][7:]}.json").read_text())
    assert request["prompt"] == f"{rows[7]['instance_id'][2:]} {filler}"
    assert peak < size * 0.25, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB scenario_state.json"
    print(f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB scenario_state.json")


def test_writing_an_import_reports_progress_per_call(tmp_path: Path) -> None:
    from reportgen.progress import QuietProgress
    from reportgen.importers.stage import import_logs

    events: list[tuple[str, object]] = []

    class Recorder(QuietProgress):
        def stage(self, message: str) -> None:
            events.append(("stage", message))

        def bar(self, label: str, total: int):
            events.append(("bar", (label, total)))

            class Bar:
                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    pass

                def update(self, n: int = 1) -> None:
                    events.append(("update", n))
            return Bar()

    _, [imported] = import_logs("lm-eval", [lm_eval_run(tmp_path / "run", {"acc": [1, 0, 1]})], tmp_path / "src",
                                progress=Recorder())
    assert ("stage", "read 1 log holding 3 samples") in events
    assert ("bar", (f"writing {imported.run.id}", 3)) in events
    assert sum(n for kind, n in events if kind == "update") == 3

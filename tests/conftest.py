"""Shared fixtures: the demo source, a small source factory and a CLI runner."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from reportgen.cli import main
from sitecheck import manifest_problems

# Test files are grouped by the stage they test (tests/load/, tests/analysis/, ...); the
# shared helpers stay here, and some test files import helpers from one another by module
# name, so this folder and every group folder are importable whatever is collected first.
TESTS = Path(__file__).resolve().parent
GROUPS = ("load", "audit", "analysis", "stats", "claims", "render", "write", "pipeline", "published",
          "importers", "plan", "grading")
for _folder in (TESTS, *(TESTS / g for g in GROUPS)):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "content"

REQUEST = {"model": "m-1", "messages": [{"role": "user", "content": "Draw a pelican riding a bicycle as SVG"}]}
SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 30" width="40" height="30">'
       '<circle cx="20" cy="15" r="9" fill="#f5b041"/></svg>\n')


def svg_for(call_id: str) -> str:
    """Each call draws its own picture: identical outputs are an audit finding."""
    return SVG.replace("</svg>", f"<desc>{call_id}</desc></svg>")

CONTRACT = """\
[run]
id = "mini"
title = "Mini run"
question = "Do X and Y differ in first-submission pass rate?"
phase = "formal"
registered_at = "2026-10-01T08:00:00+00:00"
design = "independent"
primary_metric = "first_pass_rate"
baseline = "X"
candidates = ["Y"]
alpha = 0.05
planned_calls = 4
blocks = ["1", "2"]
concurrency = 1

[task]
id = "t"
prompt = "Draw a pelican riding a bicycle as SVG"
render_viewport = "40x30"

[[service]]
id = "X"
group = "direct"
requested_model = "m-1"

[[service]]
id = "Y"
group = "relay"
requested_model = "m-1"
"""

COLUMNS = ["run_id", "block_id", "service", "service_group", "requested_model", "returned_model",
           "started_at", "request_hash", "status", "finish_reason", "latency_ms", "qualified",
           "failure_reason", "artifact_path", "call_id", "grade_reason"]


def request_hash(body: dict) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


def default_rows() -> list[dict[str, str]]:
    """X passes 3 of 4, Y passes 1 of 4 with one timeout; every complete call drew an SVG."""
    plan = {"X": ["P", "P", "F", "P"], "Y": ["P", "T", "F", "F"]}
    rows = []
    for service, outcomes in plan.items():
        for i, outcome in enumerate(outcomes, 1):
            call_id = f"{service}-{i}"
            row = {
                "run_id": "mini", "block_id": "1" if i <= 2 else "2", "service": service,
                "service_group": "direct" if service == "X" else "relay",
                "requested_model": "m-1", "returned_model": "m-1",
                "started_at": f"2026-10-01T09:{i:02d}:{0 if service == 'X' else 30:02d}+00:00",
                "request_hash": request_hash(REQUEST), "status": "ok", "finish_reason": "stop",
                "latency_ms": str(1000 * i), "qualified": "true" if outcome == "P" else "false",
                "failure_reason": "", "artifact_path": f"artifacts/{call_id}", "call_id": call_id,
                "grade_reason": "ok" if outcome == "P" else "wrong",
            }
            if outcome == "T":
                row.update(status="timeout", finish_reason="", qualified="", latency_ms="20000",
                           artifact_path="", failure_reason="timeout")
            rows.append(row)
    return rows


class SourceFactory:
    """Writes a small, valid source folder; tests then break exactly one thing."""

    def __init__(self, root: Path):
        self.root = root

    def __call__(self, rows: list[dict[str, str]] | None = None, contract: str = CONTRACT,
                 site: str | None = None, log_text: str | None = None, log_name: str = "calls.csv") -> Path:
        source = self.root / "source"
        if source.exists():
            shutil.rmtree(source)
        exp = source / "experiments" / "mini"
        (exp / "requests").mkdir(parents=True)
        (source / "reportgen.toml").write_text(site or 'title = "Mini report"\nversion = "v1"\n', encoding="utf-8")
        (exp / "run.toml").write_text(contract, encoding="utf-8")
        (exp / "requests" / f"{request_hash(REQUEST)[7:]}.json").write_text(json.dumps(REQUEST), encoding="utf-8")
        rows = default_rows() if rows is None else rows
        for row in rows:
            if row.get("artifact_path", "").startswith("artifacts/"):
                folder = exp / row["artifact_path"]
                folder.mkdir(parents=True, exist_ok=True)
                svg = svg_for(row["call_id"])
                (folder / "response.txt").write_text(f"Here you go:\n```svg\n{svg}```\n", encoding="utf-8")
                (folder / "image.svg").write_text(svg, encoding="utf-8")
        if log_text is None:
            if log_name.endswith(".jsonl"):
                log_text = "".join(json.dumps(r) + "\n" for r in rows)
            else:
                columns = list(rows[0]) if rows else COLUMNS
                path = exp / log_name
                with path.open("w", newline="", encoding="utf-8") as handle:
                    writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
                    writer.writeheader()
                    writer.writerows(rows)
                return source
        (exp / log_name).write_text(log_text, encoding="utf-8")
        return source


@pytest.fixture(autouse=True)
def render_cache(tmp_path: Path, monkeypatch) -> Path:
    """Each test keeps its renders in its own folder, never in the user's cache."""
    folder = tmp_path / "render-cache"
    monkeypatch.setenv("REPORTGEN_CACHE", str(folder))
    return folder


@pytest.fixture
def make_source(tmp_path: Path) -> SourceFactory:
    return SourceFactory(tmp_path)


@pytest.fixture
def demo_source(tmp_path: Path) -> Path:
    target = tmp_path / "content"
    shutil.copytree(DEMO, target)
    return target


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory) -> Iterator[Path]:
    """The demo built once per session: returns the site folder (site/v1/, versions.json, ...).

    Shared by every test that asks for it, so it is read-only: a test that changes a
    built site takes its own copy (``built_demo_copy``). At the end of the session the
    version is checked against its manifest, so a test that wrote into it shows up.
    """
    root = tmp_path_factory.mktemp("demo")
    # Session fixtures are set up before the autouse render_cache of the first test:
    # give this build its own cache too, never the user's.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REPORTGEN_CACHE", str(root / "render-cache"))
        result = CliRunner().invoke(main, ["build", str(DEMO), "--out", str(root / "site"), "-q"])
    assert result.exit_code == 0, result.output
    yield root / "site"
    changed = manifest_problems(root / "site" / "v1")
    assert not changed, ("a test changed the shared demo site; use built_demo_copy instead: "
                         + "; ".join(changed[:10]))


@pytest.fixture(scope="session")
def demo_site(demo_build: Path) -> Path:
    """The demo built once, for read-only checks: returns site/v1."""
    return demo_build / "v1"


@pytest.fixture
def built_demo_copy(demo_build: Path, tmp_path: Path) -> Path:
    """A private copy of the session's built demo, for tests that change it: returns
    tmp_path/site/v1 (the whole site folder is copied, versions.json and all)."""
    out = tmp_path / "site"
    shutil.copytree(demo_build, out, symlinks=True)
    return out / "v1"


@pytest.fixture
def run_cli():
    def run(*args: str):
        return CliRunner().invoke(main, [str(a) for a in args])
    return run


# Tests that take over about 3 s each on two cores (whole builds, races, streaming imports,
# long property runs): marked slow, so the README's test command stays a maintainer's loop
# of about three minutes; .ci/run runs them with `-m slow`. A test file may also mark its
# own tests with @pytest.mark.slow. Named by file and test, whichever group folder the file is in.
SLOW_TESTS = frozenset({
    "test_build_failures.py::test_a_render_pool_that_cannot_start_fails_the_build",
    "test_cache_trust.py::test_an_edited_render_note_is_not_published",
    "test_cache_trust.py::test_an_entry_added_to_the_clean_list_does_not_let_a_key_through",
    "test_cache_trust.py::test_each_damaged_cache_file_kind_gives_the_clean_build",
    "test_cli.py::test_published_version_is_immutable_unless_forced",
    "test_cli.py::test_render_cache_is_used_and_invalidated",
    "test_content.py::test_charts_drawn_in_a_worker_are_the_charts_drawn_here",
    "test_contents.py::test_a_known_clean_content_is_not_scanned_again",
    "test_contract_blocks.py::test_a_count_takes_the_block_ids_of_the_log",
    "test_designs.py::test_a_registered_slice_with_no_calls_and_a_single_window_build_cleanly",
    "test_designs.py::test_new_design_pages_have_no_broken_links_or_nan",
    "test_diff_hashes.py::test_a_call_that_sent_another_request_shows_both_hashes",
    "test_diff_hashes.py::test_a_changed_call_shows_its_request_hash",
    "test_diff_hashes.py::test_added_and_changed_calls_read_alike",
    "test_diff_review.py::test_block_ids_with_a_slash_link_to_their_claims",
    "test_diff_review.py::test_decisions_come_first_formatted_and_counted_as_the_cli_counts",
    "test_diff_review.py::test_diff_html_written_elsewhere_has_live_links",
    "test_edge_readings.py::test_any_block_id_makes_a_valid_unique_anchor",
    "test_forked_steps.py::test_a_run_audited_apart_gives_the_site_the_build_gives",
    "test_forked_steps.py::test_the_changes_page_and_the_source_record_made_apart_are_those_the_build_makes",
    "test_hostile.py::test_redacted_copy_is_published_recorded_and_verifiable",
    "test_identical_outputs.py::test_a_built_site_with_one_drawing_verifies",
    "test_import_streaming.py::test_a_large_helm_run_imports_in_bounded_memory",
    "test_import_streaming.py::test_a_large_inspect_log_imports_in_bounded_memory",
    "test_import_streaming.py::test_a_large_lm_eval_samples_file_imports_in_bounded_memory",
    "test_leaderboard.py::test_leaderboard_site",
    "test_navigation.py::test_every_link_to_a_claim_lands_on_it",
    "test_navigation.py::test_the_site_index_links_every_page_of_changes",
    "test_parquet.py::test_parquet_and_csv_give_the_same_claims",
    "test_property_builds.py::test_generated_sources_build_to_sites_that_keep_their_invariants",
    "test_rebuild.py::test_a_changed_source_is_built_again_and_equals_a_cold_build",
    "test_rebuild.py::test_a_file_of_the_version_touched_since_makes_a_full_build",
    "test_rebuild.py::test_a_rebuild_of_the_same_inputs_writes_nothing",
    "test_rebuild.py::test_an_up_to_date_build_does_not_import_the_chart_libraries",
    "test_rebuild.py::test_another_theme_is_built_again",
    "test_rebuild.py::test_label_redact_and_renders_are_inputs",
    "test_rebuild.py::test_without_a_cache_nothing_is_remembered",
    "test_render_isolation.py::test_a_render_stuck_past_the_hard_limit_ends_its_worker",
    "test_site.py::test_build_is_deterministic",
    "test_site.py::test_every_claim_has_an_anchor_and_every_evidence_call_a_page",
    "test_site.py::test_links_resolve",
    "test_site_index.py::test_a_damaged_versions_json_is_rebuilt_from_the_version_folders",
    "test_site_index.py::test_a_sound_versions_json_gives_no_warning",
    "test_site_index.py::test_a_version_missing_from_versions_json_is_added_back",
    "test_site_lock.py::test_a_build_never_removes_the_folder_another_build_is_writing",
    "test_site_lock.py::test_a_build_waits_for_the_one_that_holds_the_site_and_says_for_whom",
    "test_site_lock.py::test_the_same_label_from_two_sources_at_once_refuses_the_second",
    "test_site_lock.py::test_two_builds_of_one_label_at_once_leave_a_whole_version",
    "test_store.py::test_a_corrected_grade_writes_one_sheet_and_changes_the_pages_that_cite_it",
    "test_store.py::test_a_published_version_is_untouched_by_the_next",
    "test_store.py::test_a_second_build_writes_no_sheet_and_mends_a_missing_one",
    "test_store.py::test_a_store_file_of_the_wrong_size_is_mended",
    "test_store.py::test_the_page_of_changes_is_what_diff_prints",
    "test_store_damage.py::test_a_damaged_store_file_is_replaced_by_the_next_build",
    "test_store_damage.py::test_force_repairs_what_verify_names",
    "test_version_labels.py::test_a_version_with_an_unreadable_time_is_never_the_latest",
    "test_version_labels.py::test_the_latest_version_is_the_one_built_last_whatever_its_utc_offset",
    "test_version_labels.py::test_the_version_given_to_the_build_is_the_version_checked_and_written",
    "test_versions.py::test_a_killed_build_leaves_no_half_written_version",
    "test_versions.py::test_diff_finds_the_changed_call_whatever_the_log_looks_like",
    "test_versions.py::test_diff_golden",
    "test_versions.py::test_diff_lists_exactly_the_artifacts_whose_content_changed",
    "test_versions.py::test_diff_of_identical_versions",
    "test_versions.py::test_newer_version_banner_and_versions_json",
    "test_versions.py::test_verdict_flips_come_first",
})


@pytest.hookimpl(tryfirst=True)  # before -m reads the markers
def pytest_collection_modifyitems(config, items):
    for item in items:
        name = item.nodeid.split("[")[0].rsplit("/", 1)[-1]  # tests/<group>/test_x.py::test_y -> test_x.py::test_y
        if name in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)

"""``--debug`` works where the crash hint sends people: before the command name, and
after it (``reportgen build --debug``), on every command."""

from __future__ import annotations

import pytest

import reportgen.audit.stage
import reportgen.pipeline.stages
from reportgen.cli import main

HINT = "(run with --debug for the traceback; please report it)"


@pytest.fixture
def crashing_build(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(reportgen.pipeline.stages, "render_version", boom)


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_accepts_debug_after_its_name(run_cli, command):
    result = run_cli(command, "--debug", "--help")
    assert result.exit_code == 0, result.output
    assert "--debug" in result.output and "Show tracebacks for errors." in result.output


def test_the_crash_hint_without_debug(make_source, run_cli, tmp_path, crashing_build):
    result = run_cli("build", make_source(), "--out", tmp_path / "site", "-q")
    assert result.exit_code == 1
    assert f"internal error: RuntimeError: disk on fire {HINT}" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("where", ["before", "after"])
def test_build_debug_shows_the_traceback(make_source, run_cli, tmp_path, crashing_build, where):
    args = ["build", str(make_source()), "--out", str(tmp_path / "site"), "-q"]
    result = run_cli(*(["--debug", *args] if where == "before" else [*args, "--debug"]))
    assert result.exit_code == 1
    assert "Traceback (most recent call last)" in result.output
    assert 'raise RuntimeError("disk on fire")' in result.output
    assert "internal error: RuntimeError: disk on fire" in result.output
    assert not (tmp_path / "site" / "v1").exists()


def test_check_debug_after_the_command(make_source, run_cli, monkeypatch):
    def boom(*args, **kwargs):
        raise ValueError("bad state")

    monkeypatch.setattr(reportgen.audit.stage, "audit_run", boom)
    source = make_source()
    assert "Traceback" not in run_cli("check", source).output
    result = run_cli("check", source, "--debug")
    assert result.exit_code == 1
    assert "Traceback (most recent call last)" in result.output
    assert "internal error: ValueError: bad state" in result.output


def test_debug_after_the_command_changes_nothing_else(make_source, run_cli, tmp_path):
    result = run_cli("build", make_source(), "--out", tmp_path / "site", "--debug", "-q")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "site" / "v1" / "index.html").is_file()

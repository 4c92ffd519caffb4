"""Publishing limits: a published file over GitHub's 100 MB limit is a build warning
naming the call it comes from."""

from __future__ import annotations

import pytest

from reportgen.published.verify import verify_version
from reportgen.write import version


def test_a_file_over_the_limit_is_a_warning_naming_its_call(make_source, tmp_path, run_cli, monkeypatch):
    source = make_source()
    response = source / "experiments" / "mini" / "artifacts" / "Y-3" / "response.txt"
    response.write_text(response.read_text() + "a long answer " * 200)
    monkeypatch.setattr(version, "LARGE_FILE_BYTES", 2000)  # the limit, scaled down with the file
    out = tmp_path / "site"
    result = run_cli("build", source, "--out", out)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if "GitHub refuses files over 100 MB" in line]
    assert any("mini/Y-3" in line for line in warnings), result.output
    assert verify_version(out / "v1").ok


@pytest.mark.slow
def test_a_response_over_100_mb_is_a_warning(make_source, tmp_path, run_cli):
    source = make_source()
    response = source / "experiments" / "mini" / "artifacts" / "X-3" / "response.txt"
    with response.open("a") as handle:
        handle.write(("no key here, only words " * 43_000 + "\n") * 101)
    out = tmp_path / "site"
    result = run_cli("build", source, "--out", out)
    assert result.exit_code == 0, result.output
    assert any("mini/X-3" in line and "GitHub refuses" in line for line in result.output.splitlines())
    assert verify_version(out / "v1").ok

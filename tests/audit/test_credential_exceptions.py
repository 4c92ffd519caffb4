"""A reviewed exception to the credential scan: ``[audit] not_credentials`` in
reportgen.toml names texts that look like credentials and are not (a placeholder in a
task's prompt); they are published as written and the decision is stated on the audit.
Exact strings only: anything else that looks like a credential still stops the build."""

from __future__ import annotations

import pytest

from conftest import default_rows
from reportgen.audit.credentials import with_article
from reportgen.audit.stage import audit_source, audit_with_artifacts
from reportgen.load.artifacts import collect_artifacts
from reportgen.load.source import load_source
from sitecheck import text

PLACEHOLDER = "my_secret_api_key"
PROMPT = f'Sys.setenv(OPENAI_API_KEY = "{PLACEHOLDER}")'
SITE = f'title = "Mini report"\nversion = "v1"\n\n[audit]\nnot_credentials = ["{PLACEHOLDER}"]\n'
REAL = "sk-proj-" + "b" * 40
CSV_PROMPT = PROMPT.replace('"', '""')  # as the CSV log quotes it


def with_note(note: str) -> list[dict[str, str]]:
    rows = default_rows()
    rows[1]["grade_reason"] = note  # X-2, line 3 of the log
    return rows


def credentials(source) -> list:
    return [f for a in audit_source(load_source(source)) for f in a.findings if f.code == "credential"]


def test_the_placeholder_alone_is_refused_without_the_declaration(make_source, run_cli, tmp_path):
    source = make_source(with_note(PROMPT))
    (found,) = credentials(source)
    assert found.message.startswith("looks like an API key field: remove it")
    result = run_cli("build", source, "--out", tmp_path / "site")
    assert result.exit_code == 1 and not (tmp_path / "site").exists()


def test_a_declared_text_is_published_as_written(make_source, run_cli, tmp_path):
    source = make_source(with_note(PROMPT), site=SITE)
    assert credentials(source) == []
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    version = tmp_path / "site/v1"
    assert CSV_PROMPT in text(version / "data/mini/calls.csv")  # exactly as written, not redacted
    experiment = text(version / "experiments/mini/index.html")
    audit = experiment[experiment.index('<section id="audit">'):]
    assert ("Reviewed: 1 string declared not a credential in reportgen.toml (<code>[audit] not_credentials</code>), "
            f"published as written: <code>{PLACEHOLDER}</code>.") in audit
    assert run_cli("verify", version).exit_code == 0


@pytest.mark.parametrize("note", [
    f"{PROMPT}; debug api_key: {REAL}",  # a real-looking key on the same line
    f'OPENAI_API_KEY = "{PLACEHOLDER}2"',  # not the declared text: exact strings only
    f'OPENAI_API_KEY = "x{PLACEHOLDER}"',
])
def test_anything_else_is_still_refused(make_source, run_cli, tmp_path, note):
    source = make_source(with_note(note), site=SITE)
    (found,) = credentials(source)
    assert (found.file, found.line) == ("experiments/mini/calls.csv", 3)
    result = run_cli("build", source, "--out", tmp_path / "site")
    assert result.exit_code == 1 and not (tmp_path / "site").exists()
    assert REAL not in result.output


def test_redact_keeps_the_declared_text_and_replaces_the_key(make_source, run_cli, tmp_path):
    rows = with_note(PROMPT)
    rows[2]["grade_reason"] = f"debug api_key: {REAL}"
    source = make_source(rows, site=SITE)
    assert run_cli("build", source, "--out", tmp_path / "site", "-q", "--redact").exit_code == 0
    log = text(tmp_path / "site/v1/data/mini/calls.csv")
    assert CSV_PROMPT in log and REAL not in log and "[REDACTED" in log


@pytest.mark.parametrize("audit,field,message", [
    ('not_credentials = ["ok", 3]', "audit.not_credentials[1]", "must be a non-empty string"),
    ('not_credentials = [""]', "audit.not_credentials[0]", "must be a non-empty string"),
    ('not_credentials = "my_secret_api_key"', "audit.not_credentials", "must be a list of strings"),
    ('not_credential = ["x"]', "audit.not_credential", "unknown key; [audit] takes not_credentials"),
])
def test_the_table_is_checked(make_source, run_cli, audit, field, message):
    source = make_source(site=f'title = "Mini report"\nversion = "v1"\n\n[audit]\n{audit}\n')
    result = run_cli("build", source, "--out", source.parent / "site")
    assert result.exit_code == 1 and "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if field + ":" in line]
    assert line.startswith(f"error: reportgen.toml:5: {field}: {message}")


def test_audit_must_be_a_table(make_source, run_cli):
    source = make_source(site='title = "Mini report"\nversion = "v1"\naudit = 1\n')
    result = run_cli("build", source, "--out", source.parent / "site")
    assert result.exit_code == 1 and "reportgen.toml:3: audit: must be a table" in result.output


@pytest.mark.parametrize("kind,expected", [
    ("API key field", "an API key field"), ("AWS access key id", "an AWS access key id"),
    ("OpenAI-style API key", "an OpenAI-style API key"), ("Anthropic API key", "an Anthropic API key"),
    ("GitHub token", "a GitHub token"), ("bearer token", "a bearer token"), ("private key", "a private key"),
    ("Hugging Face token", "a Hugging Face token"), ("SSH key", "an SSH key"),
])
def test_the_article_is_chosen_by_the_word(kind, expected):
    assert with_article(kind) == expected


def test_a_content_passed_by_the_declaration_is_not_remembered_as_clean(make_source):
    """Contents found clean are not scanned again by later builds; one that passed only
    because of the declaration is scanned again, so removing the declaration refuses it."""
    source = make_source(site=SITE)
    response = source / "experiments/mini/artifacts/X-1/response.txt"
    response.write_text(response.read_text() + PROMPT + "\n")
    validated = load_source(source)
    run = validated.runs[0]
    clean: set[str] = set()
    first = audit_with_artifacts(run, collect_artifacts(run), clean, validated.config.not_credentials)
    assert not [f for f in first.findings if f.code == "credential"]
    placeholder = next(a.sha256 for a in first.artifacts["X-1"].files if a.name == "response.txt")
    assert placeholder not in clean and len(clean) > 1
    again = audit_with_artifacts(run, collect_artifacts(run), clean)
    (found,) = [f for f in again.findings if f.code == "credential"]
    assert found.file == "experiments/mini/artifacts/X-1/response.txt"

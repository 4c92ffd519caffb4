"""Two published versions -> what changed: contract, calls, artifacts, claims.

Verdict flips come first: they are what a reviewer must not miss.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any

from reportgen.errors import Collector
from reportgen.load.calllog import find_log, with_rows
from reportgen.load.contract import load_contract
from reportgen.load.source import load_contract_and_log, parse_rows
from reportgen.model.calls import Call
from reportgen.model.config import RunContract
from reportgen.model.outcomes import OUTCOME_LABELS
from reportgen.model.source import RawLog, RawRow, ValidatedSource
from reportgen.published.compare import compare_claim
from reportgen.published.log_records import Log, differing, parsed, record_bytes, record_stream, same_bytes
from reportgen.published.read import PublishedError, PublishedVersion, load_embedded_source, read_version, sheet_calls

CALL_FIELDS = [f.name for f in fields(Call) if f.name not in ("call_id", "line", "started_at", "extra")]


@dataclass(frozen=True)
class CallLabel:
    """A call as a diff names it: its run, its id, and the request it sent ("old -> new"
    when that changed; empty for an artifact's change). ``str``: ``run/call_id (hash)``."""

    run: str
    call_id: str
    request_hash: str = ""

    @property
    def call(self) -> str:
        return f"{self.run}/{self.call_id}"

    def __str__(self) -> str:
        return f"{self.call} ({self.request_hash})" if self.request_hash else self.call


@dataclass(frozen=True)
class Change:
    where: str  # e.g. "pelican-ab/run.toml", "pelican-ab/B-02 (sha256:...)" (a call), claim id
    field: str
    old: Any
    new: Any
    call: CallLabel | None = None  # the call it is a change of, when it is one (``where`` is its label)


@dataclass(frozen=True)
class DecisionCounts:
    """The pre-registered decisions both versions hold: flipped, read on a changed
    interval with the same verdict, or unchanged (the first thing a reviewer asks)."""

    flipped: tuple[str, ...]  # claim ids
    moved: tuple[str, ...]
    unchanged: int


@dataclass(frozen=True)
class VersionDiff:
    old: str
    new: str
    verdict_flips: tuple[Change, ...]
    contract: tuple[Change, ...]
    calls_added: tuple[CallLabel, ...]  # shown as "run/call_id (request hash)"
    calls_removed: tuple[CallLabel, ...]
    calls_changed: tuple[Change, ...]  # where: "run/call_id (request hash)", as added and removed calls
    artifacts_changed: tuple[Change, ...]
    claims_added: tuple[str, ...]
    claims_removed: tuple[str, ...]
    claims_changed: tuple[Change, ...]
    decisions: DecisionCounts = DecisionCounts((), (), 0)
    # Both versions' published records of every claim named above, for pages that show
    # them as the report does: claim id -> (old record or None, new record or None).
    records: Mapping[str, tuple[dict[str, Any] | None, dict[str, Any] | None]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not any((self.verdict_flips, self.contract, self.calls_added, self.calls_removed,
                        self.calls_changed, self.artifacts_changed, self.claims_added,
                        self.claims_removed, self.claims_changed))


def diff_versions(old_folder: Path, new_folder: Path, new_source: ValidatedSource | None = None) -> VersionDiff:
    """``new_source``: the inputs ``new_folder`` was just built from, when the build
    publishes them as they are (no --redact), so they need not be read back."""
    old, new = read_version(old_folder, evidence=False), read_version(new_folder, evidence=False)
    old_runs = _published_runs(old)
    new_runs = ({r.contract.id: _Side(r.contract, r.log.data, r.log.name, r.log.file, partial(_held, r.contract, r.log))
                 for r in new_source.runs} if new_source is not None else _published_runs(new))
    contract: list[Change] = []
    added: list[CallLabel] = []
    removed: list[CallLabel] = []
    changed: list[Change] = []
    for rid in sorted(set(old_runs) | set(new_runs)):
        a, b = old_runs.get(rid), new_runs.get(rid)
        old_toml = _flatten(a.contract.raw) if a else {}
        new_toml = _flatten(b.contract.raw) if b else {}
        contract += [Change(f"{rid}/run.toml", k, old_toml.get(k), new_toml.get(k))
                     for k in sorted(set(old_toml) | set(new_toml)) if old_toml.get(k) != new_toml.get(k)]
        old_calls, new_calls = _differing_calls(a, b)
        added += [_call_label(rid, new_calls[i]) for i in sorted(set(new_calls) - set(old_calls))]
        removed += [_call_label(rid, old_calls[i]) for i in sorted(set(old_calls) - set(new_calls))]
        for call_id in sorted(set(old_calls) & set(new_calls)):
            a_call, b_call = old_calls[call_id], new_calls[call_id]
            changed += _call_changes(_call_label(rid, a_call, b_call), a_call, b_call)
    changed += _graded_changes(old, new, new_source)
    artifacts = _artifact_changes(old, new)
    old_claims, new_claims = old.claims, new.claims
    claim_changes: list[Change] = []
    flips: list[Change] = []
    moved: list[str] = []
    unchanged = 0
    for cid in sorted(set(old_claims) & set(new_claims)):
        names = []
        for name, a_value, b_value in compare_claim(old_claims[cid], new_claims[cid]):
            if name in ("evidence", "statement"):
                continue  # follows from the call changes listed above
            change = Change(cid, name, a_value, b_value)
            (flips if name == "verdict" else claim_changes).append(change)
            names.append(name)
        if new_claims[cid].get("kind") == "decision" and "verdict" not in names:
            if any(n.startswith("interval.") for n in names):
                moved.append(cid)
            else:
                unchanged += 1
    added_claims = tuple(sorted(set(new_claims) - set(old_claims)))
    removed_claims = tuple(sorted(set(old_claims) - set(new_claims)))
    named = {c.where for c in (*flips, *claim_changes)} | set(added_claims) | set(removed_claims)
    return VersionDiff(
        old.label, new.label, tuple(flips), tuple(contract), tuple(added), tuple(removed),
        tuple(changed), tuple(artifacts), added_claims, removed_claims, tuple(claim_changes),
        DecisionCounts(tuple(c.where for c in flips), tuple(moved), unchanged),
        {cid: (old_claims.get(cid), new_claims.get(cid)) for cid in sorted(named)},
    )


@dataclass(frozen=True)
class _Side:
    """One version's run, as the diff needs it: its contract and its log (the bytes the
    build holds, or the published file, read a piece at a time); the log's rows (``rows``)
    are read only when the logs cannot be compared as records."""

    contract: RunContract  # as written (a registered number of blocks not yet resolved)
    data: Log
    name: str  # calls.csv, calls.jsonl or calls.parquet
    file: str  # for messages
    rows: Callable[[], tuple[RunContract, RawLog]]  # the contract (blocks resolved) and every row


def _published_runs(version: PublishedVersion) -> dict[str, _Side]:
    """Each run's contract and log, as the version embeds them in data/."""
    problems = Collector()
    runs = {}
    for folder in sorted(p for p in (version.folder / "data").iterdir() if (p / "run.toml").is_file()):
        rel = f"data/{folder.name}"
        contract = load_contract(folder, rel, problems)
        logs = find_log(folder)
        if contract is None or len(logs) != 1:
            problems.add(rel, 0, "", "expected a contract and one call log")
            continue
        try:
            with open(logs[0], "rb"):  # read when compared, a piece at a time
                pass
        except OSError as exc:
            raise PublishedError(f"{logs[0]}: cannot be read ({exc.strerror})") from None
        runs[contract.id] = _Side(contract, logs[0], logs[0].name, f"{rel}/{logs[0].name}",
                                  partial(_read_rows, folder, rel))
    if problems.problems:
        raise PublishedError(f"{version.folder}: its embedded inputs do not read: {problems.problems[0]}")
    return runs


def _read_rows(folder: Path, rel: str) -> tuple[RunContract, RawLog]:
    problems = Collector()
    read = load_contract_and_log(folder, rel, problems)
    if read is None or problems.problems:
        shown = problems.problems[0] if problems.problems else rel
        raise PublishedError(f"{folder}: its embedded inputs do not read: {shown}")
    return read


def _held(contract: RunContract, log: RawLog) -> tuple[RunContract, RawLog]:
    return contract, with_rows(log)


def _differing_calls(a: _Side | None, b: _Side | None) -> tuple[dict[str, Call], dict[str, Call]]:
    """The calls of the rows that are not the same in both logs, by call id, from each
    side. A row that is the same is the same call (a call's fields are its row's),
    wherever it stands: only the others are parsed. Text logs are compared as records,
    byte for byte, without reading the rows they share into values."""
    try:
        if a is not None and b is not None and a.name == b.name and same_bytes(a.data, b.data):
            return {}, {}
        quick = _by_records(a, b) if a is not None and b is not None else None
    except OSError as exc:  # a published log removed or unreadable since it was found
        read = [str(side.data) for side in (a, b) if side is not None and isinstance(side.data, Path)]
        raise PublishedError(f"{exc.filename or ' or '.join(read)}: cannot be read ({exc.strerror or exc})") from None
    if quick is not None:
        return quick

    a_read, b_read = (a.rows() if a else None), (b.rows() if b else None)
    a_differ, b_differ = differing(a_read[1].rows if a_read else (), b_read[1].rows if b_read else (), _row_key)
    return (_parsed_calls(*a_read, a_differ) if a_read and a_differ else {},
            _parsed_calls(*b_read, b_differ) if b_read and b_differ else {})


def _row_key(row: RawRow) -> frozenset:
    """A row's values, as dict equality compares them (the order of the columns aside)."""
    return frozenset(row.values.items())


def _by_records(a: _Side, b: _Side) -> tuple[dict[str, Call], dict[str, Call]] | None:
    """The differing calls from the records that differ; None when the logs cannot be
    compared so (Parquet, another header, or a contract that registered only a number
    of blocks, which only the whole log resolves)."""
    if a.name != b.name or a.contract.block_count is not None or b.contract.block_count is not None:
        return None
    a_stream, b_stream = record_stream(a.data, a.name), record_stream(b.data, b.name)
    if a_stream is None or b_stream is None or a_stream[0] != b_stream[0]:
        return None
    a_differ, b_differ = differing(a_stream[1], b_stream[1], record_bytes)

    def calls(side: _Side, chosen: list[tuple[int, bytes]]) -> dict[str, Call]:
        if not chosen:
            return {}
        problems = Collector()
        rows = parsed(a_stream[0], chosen, side.file, side.name, problems)  # the headers are the same
        if rows is None:
            raise PublishedError(f"{side.file}: does not read: {problems.problems[0] if problems.problems else ''}")
        return _parsed_calls(side.contract, rows, rows.rows)

    return calls(a, a_differ), calls(b, b_differ)


def _parsed_calls(contract: RunContract, log: RawLog, rows: Sequence[RawRow]) -> dict[str, Call]:
    problems = Collector()
    calls = parse_rows(log, contract, rows, problems)
    if problems.problems:
        raise PublishedError(f"{log.file}: does not read: {problems.problems[0]}")
    return {c.call_id: c for c in calls}


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The contract as dotted keys (``run.alpha``, ``service[B].params.seed``)."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, f"{name}."))
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, Mapping) for v in value):
            for index, item in enumerate(value, 1):
                label = item.get("id", index)
                out.update(_flatten(item, f"{name}[{label}]."))
        else:
            out[name] = value
    return out


def _call_label(rid: str, call: Call, newer: Call | None = None) -> CallLabel:
    """``run/call_id (request hash)``: a call id is only a name, the hash says which
    request it sent. A changed hash is shown as both (it is also listed as a change)."""
    rhash = call.request_hash
    if newer is not None and newer.request_hash != rhash:
        rhash = f"{rhash} -> {newer.request_hash}"
    return CallLabel(rid, call.call_id, rhash)


def _graded_changes(old: PublishedVersion, new: PublishedVersion,
                    new_source: ValidatedSource | None) -> list[Change]:
    """The calls whose outcome the blind grades changed: with ``primary = "human"`` a
    call's outcome is settled from its graders' files (data/<run>/grades/), not from its
    row, so a corrected grade changes no row of the log. Both versions' inputs are loaded
    (as ``verify`` loads them) only when a run's grades folder differs between them."""
    differ = [rid for rid in sorted(set(old.runs) & set(new.runs))
              if _grades_files(old, rid) != _grades_files(new, rid)]
    if not differ:
        return []
    a_source = load_embedded_source(old)
    b_source = new_source if new_source is not None else load_embedded_source(new)
    a_runs = {r.contract.id: r for r in a_source.runs}
    b_runs = {r.contract.id: r for r in b_source.runs}
    out = []
    human = [r for r in differ if r in a_runs and r in b_runs and "human" in
             (a_runs[r].grading.rules.primary, b_runs[r].grading.rules.primary)]
    for rid in human:  # with outcomes as logged, a changed outcome is a changed row, listed already
        a_calls = {c.call_id: c for c in a_runs[rid].calls}
        for b_call in b_runs[rid].calls:
            a_call = a_calls.get(b_call.call_id)
            if a_call is not None and a_call.outcome != b_call.outcome:
                label = _call_label(rid, a_call, b_call)
                out.append(Change(str(label), "outcome (blind grades)", OUTCOME_LABELS[a_call.outcome],
                                  OUTCOME_LABELS[b_call.outcome], label))
    return out


def _grades_files(version: PublishedVersion, rid: str) -> dict[str, bytes]:
    folder = version.folder / "data" / rid / "grades"
    if not folder.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _call_changes(label: CallLabel, a: Call, b: Call) -> list[Change]:
    where = str(label)
    out = [Change(where, f, getattr(a, f), getattr(b, f), label) for f in CALL_FIELDS if getattr(a, f) != getattr(b, f)]
    for key in sorted(set(a.extra) | set(b.extra)):
        if a.extra.get(key, "") != b.extra.get(key, ""):
            out.append(Change(where, key, a.extra.get(key, ""), b.extra.get(key, ""), label))
    return out


def _artifact_changes(old: PublishedVersion, new: PublishedVersion) -> list[Change]:
    """Artifacts of calls both versions hold, compared name by name. A call whose sheet's
    pack is the same file in both versions has the same artifacts: only the packs that
    differ are read (a reviewer's corrections to grades touch none)."""
    out = []
    for rid in sorted(set(old.runs) | set(new.runs)):
        a_sheets, b_sheets = _sheets_of(old, rid), _sheets_of(new, rid)
        # The calls of a sheet both versions hold, with the same pack, have the same pack in
        # both: they are left out at once (not one by one, 100,000 times on each side).
        shared = {_sheet_key(s) for s in a_sheets} & {_sheet_key(s) for s in b_sheets}
        a_packs, b_packs = _pack_of(old, rid, a_sheets, shared), _pack_of(new, rid, b_sheets, shared)
        differ = {c for c in set(a_packs) & set(b_packs) if a_packs[c] != b_packs[c]}
        a_calls, b_calls = _artifacts_of(old, rid, differ, a_packs), _artifacts_of(new, rid, differ, b_packs)
        for call_id in sorted(differ):
            a_files = {e["name"]: e["sha256"] for e in a_calls[call_id]}
            b_files = {e["name"]: e["sha256"] for e in b_calls[call_id]}
            for name in sorted(set(a_files) | set(b_files)):
                if a_files.get(name) != b_files.get(name):
                    label = CallLabel(rid, call_id)
                    out.append(Change(str(label), name, a_files.get(name), b_files.get(name), label))
    return out


def _sheets_of(version: PublishedVersion, rid: str) -> list[dict[str, Any]]:
    run = version.runs.get(rid)
    return list(run.sheets) if run else []


def _sheet_key(sheet: dict[str, Any]) -> tuple:
    """A sheet's pack and its calls (their digest: the versions are read without the
    sheets' lists of calls, see ``read_version``)."""
    return sheet.get("pack"), sheet.get("calls_digest")


def _pack_of(version: PublishedVersion, rid: str, sheets: list[dict[str, Any]],
             shared: set[tuple]) -> dict[str, str | None]:
    """The pack of each call on a sheet that is not ``shared`` (only their calls are read)."""
    wanted = {i for i, sheet in enumerate(sheets) if _sheet_key(sheet) not in shared}
    calls = sheet_calls(version, rid, wanted)
    return {call_id: sheets[i].get("pack") for i in sorted(wanted) for call_id in calls.get(i, ())}


def _artifacts_of(version: PublishedVersion, rid: str, calls: set[str],
                  packs: dict[str, str | None]) -> dict[str, list[dict[str, Any]]]:
    """The artifacts of ``calls`` (none for a call whose sheet has no pack)."""
    out: dict[str, list[dict[str, Any]]] = {call_id: [] for call_id in calls}
    for name in sorted({p for c in calls if (p := packs[c])}):
        index = version.pack(name)[0]["calls"]
        out.update((call_id, entries) for call_id, entries in index.items() if call_id in calls)
    return out


def _show(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value) if isinstance(value, str) else str(value)


def format_text(d: VersionDiff) -> str:
    lines = [f"reportgen diff {d.old} -> {d.new}"]
    if d.empty:
        return lines[0] + "\nno changes in contract, calls, artifacts or claims\n"

    def section(title: str, items: list[str]) -> None:
        if items:
            lines.append(f"\n{title} ({len(items)})")
            lines.extend(f"  {item}" for item in items)

    n = d.decisions
    if n.flipped or n.moved or n.unchanged:
        lines.append(f"\nDecisions: {len(n.flipped)} flipped, {len(n.moved)} with a changed interval, "
                     f"{n.unchanged} unchanged")
    section("Verdicts that changed", [f"{c.where}: {c.old} -> {c.new}" for c in d.verdict_flips])
    section("Decisions read on a changed interval, verdict unchanged", list(n.moved))
    section("Contract changes", [f"{c.where}: {c.field}: {_show(c.old)} -> {_show(c.new)}" for c in d.contract])
    section("Calls added", [f"+ {c}" for c in d.calls_added])
    section("Calls removed", [f"- {c}" for c in d.calls_removed])
    section("Calls changed", [f"~ {where}: " + "; ".join(f"{c.field}: {_show(c.old)} -> {_show(c.new)}" for c in changes)
                              for where, changes in calls_by_where(d.calls_changed)])
    section("Artifacts whose content changed",
            [f"~ {c.where}: {c.field}: {_show(c.old)} -> {_show(c.new)}" for c in d.artifacts_changed])
    section("Claims added", [f"+ {c}" for c in d.claims_added])
    section("Claims removed", [f"- {c}" for c in d.claims_removed])
    section("Claims whose numbers changed", _claim_lines(d.claims_changed))
    return "\n".join(lines) + "\n"


def calls_by_where(changes: Sequence[Change]) -> list[tuple[str, list[Change]]]:
    """Changes grouped by the call (or artifact) they belong to, in order: one row each."""
    grouped: dict[str, list[Change]] = {}
    for c in changes:
        grouped.setdefault(c.where, []).append(c)
    return list(grouped.items())


def _claim_lines(changes: tuple[Change, ...]) -> list[str]:
    """One line per claim: estimate, interval as a pair, then any other field."""
    by_claim: dict[str, dict[str, Change]] = {}
    for c in changes:
        by_claim.setdefault(c.where, {})[c.field] = c
    lines = []
    for claim_id, fields_ in by_claim.items():
        parts = []
        low, high = fields_.pop("interval.low", None), fields_.pop("interval.high", None)
        if "estimate" in fields_:
            c = fields_.pop("estimate")
            parts.append(f"estimate {_show(c.old)} -> {_show(c.new)}")
        if low and high:
            parts.append(f"interval [{_show(low.old)}, {_show(high.old)}] -> [{_show(low.new)}, {_show(high.new)}]")
        else:
            parts += [f"{c.field} {_show(c.old)} -> {_show(c.new)}" for c in (low, high) if c]
        parts += [f"{name} {_show(c.old)} -> {_show(c.new)}" for name, c in sorted(fields_.items())]
        lines.append(f"{claim_id}: " + "; ".join(parts))
    return lines

"""The ``identical-outputs`` check: one output counted as many independent draws.

Two rules. Calls that sent the same request and got the same output back: the same
response (every artifact byte-identical), or the same drawing inside different
responses (what is graded is then one drawing, however it was introduced). And calls of
one service whose graded output is large and byte-identical, whatever their requests:
a per-call field in the body (a call number, a trace id) makes every request hash
differ, and still twenty-five identical 2 KB drawings at temperature 1 are a cache, not
twenty-five draws. Short answers (" B", "42") repeated to different requests are
answers, not a cache: they are compared only under the same request.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Hashable, Iterable, Mapping

from reportgen.model.calls import Call
from reportgen.model.findings import Finding
from reportgen.model.numbers import counted
from reportgen.model.source import ValidatedRun

# Bytes from which one graded output returned to different requests is taken for a
# cached copy. A few hundred bytes of drawing or prose do not come out byte for byte
# twice by chance at any useful temperature; a short answer (a letter, a number, a
# one-line verdict) does, often, and is an answer rather than a cache.
LARGE_OUTPUT = 256


def identical_outputs(run: ValidatedRun, hashes: Mapping[str, tuple[str, ...]], drawings: Mapping[str, str],
                      graded: Mapping[str, tuple[str, int]]) -> Iterable[Finding]:
    """One finding per service and kind. ``graded``: each call's graded output (its
    drawing, else its whole response) as a digest and its size in bytes."""
    firsts = {c.call_id: c for c in run.calls if c.first_submission}
    # A call's files as a key: the tuple of their sha256s, not a string joining them (a
    # million calls' keys were 200 MB as strings).
    responses = {cid: digests if len(digests) == 1 else tuple(sorted(digests))
                 for cid, digests in hashes.items() if digests}
    same_response = _same_request_groups(firsts, responses)
    same_drawing = [g for g in _same_request_groups(firsts, drawings)
                    if len({responses.get(c.call_id) for c in g}) > 1]  # else listed as identical responses
    yield from _findings(run, same_response, "identical responses (byte-identical artifacts)", "the same request", "",
                         "byte-identical responses to the same request, counted as independent draws")
    yield from _findings(run, same_drawing, "identical drawings inside different responses", "the same request",
                         "; what is graded is one drawing, counted as many",
                         "one drawing inside different responses to the same request: what is graded is one "
                         "drawing, counted as many independent draws")
    yield from _findings(run, _large_groups(firsts, graded),
                         f"one graded output of at least {LARGE_OUTPUT} bytes, byte for byte,", "different requests",
                         "; an output this long does not come back twice by chance: a cached copy is one draw",
                         f"one graded output of at least {LARGE_OUTPUT} bytes, byte for byte, to different "
                         "requests: a cached copy counted as independent draws")


def _same_request_groups(firsts: Mapping[str, Call], keys: Mapping[str, Hashable]) -> list[list[Call]]:
    """Groups of two or more counted calls with the same request hash and the same key."""
    # Most calls share their key with none: a list is made for a key's second call only.
    first: dict[tuple[str, Hashable], Call] = {}
    by_key: dict[tuple[str, Hashable], list[Call]] = {}
    for call_id, key in keys.items():
        call = firsts.get(call_id)
        if call is not None:
            both = (call.request_hash, key)
            seen = first.setdefault(both, call)
            if seen is not call:
                by_key.setdefault(both, [seen]).append(call)
    return [sorted(calls, key=lambda c: c.line) for calls in by_key.values()]


def _large_groups(firsts: Mapping[str, Call], graded: Mapping[str, tuple[str, int]]) -> list[list[Call]]:
    """Groups of counted calls of one service with one large graded output, sent more than
    one request (one request answered alike is what the other rules report)."""
    by_key: dict[tuple[str, str], list[Call]] = defaultdict(list)
    for call_id, (key, size) in graded.items():
        call = firsts.get(call_id)
        if call is not None and size >= LARGE_OUTPUT:
            by_key[(call.service, key)].append(call)
    return [sorted(calls, key=lambda c: c.line) for calls in by_key.values()
            if len({c.request_hash for c in calls}) > 1]


def _findings(run: ValidatedRun, groups: list[list[Call]], what: str, to: str, why: str,
              summary: str) -> Iterable[Finding]:
    repeated: dict[str, list[list[Call]]] = defaultdict(list)
    # Each service's own calls in its groups, gathered group by group: picked out of
    # every call of its groups, service by service, they cost 0.6 s of a 100,000-call
    # audit whose outputs 50 services share (each group then holds most services).
    own_calls: dict[str, list[Call]] = defaultdict(list)
    shared: set[str] = set()  # services in a group with another service's calls
    for calls in groups:
        services: set[str] = set()
        for call in calls:
            own_calls[call.service].append(call)
            services.add(call.service)
        for service in services:
            repeated[service].append(calls)
        if len(services) > 1:
            shared.update(services)
    for service, mine in sorted(repeated.items()):
        mine.sort(key=lambda g: g[0].line)
        first = mine[0]
        # Another service's call with the same output is a shared cache, not a new draw either.
        also = ", some shared with other services" if service in shared else ""
        example = ", ".join(c.call_id for c in first[:5]) + (", ..." if len(first) > 5 else "")
        own = tuple(dict.fromkeys(c.call_id for c in sorted(own_calls[service], key=lambda c: c.line)))
        # A service can have a single call among other services' calls: then it is one.
        as_draws = "are counted as independent draws" if len(own) != 1 else "is counted as an independent draw"
        yield Finding("identical-outputs", "warning", run.log.file, first[1].line, "artifact_path",
                      f"{service}: {counted(len(own), 'call')} in {counted(len(mine), 'group')} got {what} to "
                      f"{to}{also} (for example {example}) but {as_draws}{why}", (service,), calls=own, summary=summary)

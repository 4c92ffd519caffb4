"""A contract that registers a number of blocks takes the block ids from the log.

``blocks = 4`` says how many batches the run has, not what they are called. Ids "1".."4"
are what a count has always stood for: a log using only those keeps all four registered
(a block with no calls is a missed window, still planned). Any other ids ("b1".."b4",
"mon".."thu") are the blocks when there are exactly that many; a different number is one
problem at the contract's ``blocks`` line, never one per row. A list of ids in the
contract is checked row by row instead (``rows._block_id``).
"""

from __future__ import annotations

import dataclasses

from reportgen.errors import Collector
from reportgen.model.config import RunContract
from reportgen.model.ordering import natural_key
from reportgen.model.source import RawLog

SHOWN_IDS = 10  # a log with thousands of block ids needs the first few, not all of them


def resolve_blocks(contract: RunContract, log: RawLog, rel_contract: str, problems: Collector) -> RunContract:
    """The contract with the log's block ids when it registered only their number;
    unchanged (and the problem reported) otherwise. A row without a block id, among
    rows with one, is then reported by the row checks as outside the registered blocks."""
    count = contract.block_count
    if count is None:
        return contract
    ids = {(row.values.get("block_id") or "").strip() for row in log.rows} - {""}
    found = sorted(ids, key=lambda i: (natural_key(i), i))  # "b01" and "b1" tie: still one order
    if not found:
        problems.add(rel_contract, contract.line_of("blocks"), "run.blocks",
                     f"{count} blocks are registered, but no row of {log.file} names its block (block_id)")
        return contract
    numbered = tuple(str(i) for i in range(1, count + 1))
    if set(found) <= set(numbered):
        return dataclasses.replace(contract, blocks=numbered)
    if len(found) != count:
        problems.add(rel_contract, contract.line_of("blocks"), "run.blocks",
                     f"{count} blocks are registered, but {log.file} has {len(found)} distinct block ids "
                     f"({_listed(found)}); register the number the run had, or list the ids")
        return contract
    return dataclasses.replace(contract, blocks=tuple(found))



def _listed(ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS])
    return shown if len(ids) <= SHOWN_IDS else f"{shown}, ... ({len(ids)} in all)"

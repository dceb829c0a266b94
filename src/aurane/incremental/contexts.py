"""Each block's context: the blocks its analysis needs, within a budget of work."""

from __future__ import annotations

from collections.abc import Callable

from aurane.incremental.blocks import Block

# Per-block contexts pay while they stay near the size of the program; past these bounds
# the program is analysed as one context (the work of one full analysis per edit).
CONTEXT_BLOCKS_PER_BLOCK = 64  # blocks in all contexts, and the work to find them, per block
CONTEXT_CHARS_PER_CHAR = 8  # characters in all contexts together, per character of text


def build_contexts(
    blocks: list[Block], close_names: Callable[[str, int, list[str]], tuple[str, ...]]
) -> list[list[int] | None] | None:
    """Each block's context (sorted indices; None for a block without statements): itself,
    the blocks defining what it mentions, transitively, the global blocks' contexts, and the
    definitions of names ``close_names`` finds close to one it cannot resolve. None when the
    contexts together would hold more than ``CONTEXT_BLOCKS_PER_BLOCK`` blocks per block
    (they grow with the square of the blocks: a chain of constants)."""
    try:
        return _build(blocks, close_names)
    except _TooEntangled:
        return None


def _build(
    blocks: list[Block], close_names: Callable[[str, int, list[str]], tuple[str, ...]]
) -> list[list[int] | None]:
    budget = CONTEXT_BLOCKS_PER_BLOCK * len(blocks) + 256
    spent = 0

    def spend(amount: int) -> None:
        nonlocal spent
        spent += amount
        if spent > budget:
            raise _TooEntangled

    definers: dict[str, list[int]] = {}
    for i, block in enumerate(blocks):
        for name in block.parsed.defines:
            definers.setdefault(name, []).append(i)
    names_key = hash(frozenset(definers))
    all_names = sorted(definers)
    direct: dict[int, list[int]] = {}

    def deps(i: int) -> list[int]:
        found = direct.get(i)
        if found is None:
            parsed = blocks[i].parsed
            out: set[int] = set()
            for name in parsed.mentions | parsed.defines:
                spend(len(definers.get(name, ())))
                out.update(definers.get(name, ()))
            for name in parsed.unknown:
                if name not in definers:
                    for close in close_names(name, names_key, all_names):
                        spend(len(definers[close]))
                        out.update(definers[close])
            out.discard(i)
            found = direct[i] = sorted(out)
        return found

    memo: dict[int, set[int]] = {}

    def closure(start: int) -> set[int]:
        done = memo.get(start)
        if done is not None:
            return done
        seen: set[int] = {start}
        stack = list(deps(start))
        while stack:
            j = stack.pop()
            if j in seen:
                continue
            seen.add(j)
            known = memo.get(j)
            if known is not None:
                spend(len(known))
                seen |= known
            else:
                stack.extend(deps(j))
        memo[start] = seen
        return seen

    base: set[int] = set()
    for i, block in enumerate(blocks):
        if block.parsed.is_global:
            base |= closure(i)
    contexts: list[list[int] | None] = []
    for i, block in enumerate(blocks):
        if not block.statements:
            contexts.append(None)
            continue
        context = base | closure(i)
        spend(len(context))
        contexts.append(sorted(context))
    return contexts


class _TooEntangled(Exception):
    """The contexts outgrew their budget (``CONTEXT_BLOCKS_PER_BLOCK``)."""


def affordable(blocks: list[Block], contexts: list[list[int] | None], size: int) -> bool:
    """Whether analysing every context costs at most ``CONTEXT_CHARS_PER_CHAR`` times the
    text (one block used by many, each analysed with it, multiplies its size)."""
    budget = CONTEXT_CHARS_PER_CHAR * size + 65536
    spent = 0
    for context in contexts:
        if context is not None:
            spent += sum(len(blocks[j].text) for j in context)
            if spent > budget:
                return False
    return True

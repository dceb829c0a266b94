"""The refusals a generated class opens its ``__init__`` with (issue 24 item 3): a class
written for some arguments only (its calls' values, a network's variants') raises a named
``ValueError`` when built with others, rather than silently computing what it was written
for::

    if n != 2:  # its loops are written out for this value
        raise ValueError(f"Fam0 is written for n == 2, not {n}")

Every refuser (``param_blocks``, ``untaken``, ``rolled``, ``rolled_block``) says what it
tests and what the class is written for; this module alone writes the lines, so they all
read alike and wrap as black wraps them."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from aurane.backends.torch.emit_common import Call
from aurane.backends.torch.modules import INDENT, wrap


def refusal(
    class_name: str, test: str, said: str, why: str, given: str = "", depth: int = 2
) -> list[str]:
    """``if test:  # why`` and ``raise ValueError("{class_name} is written {said}, not
    {given}")`` at ``depth`` indents: ``test`` is true for the arguments refused, ``said``
    what the class is written for or without (``for n == 2``, ``without the branch at
    6:9, which no call takes``), ``given`` the expression of the arguments the message
    shows as given (``n``, ``(n, m)``; none: a message without them)."""
    text = f"{class_name} is written {said}"
    if given:  # an f-string: the braces of the text are its own
        escaped = text.replace("{", "{{").replace("}", "}}")
        message = _string(f"{escaped}, not {{{given}}}", prefix="f")
    else:
        message = _string(text)
    return [
        *wrap(depth, "if ", test, f"# {why}", ":"),
        *wrap(depth + 1, "raise ", Call("ValueError", (message,))),
    ]


def _string(text: str, prefix: str = "") -> str:
    """``text`` as a string literal: in double quotes, else in single quotes where it
    holds a double one (``acts == ("exp", nn.ReLU)``); one holding both escapes its
    double quotes."""
    if '"' not in text:
        return f'{prefix}"{text}"'
    if "'" not in text:
        return f"{prefix}'{text}'"
    return prefix + '"' + text.replace('"', '\\"') + '"'


def refused_first(lines: Sequence[str]) -> list[str]:
    """``__init__``'s ``lines`` with each loop's refusals of its targets once, first in
    its body (``hoisted``)."""
    out = list(lines)
    at = 0
    while at < len(out):  # the lines after a loop's header change as it is done
        found = re.match(r"( *)for (.+?) in ", out[at])
        if found is not None:
            depth = len(found[1]) // len(INDENT)
            names = re.findall(r"[A-Za-z_]\w*", found[2])
            out[at:] = hoisted(out[at:], depth, names)
        at += 1
    return out


def hoisted(lines: Sequence[str], depth: int, names: Collection[str]) -> list[str]:
    """The lines of a loop (its header ``for`` at ``depth``) with each refusal of its
    body testing one of ``names``, the loop's targets (``if a not in (nn.ReLU,
    nn.GELU):``, ``block_walk``'s of a list's item), written once, first in the body: the
    item is refused before the iteration builds anything, and once however many steps
    apply it. Unchanged where the body binds one of ``names`` again (an inner loop's
    target: the refusal reads the value at its step)."""
    out = list(lines)
    at = next((k for k, line in enumerate(out) if line.startswith(f"{INDENT * depth}for ")), None)
    if at is None:
        return out
    pad = INDENT * (depth + 1)
    end = next(
        (k for k in range(at + 1, len(out)) if out[k].strip() and not out[k].startswith(pad)),
        len(out),
    )
    body = out[at + 1 : end]
    tests = tuple(f"{pad}if {name} {op}" for name in names for op in ("not in (", "is not "))
    if any(
        line.lstrip().startswith("for ") and any(f" {name}" in line for name in names)
        for line in body
    ):
        return out
    refusals: list[list[str]] = []
    kept: list[str] = []
    k = 0
    while k < len(body):
        start = k + 1 if body[k].startswith(f"{pad}# ") else k  # the why on its own line
        stop = start + 1
        while stop < len(body) and body[stop].startswith(pad + INDENT):
            stop += 1
        raises = stop <= len(body) and stop > start + 1
        raises = raises and body[start + 1].lstrip().startswith("raise ValueError(")
        if raises and body[start].startswith(tests):
            if body[k:stop] not in refusals:
                refusals.append(body[k:stop])
            k = stop
            continue
        kept.append(body[k])
        k += 1
    if not refusals:
        return out
    return [*out[: at + 1], *(line for block in refusals for line in block), *kept, *out[end:]]


def first_in_init(lines: list[str], checks: Sequence[str]) -> list[str]:
    """A class's ``lines`` with ``checks`` first in ``__init__``, right after
    ``super().__init__()``: a refusal runs before anything is built."""
    if not checks:
        return lines
    at = lines.index(f"{INDENT * 2}super().__init__()") + 1
    return [*lines[:at], *checks, *lines[at:]]

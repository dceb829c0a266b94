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

from aurane.backends.torch.emit_common import Call
from aurane.backends.torch.modules import wrap


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

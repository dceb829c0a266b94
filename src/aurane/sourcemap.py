"""Source maps: which ``.aur`` span produced each line of a generated module.

The map is computed from the generated text and the IR graphs (no torch needed): each
generated class's ``forward`` holds, after its prologue (dtype check, padding mask), one
statement per IR node, in node order, with three documented exceptions that the aligner
knows: a grouped split (``a, b = x.chunk(2, dim=-1)``: one statement, several nodes), a
block loop (``for block in self.layers: x = block(x, padding_mask)``, optionally preceded
by ``x = h``) and a recurrent unpack (``h, _ = self.lstm1(x)``). A class whose statements
do not line up with its nodes gets no map (never a guessed one). ``__init__`` lines are
mapped through the attribute the forward statement of a node calls (``self.conv2d1``).

The table travels in the generated file as comment lines at its end::

    # aurane-source-map: src=net.aur 40=5:9 41-43=6:11 ...

(generated line or line range ``=`` ``.aur`` line:column); the torch backend appends it
(``backends/torch/program.with_table``, from ``class_maps`` and ``render_table`` here), and
``aurane.compile.attach_source_map`` makes it again for a post-processed file. This module
imports nothing of the backends or the compiler. ``install()`` adds the ``.aur``
location beside each mapped frame of a traceback; ``python -m aurane.sourcemap out.py``
runs a generated program with it installed.
"""

from __future__ import annotations

import ast as pyast
import linecache
import re
import sys
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

from aurane.ir.graph import Graph, Node
from aurane.records import record

PREFIX = "# aurane-source-map:"
_LINE_WIDTH = 100
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,60}$")


@record(frozen=True)
class Statement:
    """One forward statement: its generated lines, the locals it binds and its nodes."""

    first: int  # 1-based generated line
    last: int
    targets: tuple[str, ...]  # local names bound, in node order (``_`` excluded)
    nodes: tuple[Node, ...]
    attribute: str | None  # ``self.<path>`` the statement calls, e.g. "conv2d1", "layer2[0]"
    # a named nn.Sequential applied whole (``h = self.downsample(x)``): its layer path; the
    # statement then covers one node per child and binds only the last node's output
    run: str | None = None
    attributes: tuple[str, ...] = ()  # every ``self.`` path read, longest first


@record(frozen=True)
class ClassMap:
    name: str  # generated class name
    graph: Graph
    statements: tuple[Statement, ...]
    init_lines: tuple[tuple[int, int, Node], ...]  # (first, last, node) of ``self.x = ...``
    forward_first: int
    forward_last: int

    def statement_at(self, line: int) -> Statement | None:
        for stmt in self.statements:
            if stmt.first <= line <= stmt.last:
                return stmt
        return None


# -- building the map -----------------------------------------------------------------------


def class_maps(code: str, plans: Iterable[tuple[str, Graph]]) -> dict[str, ClassMap]:
    """Maps for each generated class (name, graph) whose forward lines up with its graph."""
    tree = pyast.parse(code)
    classes = {n.name: n for n in tree.body if isinstance(n, pyast.ClassDef)}
    found: dict[str, ClassMap] = {}
    for name, graph in plans:
        cls = classes.get(name)
        if cls is None:
            continue
        base = cls.bases[0] if len(cls.bases) == 1 else None
        if _method(cls, "forward") is None and isinstance(base, pyast.Name) and base.id in classes:
            cls = classes[base.id]  # a variant's entry class: the rolled network's forward
        built = _class_map(cls, graph, name)
        if built is not None:
            found[name] = built
    return found


def _method(cls: pyast.ClassDef, name: str) -> pyast.FunctionDef | None:
    return next((n for n in cls.body if isinstance(n, pyast.FunctionDef) and n.name == name), None)


def _class_map(cls: pyast.ClassDef, graph: Graph, name: str) -> ClassMap | None:
    forward = _method(cls, "forward")
    if forward is None:
        return None
    body = list(forward.body)
    while body and isinstance(body[0], pyast.If):  # prologue: dtype check, padding mask
        body.pop(0)
    if not body or not isinstance(body[-1], pyast.Return):
        return None
    statements = _align(body[:-1], graph.nodes)
    if statements is None:
        return None
    return ClassMap(
        name,
        graph,
        tuple(statements),
        tuple(_init_lines(_method(cls, "__init__"), statements)),
        forward.lineno,
        forward.end_lineno or forward.lineno,
    )


def _align(body: list[pyast.stmt], nodes: tuple[Node, ...]) -> list[Statement] | None:
    out: list[Statement] = []
    index = 0
    pending_copy: pyast.stmt | None = None  # ``x = h`` before a block loop
    for pos, stmt in enumerate(body):
        following = body[pos + 1] if pos + 1 < len(body) else None
        if (
            isinstance(stmt, pyast.Assign)
            and isinstance(stmt.value, pyast.Name)
            and isinstance(following, pyast.For)
        ):
            pending_copy = stmt
            continue
        targets = _targets(stmt)
        if targets is None:
            return None
        run = _run(stmt, nodes, index)
        if run is not None:
            count = run[1]
            targets = ("",) * (count - 1) + targets[:1]  # only the last output is bound
        elif index < len(nodes) and len(nodes[index].outputs) == len(targets) > 1:
            count = 1  # h, pooled = self.encoder1(x, mask): one block, several outputs
        else:
            count = len(targets) if isinstance(stmt, pyast.Assign) and len(targets) > 1 else 1
            targets = targets if count > 1 else targets[:1]
        if index + count > len(nodes):
            return None
        first = pending_copy.lineno if pending_copy is not None else stmt.lineno
        pending_copy = None
        paths = _self_attributes(stmt)
        out.append(
            Statement(
                first,
                stmt.end_lineno or stmt.lineno,
                targets,
                nodes[index : index + count],
                paths[0] if paths else None,
                run[0] if run is not None else None,
                paths,
            )
        )
        index += count
    return out if index == len(nodes) and pending_copy is None else None


def _targets(stmt: pyast.stmt) -> tuple[str, ...] | None:
    if isinstance(stmt, pyast.For):
        assigns = [s for s in stmt.body if isinstance(s, pyast.Assign)]
        return _targets(assigns[-1]) if assigns else None
    if not isinstance(stmt, pyast.Assign) or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if isinstance(target, pyast.Name):
        return (target.id,)
    if isinstance(target, pyast.Tuple):
        names = [e.id for e in target.elts if isinstance(e, pyast.Name) and e.id != "_"]
        return tuple(names) if names else None
    return None


def _self_attributes(stmt: pyast.stmt) -> tuple[str, ...]:
    """The ``self.a.b[0]`` paths the statement reads, longest first, without ``self.``."""
    root = stmt.iter if isinstance(stmt, pyast.For) else getattr(stmt, "value", None)
    if root is None:
        return ()
    found = set()
    for node in pyast.walk(root):
        if isinstance(node, pyast.Attribute | pyast.Subscript):
            text = pyast.unparse(node)
            if text.startswith("self."):
                found.add(text[len("self.") :])
    return tuple(sorted(found, key=lambda t: (-len(t), t)))


def layer_path(attribute: str) -> str:
    """``block[0].fc1`` or ``block['0'].fc1`` -> ``block.0.fc1``: the layer name the IR records
    (``Node.layer``); string keys index an ``nn.ModuleDict``."""
    return re.sub(r"""\[(['"]?)([\w-]+)\1\]""", r".\2", attribute)


def _run(stmt: pyast.stmt, nodes: tuple[Node, ...], index: int) -> tuple[str, int] | None:
    """(layer path, node count) when ``stmt`` applies a whole named container to one input."""
    if not isinstance(stmt, pyast.Assign) or not isinstance(stmt.value, pyast.Call):
        return None
    func = pyast.unparse(stmt.value.func)
    if not func.startswith("self.") or len(stmt.value.args) != 1 or index >= len(nodes):
        return None
    path = layer_path(func[len("self.") :])
    count = sum(1 for n in nodes if n.layer and n.layer.startswith(path + "."))
    if not count or index + count > len(nodes):
        return None
    # the container's layers, one after the other (numbered, nested or named children:
    # the generator applies a container whole only so, backends/torch/sequential.py)
    if any(not (nodes[index + k].layer or "").startswith(path + ".") for k in range(count)):
        return None
    return path, count


def _init_lines(
    init: pyast.FunctionDef | None, statements: list[Statement]
) -> list[tuple[int, int, Node]]:
    if init is None:
        return []
    owner: dict[str, Node] = {}
    for stmt in statements:
        if stmt.attribute is not None:
            owner.setdefault(_attr_root(stmt.attribute), stmt.nodes[0])
    out: list[tuple[int, int, Node]] = []
    for line in init.body:
        if isinstance(line, pyast.Assign) and len(line.targets) == 1:
            target = pyast.unparse(line.targets[0])
            if target.startswith("self."):
                node = owner.get(_attr_root(target[len("self.") :]))
                if node is not None:
                    out.append((line.lineno, line.end_lineno or line.lineno, node))
    return out


def _attr_root(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0]


# -- the comment table ----------------------------------------------------------------------


def line_table(maps: Mapping[str, ClassMap]) -> dict[tuple[int, int], tuple[int, int]]:
    """(first, last) generated lines -> (.aur line, column), forward and ``__init__`` lines."""
    table: dict[tuple[int, int], tuple[int, int]] = {}
    for cmap in maps.values():
        for first, last, node in cmap.init_lines:
            table[(first, last)] = (node.span.line, node.span.column)
        for stmt in cmap.statements:
            span = stmt.nodes[0].span
            table[(stmt.first, stmt.last)] = (span.line, span.column)
    return dict(sorted(table.items()))


def render_table(
    table: Mapping[tuple[int, int], tuple[int, int]], source_name: str | None = None
) -> str:
    """The comment lines (each at most 100 characters), ending with a newline; "" if empty."""
    if not table:
        return ""
    items = []
    base = re.split(r"[\\/]", source_name)[-1] if source_name else ""
    if base and _SAFE_NAME.match(base):
        items.append(f"src={base}")
    for (first, last), (line, column) in table.items():
        lines = str(first) if first == last else f"{first}-{last}"
        items.append(f"{lines}={line}:{column}")
    out, current = [], PREFIX
    for item in items:
        if len(current) + 1 + len(item) > _LINE_WIDTH and current != PREFIX:
            out.append(current)
            current = PREFIX
        current += " " + item
    out.append(current)
    return "\n".join(out) + "\n"


def strip_table(code: str) -> str:
    """``code`` without its source-map table (and the blank line before it), so a
    post-processed file (``--standalone``, ``--format``) can get a table of its own lines."""
    if PREFIX not in code:
        return code
    lines = [line for line in code.splitlines() if not line.startswith(PREFIX)]
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines) + "\n"


@record(frozen=True)
class ParsedMap:
    source: str | None
    lines: Mapping[int, tuple[int, int]]

    def locate(self, line: int) -> tuple[int, int] | None:
        return self.lines.get(line)


def parse_table(text_lines: Iterable[str]) -> ParsedMap | None:
    source: str | None = None
    lines: dict[int, tuple[int, int]] = {}
    found = False
    for raw in text_lines:
        if not raw.startswith(PREFIX):
            continue
        found = True
        for item in raw[len(PREFIX) :].split():
            if item.startswith("src="):
                source = item[4:]
                continue
            match = re.fullmatch(r"(\d+)(?:-(\d+))?=(\d+):(\d+)", item)
            if match:
                first = int(match[1])
                last = int(match[2] or first)
                for number in range(first, last + 1):
                    lines[number] = (int(match[3]), int(match[4]))
    return ParsedMap(source, lines) if found else None


_CACHE: dict[str, ParsedMap | None] = {}


def map_for_file(filename: str) -> ParsedMap | None:
    if filename not in _CACHE:
        _CACHE[filename] = parse_table(linecache.getlines(filename))
    return _CACHE[filename]


def command(program: str) -> list[str]:
    """The command line that runs a generated ``program`` with ``install()`` in effect."""
    return [sys.executable, "-m", "aurane.sourcemap", program]


# -- tracebacks -----------------------------------------------------------------------------

_NOTE = "produced by "
_FRAME = re.compile(r'^  File "(.+)", line (\d+), in ')


def annotate(lines: Iterable[str], source_override: str | None = None) -> list[str]:
    """Formatted traceback entries, each mapped frame followed by its ``.aur`` location."""
    out = []
    for entry in lines:
        out.append(entry)
        match = _FRAME.match(entry)
        if not match:
            continue
        parsed = map_for_file(match[1])
        where = parsed.locate(int(match[2])) if parsed else None
        if parsed is None or where is None:
            continue
        name = source_override or parsed.source or "<source>"
        note = f"    {_NOTE}{name}:{where[0]}:{where[1]}\n"
        out[-1] = entry if entry.endswith("\n") else entry + "\n"
        out.append(note)
    return out


def format_exception(error: BaseException, source_override: str | None = None) -> str:
    import traceback

    lines = annotate(traceback.format_exception(error), source_override)
    notes = [line.strip().removeprefix("produced by ") for line in lines if _NOTE in line]
    if notes:  # the innermost generated line, repeated after the error message
        lines.append(f"aurane: the failing generated line came from {notes[-1]}\n")
    return "".join(lines)


def install(source_override: str | None = None) -> None:
    """Report ``.aur`` locations beside generated frames of uncaught exceptions."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            previous(kind, error, tb)
            return
        try:
            text = format_exception(error.with_traceback(tb), source_override)
        except Exception:  # never hide the original error behind our own
            previous(kind, error, tb)
            return
        sys.stderr.write(text)

    sys.excepthook = hook


def main(argv: list[str] | None = None) -> int:
    """``python -m aurane.sourcemap PROGRAM.py [ARGS...]``: run it with ``install()``."""
    import runpy

    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m aurane.sourcemap PROGRAM.py [ARGS...]", file=sys.stderr)
        return 2
    install()
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")
    return 0


def _run_as_main() -> Any:  # pragma: no cover - exercised through subprocess tests
    raise SystemExit(main())


if __name__ == "__main__":  # pragma: no cover
    _run_as_main()

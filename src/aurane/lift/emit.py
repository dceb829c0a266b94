"""A ``Program`` as ``.aur`` text, in the zoo's hand-written style.

Each body becomes statements: a run of single-input steps where each value is used once is
one chain (``h = x -> conv2d(64, kernel=3) as conv1 -> batchnorm().relu as bn1``), an
unnamed activation right after a step is its suffix (``.relu``), an ``add`` of a step's
input and output is that step's ``.residual``, operations of several inputs are graph
statements (``return add(h, x).relu``), and ``split``/``chunk`` pieces unpack
(``q, k, v = split(qkv, 768, dim=-1)``). A value is rebound to its input's name when that
name is not read again (``x -> ...``), otherwise it gets a new one. Arguments equal to the
catalog's defaults are left out; numbers that are block parameters are written as them.

The text is then laid out by ``aurane.tools.format`` (the project's formatter), so an
imported program looks like any other.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Collection, Mapping
from typing import Any

from aurane.lift.graph import GAP_ORIGIN
from aurane.lift.program import BlockDef, Program, Step
from aurane.lift.signatures import COUNT
from aurane.ops import CATALOG, lookup
from aurane.ops.spec import ArgKind
from aurane.records import field, record, replace

INDENT = "    "
# operations whose required arguments read best positionally: transpose(h, 1, 2)
ALL_POSITIONAL = frozenset({"transpose", "permute", "reshape", "expand", "embedding"})
# operations whose first (required) argument reads best positionally: conv2d(64, ...);
# the others are written with keywords: select(h, dim=1, index=0)
FIRST_POSITIONAL = frozenset(
    {
        "dense",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "group_norm",
        "dropout",
        "drop_path",
        "maxpool",
        "avgpool",
        "adaptive_avg_pool",
        "adaptive_max_pool",
        "split",
        "chunk",
        "pad",
        "pixel_shuffle",
        "lstm",
        "gru",
        "parameter",
        "buffer",
        "ones",
        "zeros",
        "full",
        "positional_encoding",
        "unsqueeze",
        "squeeze",
        "multiply",
        "subtract",
        "divide",
    }
)
# arguments shown even at their default value, as a person writes them: conv2d(64, kernel=3)
ALWAYS_SHOWN = frozenset({"kernel"})


def literal(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "None"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, tuple | list):
        items = [literal(v) for v in value]
        if len(items) == 1:
            return f"({items[0]},)"
        return "(" + ", ".join(items) + ")"
    return repr(value)


def _value_text(value: Any, exprs: Mapping[tuple[str, int], str], key: str) -> str:
    """A value's text; a tuple's items joined without brackets (the caller adds them)."""
    if isinstance(value, tuple):
        return ", ".join(exprs.get((key, i), literal(v)) for i, v in enumerate(value))
    return exprs.get((key, -1), literal(value))


def _bracketed(text: str, value: tuple[Any, ...]) -> str:
    return f"({text},)" if len(value) == 1 else f"({text})"


def op_arguments(
    op: str, args: Mapping[str, Any], exprs: Mapping[tuple[str, int], str]
) -> list[str]:
    """The argument texts of a catalog call (inputs excluded)."""
    spec = lookup(op)
    if spec is None:
        return [f"{k}={literal(v)}" for k, v in args.items()]
    out: list[str] = []
    positional = True  # every parameter so far was written positionally
    for index, param in enumerate(spec.params):
        if param.name not in args:
            positional = False
            continue
        value = args[param.name]
        has_expr = any(k == param.name for k, _ in exprs)
        shown = param.name in ALWAYS_SHOWN or has_expr
        same_kind = type(value) is type(param.default) or value is None
        if not param.required and value == param.default and not shown and same_kind:
            positional = False
            continue
        text = _value_text(value, exprs, param.name)
        variadic = param.variadic and op not in ("parameter", "buffer")
        if isinstance(value, tuple) and not variadic:
            text = _bracketed(text, value)
        wanted = (
            (index == 0 and op in FIRST_POSITIONAL)
            or (param.required and op in ALL_POSITIONAL)
            or (op == "arange" and param.name in ("start", "end"))  # arange(2, 9) as torch
        )
        if positional and wanted and not param.keyword_only:
            out.append(text)
        else:
            positional = False
            if variadic and isinstance(value, tuple):
                text = _bracketed(text, value)
            out.append(f"{param.name}={text}")
    tie = args.get("tie")
    if isinstance(tie, str):  # a layer path, written bare: tie=transformer.wte
        out.append(f"tie={tie}")
    return out


# -- statements --------------------------------------------------------------------------------


@record
class Part:
    step: Step
    suffixes: list[str] = field(default_factory=list)
    op_index: int = 0  # in a named chain


@record
class Statement:
    kind: str  # "chain", "graph", "named", "unpack", "loop"
    inputs: tuple[str, ...]  # values read
    output: str  # value produced ("unpack": the first piece)
    parts: list[Part] = field(default_factory=list)
    outputs: tuple[str, ...] = ()  # "unpack": every piece
    source: str = ""  # "chain"/"named": the value the chain starts from
    chain: Step | None = None  # "named": the chain step (its name and parameter expressions)


def _is_activation(step: Step) -> bool:
    if step.kind != "op" or step.op is None or step.name is not None:
        return False
    spec = CATALOG.get(step.op.op)
    return bool(spec is not None and spec.is_activation and len(step.op.inputs) == 1)


NOT_CHAIN_STEPS = frozenset({"add", "concat", "multihead_attention", "lstm", "gru", "parameter"})


def _chainable(step: Step) -> bool:
    """A step that can follow ``->``: one input, one result."""
    if step.kind == "call":
        return len(step.inputs) == 1 and step.loop_from is None
    if step.kind != "op" or step.op is None:
        return False
    op = step.op
    return op.group is None and len(op.inputs) == 1 and op.op not in NOT_CHAIN_STEPS


def _part_input(statement: Statement, part_index: int) -> str | None:
    """The value a part of a chain (or a graph statement) reads."""
    if statement.kind == "graph":
        return statement.inputs[0] if len(statement.inputs) == 1 else None
    if part_index == 0:
        return statement.source
    return statement.parts[part_index - 1].step.output


def schedule(steps: list[Step], block_inputs: Collection[str]) -> list[Step]:
    """The steps in an order that keeps each value's only reader right after it (so that
    chains form: ``q = x -> dense(...) as q_proj -> reshape(...) -> rotary_embedding()``),
    else in execution order; split/chunk pieces stay together."""
    produced = {s.output for s in steps} | {v for s in steps for v in s.outputs}
    readers: dict[str, list[Step]] = {}
    for step in steps:
        for name in step.inputs:
            readers.setdefault(name, []).append(step)
    done = set(block_inputs)
    remaining = list(steps)
    order: list[Step] = []

    def ready(step: Step) -> bool:
        return all(name in done or name not in produced for name in step.inputs)

    def take(step: Step) -> None:
        unit = [step]
        if step.op is not None and step.op.group is not None:
            unit = [s for s in remaining if s.op is not None and s.op.group == step.op.group]
        for item in unit:
            remaining.remove(item)
            order.append(item)
            done.add(item.output)
            done.update(item.outputs)

    while remaining:
        last = order[-1] if order else None
        choice = None
        if last is not None and len(readers.get(last.output, [])) == 1:
            reader = readers[last.output][0]
            if reader in remaining and ready(reader):
                choice = reader
        if choice is None:
            choice = next((s for s in remaining if ready(s)), remaining[0])
        take(choice)
    return order


def statements(block: BlockDef) -> list[Statement]:
    """The body's steps grouped into statements (chains, suffixes, graph statements)."""
    uses: dict[str, int] = {}
    for step in block.steps:
        for name in step.inputs:
            uses[name] = uses.get(name, 0) + 1
    for value in _returned(block):
        uses[value] = uses.get(value, 0) + 1
    out: list[Statement] = []
    steps = schedule(block.steps, block.inputs or (block.input,))
    index = 0
    while index < len(steps):
        step = steps[index]
        if step.op is not None and step.op.group is not None:  # split/chunk pieces
            group = [s for s in steps[index:] if s.op is not None and s.op.group == step.op.group]
            if step.op.pieces == len(group) and steps[index : index + len(group)] == group:
                outputs = tuple(s.output for s in group)
                parts = [Part(s) for s in group]
                out.append(Statement("unpack", step.inputs, group[0].output, parts, outputs))
                index += len(group)
                continue
            out.append(Statement("graph", step.inputs, step.output, [Part(step)]))
            index += 1
            continue
        if step.kind == "call" and step.outputs:  # a block returning several: a, b = B(x)
            out.append(Statement("unpack", step.inputs, step.output, [Part(step)], step.outputs))
            index += 1
            continue
        if step.loop_from is not None:  # for i in range(n): x -> B() as layer{i + 1}
            out.append(
                Statement("loop", step.inputs, step.output, [Part(step)], source=step.inputs[0])
            )
            index += 1
            continue
        last = out[-1] if out else None
        stands_alone = last is not None and last.kind in ("unpack", "loop")
        if last is not None and not stands_alone and uses.get(last.output) == 1:
            follows = step.inputs == (last.output,)
            if follows and last.kind != "named" and _is_activation(step):
                last.parts[-1].suffixes.append(_activation_suffix(step))
                last.output = step.output
                index += 1
                continue
            if _is_residual(step, last):
                last.parts[-1].suffixes.append(".residual")
                last.output = step.output
                index += 1
                continue
            if follows and last.kind == "chain" and _chainable(step):
                last.parts.append(Part(step))
                last.output = step.output
                index += 1
                continue
        if step.kind == "chain":
            parts = _fold_chain_suffixes(
                [Part(s, op_index=i) for i, s in enumerate(_chain_steps(step))]
            )
            source = step.inputs[0]
            out.append(
                Statement("named", step.inputs, step.output, parts, source=source, chain=step)
            )
        elif _chainable(step):
            out.append(
                Statement("chain", step.inputs, step.output, [Part(step)], source=step.inputs[0])
            )
        else:
            out.append(Statement("graph", step.inputs, step.output, [Part(step)]))
        index += 1
    return out


def _activation_suffix(step: Step) -> str:
    assert step.op is not None
    args = op_arguments(step.op.op, step.op.args, {})
    return f".{step.op.op}" + (f"({', '.join(args)})" if args else "")


def _is_residual(step: Step, last: Statement) -> bool:
    if step.kind != "op" or step.op is None or step.op.op != "add" or step.op.args:
        return False
    if len(step.inputs) != 2 or last.output not in step.inputs:
        return False
    other = step.inputs[1] if step.inputs[0] == last.output else step.inputs[0]
    part = last.parts[-1]
    if any(s == ".residual" for s in part.suffixes):
        return False
    if last.kind == "named":
        return False
    read = _part_input(last, len(last.parts) - 1)
    return read == other and read is not None


def _chain_steps(step: Step) -> list[Step]:
    return [Step("op", op.inputs, op.id, op=op) for op in step.ops]


def _fold_chain_suffixes(parts: list[Part]) -> list[Part]:
    folded: list[Part] = []
    for part in parts:
        if folded and _is_activation(part.step):
            folded[-1].suffixes.append(_activation_suffix(part.step))
            continue
        folded.append(part)
    return folded


# -- names -------------------------------------------------------------------------------------


def _returned(block: BlockDef) -> tuple[str, ...]:
    return block.outputs or (block.output,)


class Namer:
    def __init__(self, block: BlockDef, input_names: Mapping[str, str]) -> None:
        self.reserved = {p.name for p in block.params} | set(CATALOG) | {"input", "return"}
        self.reserved |= set(input_names.values())
        self.names: dict[str, str] = dict(input_names)
        self.index: str | None = None  # the loops' index, one name for every loop

    def loop_index(self, names: Mapping[str, str]) -> str:
        """``i`` (or ``j``, ...), no parameter's or tensor's name, kept from then on."""
        if self.index is None:
            taken = self.reserved | set(names.values())
            self.index = next(n for n in ("i", "j", "k", "n", "m") if n not in taken)
            self.reserved.add(self.index)
        return self.index

    def fresh(self, hint: str, live: set[str]) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint).strip("_") or "h"
        if base[0].isdigit() or keyword.iskeyword(base) or base in self.reserved:
            base = "h"
        candidate, number = base, 2
        while candidate in live or candidate in self.reserved:
            candidate = f"{base}{number}"
            number += 1
        return candidate


def _hint(statement: Statement) -> str:
    """A name for a statement's result: a learned tensor's owner (``position_embeddings``
    for ``position_embeddings.weight``), a projection's layer (``query``, ``gate_proj``),
    else ``h``."""
    if statement.kind == "named" or not statement.parts:
        return "h"
    step = statement.parts[-1].step
    if step.kind == "op" and step.op is not None and step.op.op == "parameter" and step.name:
        parts = step.name.split(".")
        if len(parts) > 1 and parts[-1] in ("weight", "bias"):
            return parts[-2]
        return parts[-1]
    first = statement.parts[0].step
    if first.kind == "op" and first.op is not None and first.op.op == "dense" and first.name:
        word = first.name.split(".")[-1]
        if not word.isdigit():
            return word.removesuffix("_proj") or word
    return "h"


# projections worth their own name even where the input's name could be reused
_PROJECTIONS = re.compile(r"(^|_)(q|k|v|query|key|value|gate|up)$")


def render_block(block: BlockDef, program: Program, *, top: bool) -> list[str]:
    header = f"model {block.name}"
    if block.params:
        params = [
            p.name if not p.has_default else f"{p.name}={literal(p.default)}" for p in block.params
        ]
        header += f"({', '.join(params)})"
    lines = [header + ":"]
    several = top and len(program.inputs) > 1
    if several:  # keyed by the forward's names, every dtype written (float32 included)
        shapes = ", ".join(f"{i.written}: {literal(tuple(i.shape))}" for i in program.inputs)
        dtypes = ", ".join(f"{i.written}: {i.dtype}" for i in program.inputs)
        lines.append(f"{INDENT}input_shape = {{{shapes}}}")
        lines.append(f"{INDENT}input_dtype = {{{dtypes}}}")
        input_names = {
            value: item.written for value, item in zip(block.inputs, program.inputs, strict=True)
        }
    elif top:
        shape = program.input_shape
        lines.append(f"{INDENT}input_shape = {literal(tuple(shape))}")
        if program.input_dtype != "float32":
            lines.append(f"{INDENT}input_dtype = {program.input_dtype}")
    if not several and block.inputs:  # a block of several inputs: x, y, z, x4, ...
        letters = ["x", "y", "z"]
        input_names = {
            value: letters[i] if i < len(letters) else f"x{i + 1}"
            for i, value in enumerate(block.inputs)
        }
    elif not several:
        input_names = {block.input: "ids" if program.input_dtype.startswith("int") and top else "x"}
    lines.append(f"{INDENT}def forward({', '.join(input_names.values())}):")
    output_names = dict(zip(block.outputs, program.output_names, strict=True)) if top else {}
    body = _render_body(block, input_names, output_names)
    lines += [INDENT * 2 + line if line else line for line in body]
    return lines


def output_name(name: str) -> str:
    """A module's output name (``last_hidden_state``, ``0``, ``a.1``) as a program name."""
    text = re.sub(r"[^0-9A-Za-z_]", "_", name).strip("_") or "output"
    if text[0].isdigit():
        text = f"output_{text}"
    if keyword.iskeyword(text) or text in CATALOG or text in ("input", "return"):
        text += "_"
    return text


def _render_body(
    block: BlockDef, input_names: Mapping[str, str], outputs: Mapping[str, str]
) -> list[str]:
    stmts = statements(block)
    namer = Namer(block, input_names)
    input_name = input_names[block.input]  # the first input: the one block sizes read
    out_names: dict[str, str] = {}  # several outputs: value -> the name it is returned as
    for value, name in outputs.items():
        if value not in out_names and value not in input_names:
            out_names[value] = namer.fresh(output_name(name), set(out_names.values()))
    namer.reserved |= set(out_names.values())
    returned = _returned(block)
    later: list[set[str]] = []
    for i in range(len(stmts)):
        reads: set[str] = set()
        for s in stmts[i + 1 :]:
            reads.update(s.inputs)
        later.append(reads)
    names = namer.names
    learned = {s.output for s in block.steps if s.op is not None and s.op.op == "parameter"}
    # the last statement whose sizes read the input's (``x.shape[1] // 2``, block_params)
    reads_input_shape = max(
        (
            i
            for i, s in enumerate(stmts)
            if any(_reads_shape(step, input_name) for step in _statement_steps(s))
        ),
        default=-1,
    )
    lines: list[str] = []
    for i, statement in enumerate(stmts):
        final = i == len(stmts) - 1
        for part in statement.parts:  # --partial: what stands in for a gap says so
            op = part.step.op
            if op is not None and op.origin.startswith(GAP_ORIGIN):
                lines.append(f"# {MARK} {op.origin}")

        def dead_after(value: str, i: int = i) -> bool:
            return value not in later[i] and value not in returned

        # a value returned at the end keeps its name too (a U-Net level's first skip)
        live = {names[v] for v in later[i] | set(returned) if v in names}
        if statement.kind == "unpack":
            called = statement.parts[0].step.kind == "call"
            count = len(statement.outputs)
            pieces = ["h"] * count if called else _piece_names(count)
            chosen: list[str] = []
            for piece, value in zip(pieces, statement.outputs, strict=True):
                name = out_names.get(value) or namer.fresh(piece, live | set(chosen))
                chosen.append(name)
            for value, name in zip(statement.outputs, chosen, strict=True):
                names[value] = name
            lines.append(f"{', '.join(chosen)} = {_graph_text(statement, names, block)}")
            continue
        if statement.kind in ("chain", "named", "loop"):
            source_value = statement.source
        else:  # the input whose name the result takes: a dead one, not a learned tensor
            dead = [v for v in statement.inputs if v in names and dead_after(v)]
            plain = [v for v in dead if v not in learned]
            source_value = (plain or dead or [""])[0]
        hint = _hint(statement)
        reuse = source_value in names and dead_after(source_value) and not _PROJECTIONS.search(hint)
        if reuse and names[source_value] == input_name and i < reads_input_shape:
            reuse = False  # a later statement reads x.shape: x keeps the block's input
        if source_value in block.inputs:  # one of several inputs keeps its name: h = ids -> ...
            reuse = False
        if statement.output in out_names:  # an output: bound to its name
            reuse = reuse and names[source_value] == out_names[statement.output]
        last = final and not block.outputs and statement.output == block.output
        if last and statement.kind == "graph":
            lines.append(f"return {_graph_text(statement, names, block)}")
            names[statement.output] = "<returned>"
            continue
        if reuse:
            target = names[source_value]
        elif statement.output in out_names:
            target = out_names[statement.output]
        else:
            target = namer.fresh(hint, live | {names.get(source_value, "")})
        names[statement.output] = target
        if statement.kind == "loop":
            if not reuse:  # the loop rebinds its own name: the input's is read again
                lines.append(f"{target} = {names[source_value]}")
            lines += _loop_text(statement.parts[0].step, target, namer.loop_index(names))
            if final and statement.output == block.output and not block.outputs:
                lines.append(f"return {target}")
            continue
        if statement.kind == "chain":
            text = _chain_text(statement, names, block)
            if reuse:
                lines.append(text)
            else:
                lines.append(f"{target} = {text}")
        elif statement.kind == "named":
            lines.append(f"{target} = {_named_text(statement, names, block)}")
        else:
            lines.append(f"{target} = {_graph_text(statement, names, block)}")
    if block.outputs:
        lines.append(f"return {', '.join(names[value] for value in block.outputs)}")
    elif not stmts or stmts[-1].output != block.output:  # (--partial: maybe the input itself)
        lines.append(f"return {names[block.output]}")
    return lines


def _statement_steps(statement: Statement) -> list[Step]:
    steps = [part.step for part in statement.parts]
    return steps + [statement.chain] if statement.chain is not None else steps


def _reads_shape(step: Step, input_name: str) -> bool:
    reads = re.compile(rf"(^|[^\w.]){re.escape(input_name)}\.shape")
    return any(reads.search(text) for text in step.exprs.values())


def _piece_names(count: int) -> list[str]:
    if count == 2:
        return ["a", "b"]
    if count == 3:
        return ["q", "k", "v"]
    return [f"p{i + 1}" for i in range(count)]


# -- texts -------------------------------------------------------------------------------------


def _exprs(step: Step, position: int = 0) -> dict[tuple[str, int], str]:
    return {(arg, sub): text for (pos, arg, sub), text in step.exprs.items() if pos == position}


def _call_text(
    part: Part,
    inputs: list[str],
    *,
    position: int = 0,
    chain_exprs: Mapping[tuple[str, int], str] | None = None,
) -> str:
    step = part.step
    if step.kind == "call":
        text = _block_call(step, inputs)
    else:
        assert step.op is not None
        exprs = dict(chain_exprs) if chain_exprs is not None else _exprs(step)
        args = op_arguments(step.op.op, step.op.args, exprs)
        inputs, named = _tensor_arguments(step.op.op, inputs)
        text = f"{step.op.op}({', '.join([*inputs, *args, *named])})"
    if step.kind == "call" and step.residual:  # the block's own trailing add, moved out
        text += ".residual"
    text += "".join(part.suffixes)
    if step.name is not None:
        text += f" as {step.name}"
    return text


def _tensor_arguments(op: str, inputs: list[str]) -> tuple[list[str], list[str]]:
    """The inputs beyond what ``op`` takes positionally are its tensor arguments, in the
    catalog's order: ``gather(table, dim=1, index=rows)``."""
    spec = lookup(op)
    if spec is None or spec.max_inputs is None or len(inputs) <= spec.max_inputs:
        return inputs, []
    names = [p.name for p in spec.params if p.kind is ArgKind.TENSOR]
    extra = inputs[spec.max_inputs :]
    assert len(extra) <= len(names), (op, inputs)
    return inputs[: spec.max_inputs], [f"{n}={v}" for n, v in zip(names, extra, strict=False)]


def _block_call(step: Step, inputs: list[str]) -> str:
    block = step.block
    assert block is not None
    args: list[str] = []
    for param in block.params:
        value = step.call.get(param.name)
        text = step.exprs.get((0, param.name, -1), literal(value))
        if param.has_default:
            if (0, param.name, -1) not in step.exprs and value == param.default:
                continue
            args.append(f"{param.name}={text}")
        else:
            args.append(text)
    call = f"{block.name}({', '.join(args)})"
    if step.repeat > 1 and step.loop_from is None:
        count = _count_text(step)
        if inputs:
            return f"repeat({inputs[0]}, {call}, {count})"
        return f"repeat({call}, {count})"
    if inputs:
        return f"{block.name}({', '.join([*inputs, *args])})"
    return call


def _count_text(step: Step) -> str:
    return step.exprs.get((0, COUNT, -1), str(step.repeat))


def _loop_text(step: Step, target: str, index_name: str) -> list[str]:
    """``for i in range(n):`` and the call, named by a template of the loop's index."""
    start = step.loop_from or 0
    number = f"{index_name} + {start}" if start else index_name
    one = replace(step, repeat=1, loop_from=None, name=f"{step.name}{{{number}}}")
    call = _call_text(Part(one), [])
    return [f"for {index_name} in range({_count_text(step)}):", f"{INDENT}{target} -> {call}"]


def _graph_text(statement: Statement, names: Mapping[str, str], block: BlockDef) -> str:
    part = statement.parts[0]
    step = part.step
    inputs = [names[v] for v in step.inputs]
    if statement.kind == "unpack" and step.kind == "call":
        return _call_text(part, inputs)
    if statement.kind == "unpack":
        assert step.op is not None
        args = {k: v for k, v in step.op.args.items() if k != "index"}
        texts = op_arguments(step.op.op, args, _exprs(step))
        return f"{step.op.op}({', '.join([*inputs, *texts])})"
    return _call_text(part, inputs)


def _chain_text(statement: Statement, names: Mapping[str, str], block: BlockDef) -> str:
    pieces = [names[statement.source]]
    for part in statement.parts:
        pieces.append(_call_text(part, []))
    return " -> ".join(pieces)


def _named_text(statement: Statement, names: Mapping[str, str], block: BlockDef) -> str:
    source_step = statement.chain
    assert source_step is not None
    pieces = [names[statement.source]]
    for part in statement.parts:
        exprs = {
            (arg, sub): text
            for (pos, arg, sub), text in source_step.exprs.items()
            if pos == part.op_index
        }
        named = Part(Step("op", part.step.inputs, part.step.output, op=part.step.op), part.suffixes)
        pieces.append(_call_text(named, [], chain_exprs=exprs))
    return f"({' -> '.join(pieces)}) as {source_step.name}"


MARK = "TODO(aurane import):"  # marks the parts --partial could not express


def render(program: Program, header: list[str] | None = None) -> str:
    lines: list[str] = list(header or [])
    if program.gaps_text:
        lines.append(f"# {MARK} these parts could not be expressed; identity() stands in")
        lines.append("# for those that keep their input's shape, the rest are missing:")
        lines += [f"#   {text}" for text in program.gaps_text]
    lines.append("use torch")
    lines.append("")
    for block in program.blocks:
        lines.append("")
        if block.comment:
            lines.append(f"# {block.comment}")
        lines += render_block(block, program, top=False)
    lines.append("")
    lines += render_block(program.top, program, top=True)
    return "\n".join(lines).rstrip() + "\n"

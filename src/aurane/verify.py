"""``aurane verify``: the compiler's static claims checked against what torch observes.

Each selected model's generated class is built on the ``meta`` device (no real weights)
and run on inputs of the declared shape and dtype (batch 2). A trace of every generated
``forward`` (``sys.settrace``, lines mapped to IR nodes by ``aurane.sourcemap``) reads
the local each statement binds, so every IR value's shape and dtype is compared with the
tensor torch produced, and every node that owns a submodule has that submodule's
parameter count compared with the IR's. A difference is a compiler bug, reported as a
located diagnostic at the ``.aur`` span that produced the value. Ops without a meta
kernel fall back to a real CPU run (reported as ``device: cpu``).
"""

from __future__ import annotations

import re
import sys
import time
import types
from collections.abc import Callable, Mapping
from typing import Any

from aurane.codes import diag
from aurane.diagnostics import Diagnostic
from aurane.ir.contracts import unknown_input_needs
from aurane.ir.graph import BATCH, Graph, Node, Value
from aurane.records import field, record
from aurane.semantics.sizes import evaluate, example_sizes
from aurane.sourcemap import ClassMap, Statement, class_maps, layer_path

BATCH_SIZE = 2
BUG_HINT = "this is a compiler bug, not a mistake in your program; please report it with the file"


@record
class ModelReport:
    name: str
    class_name: str
    device: str = "meta"
    values_checked: int = 0
    values_expected: int = 0  # IR values of every invocation: blocks and repeat copies included
    parameters_checked: int = 0
    unmapped_classes: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    seconds: float = 0.0
    checkpoint: str | None = None  # the trained weights checked (aurane verify --checkpoint)
    weights_entry: str | None = None  # the checkpoint entry they came from

    @property
    def ok(self) -> bool:
        return not self.diagnostics

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "class": self.class_name,
            "ok": self.ok,
            "device": self.device,
            "values_checked": self.values_checked,
            "values_expected": self.values_expected,
            "parameters_checked": self.parameters_checked,
            "unmapped_classes": self.unmapped_classes,
            "seconds": round(self.seconds, 4),
            "checkpoint": self.checkpoint,
            "weights_entry": self.weights_entry,
            "diagnostics": [_diag_json(d) for d in self.diagnostics],
        }


def _diag_json(d: Diagnostic) -> dict[str, Any]:
    return {
        "severity": d.severity,
        "code": d.code,
        "stage": d.stage,
        "message": d.message,
        "hint": d.hint,
        "span": d.span.to_json() if d.span else None,
    }


@record
class Generated:
    """A compiled program loaded in-process: graphs, class names, maps, the module."""

    graphs: dict[str, Graph]
    class_names: dict[str, str]
    class_graphs: dict[str, Graph]
    maps: dict[str, ClassMap]
    module: types.ModuleType
    code: str


def load_generated(text: str, filename: str) -> Generated:
    """Compile ``text`` (raising ``CompilationError``) and execute the generated module."""
    from aurane.backends.torch import TorchCodeGenerator
    from aurane.compile import prepare_program

    program, graphs, _ = prepare_program(text, filename=filename)
    generator = TorchCodeGenerator(program, graphs, filename=filename)
    code = generator.generate()
    plans = [(p.name, p.graph) for p in generator.plans()]
    module = types.ModuleType("aurane_generated")
    module.__dict__["__file__"] = f"<aurane:{filename}>"
    exec(compile(code, f"<aurane:{filename}>", "exec"), module.__dict__)
    return Generated(
        dict(graphs),
        dict(generator.class_names),
        dict(plans),
        class_maps(code, [p for p in plans if p[0] not in generator.rolled_blocks]),
        module,
        code,
    )


def sample_input(
    graph: Graph, device: str, batch: int = BATCH_SIZE, sizes: Mapping[str, int] | None = None
) -> Any:
    """A tensor of the model's declared input shape and dtype (when unknown: what its first
    layers need, else float32); a
    symbolic size (``seq = dim(...)``) takes its value from ``sizes`` (default: an example
    inside its declared range)."""
    return _sample(graph, graph.input_value, device, batch, sizes)


def sample_inputs(
    graph: Graph, device: str, batch: int = BATCH_SIZE, sizes: Mapping[str, int] | None = None
) -> tuple[Any, ...]:
    """One sample tensor per input of ``graph`` (issue 23: several inputs), in order; the
    symbolic sizes they share take one value."""
    if sizes is None:
        sizes = input_sizes(graph)
    return tuple(_sample(graph, value, device, batch, sizes) for value in graph.inputs)


def input_sizes(graph: Graph, index: int = 0) -> dict[str, int]:
    """An example value for every symbolic size of every input (shared by name)."""
    return example_sizes(tuple(value.shape or () for value in graph.inputs), index)


def _sample(
    graph: Graph, value: Value, device: str, batch: int, sizes: Mapping[str, int] | None
) -> Any:
    import torch

    declared = value.shape or (BATCH,)
    declared = evaluate(declared, sizes if sizes is not None else example_sizes(declared))
    shape = (batch, *(d if isinstance(d, int) else 1 for d in declared[1:]))
    first = value.name == graph.input
    needs = unknown_input_needs(graph) if value.dtype is None and first else None
    # an unknown input dtype: what the first layers need (token ids for an embedding)
    dtype_name = value.dtype or (needs[0] if needs is not None else "float32")
    dtype = getattr(torch, dtype_name)
    if dtype_name == "bool":
        return torch.zeros(shape, dtype=dtype, device=device)
    if not dtype.is_floating_point:
        return torch.randint(0, max(1, _vocabulary(graph)), shape, dtype=dtype, device=device)
    return torch.randn(shape, dtype=dtype, device=device)


def _vocabulary(graph: Graph) -> int:
    sizes = [n.args["vocabulary"] for n in _all_nodes(graph) if n.op == "embedding"]
    return min(sizes, default=2)


def ir_values(graph: Graph) -> int:
    """How many IR values one forward of ``graph`` produces, blocks and copies included."""
    total = len(graph.inputs) + len(graph.nodes) + sum(len(n.outputs[1:]) for n in graph.nodes)
    for node in graph.nodes:
        if node.subgraph is not None:
            total += node.repeat * ir_values(node.subgraph)
    return total


def _all_nodes(graph: Graph) -> list[Node]:
    out = []
    for node in graph.nodes:
        out.append(node)
        if node.subgraph is not None:
            out += _all_nodes(node.subgraph)
    return out


# -- tracing --------------------------------------------------------------------------------


@record
class _Call:
    cmap: ClassMap | None  # None: a generated class the aligner could not map
    graph: Graph | None  # the graph of this call site (shapes differ between call sites)
    pending: Statement | None = None
    claimed: set[int] = field(default_factory=set)  # parameter ids counted (ties count once)
    children: list[Any] = field(default_factory=list)  # a whole-container statement's layers
    outputs: dict[int, Any] = field(default_factory=dict)  # child index -> its output
    hooks: list[Any] = field(default_factory=list)
    current: int = 0  # the container layer running now (its node calls nested blocks)

    def node(self, planned: Node) -> Node | None:
        """This call site's node for a node of the class's planned graph (same id), or for
        one the class named after the operation-valued parameter that applies it (``act2``:
        the parameter's second node at this call, ``param_blocks._operation_ids``). A block
        call through a model-valued parameter has the same id in both: the IR names it
        after the parameter (``block1``)."""
        if self.graph is None:
            return None
        found = next((n for n in self.graph.nodes if n.id == planned.id), None)
        named = re.fullmatch(r"(\w*?)(\d+)_*", planned.id)
        if found is not None or named is None:
            return found
        param, index = named.group(1), int(named.group(2))
        given = self.graph.block_ops.get(param)
        if given is None or not 1 <= index <= len(given.nodes):
            return None
        return next((n for n in self.graph.nodes if n.id == given.nodes[index - 1]), None)


class _Tracer:
    """Records, per traced forward statement, the shapes/dtypes of the locals it bound.

    Each generated class is planned from one call site, but a class serves every call with
    the same signature; each invocation is therefore checked against the graph of the
    call site that made it: the block node of the caller's executing statement.
    """

    def __init__(
        self,
        gen: Generated,
        report: ModelReport,
        top: Graph,
        sizes: Mapping[str, int],
        batch: int = BATCH_SIZE,
    ) -> None:
        self.report = report
        self.top = top
        self.sizes = sizes  # the symbolic sizes of this run
        self.batch = batch
        self.by_code: dict[Any, ClassMap | None] = {}
        self.stack: list[_Call] = []
        self.checked_params: set[tuple[int, str]] = set()
        self.failure: tuple[Node, BaseException] | None = None
        # the top model's class last: variants of a rolled network share its forward
        for name in sorted(gen.class_graphs, key=lambda n: gen.class_graphs[n] is top):
            forward = getattr(getattr(gen.module, name, None), "forward", None)
            if forward is not None:
                self.by_code[forward.__code__] = gen.maps.get(name)
            if name not in gen.maps:
                report.unmapped_classes.append(name)

    def _call_graph(self, cmap: ClassMap | None) -> Graph | None:
        if not self.stack:
            return self.top
        parent = self.stack[-1]
        if cmap is None or parent.pending is None:
            return None
        planned = parent.pending.nodes
        node = parent.node(planned[parent.current if parent.pending.run else 0])
        sub = node.subgraph if node is not None else None
        return sub if sub is not None and sub.name == cmap.graph.name else None

    def global_trace(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if frame.f_code not in self.by_code:
            return None
        cmap = self.by_code[frame.f_code]
        call = _Call(cmap, self._call_graph(cmap))
        self.stack.append(call)
        if call.graph is not None:
            names = frame.f_code.co_varnames[1 : 1 + len(call.graph.inputs)]
            for value, name in zip(call.graph.inputs, names, strict=False):
                self._check_value(value, frame.f_locals.get(name))

        def local(frame: types.FrameType, event: str, arg: Any) -> Any:
            if event == "line" and cmap is not None:
                line = frame.f_lineno
                if call.pending is not None and call.pending.first <= line <= call.pending.last:
                    return local
                self._flush(call, frame)
                call.pending = cmap.statement_at(line)
                if call.pending is not None and call.pending.run is not None:
                    self._hook_children(call, call.pending, frame.f_locals.get("self"))
            elif event == "return":
                self._flush(call, frame)
                if self.stack and self.stack[-1] is call:
                    self.stack.pop()
            elif event == "exception" and call.pending is not None:
                if self.failure is None:
                    planned = call.pending.nodes[0]
                    self.failure = (call.node(planned) or planned, arg[1])
                # the statement never completed: its targets still hold earlier values
                # (or none), which are not the values it computes
                for hook in call.hooks:
                    hook.remove()
                call.pending, call.children, call.outputs, call.hooks = None, [], {}, []
            return local

        return local

    def _hook_children(self, call: _Call, stmt: Statement, owner: Any) -> None:
        """Forward hooks on each layer of a container applied whole: its outputs are the
        values of the nodes the statement covers (no local holds them). The layers are
        found by their paths, so a nested container (``features.1.0``) is hooked at its
        leaves, in the nodes' order."""
        if owner is None:
            return
        children = [_resolve(owner, node.layer or "") for node in stmt.nodes]
        if any(child is None for child in children):
            return
        for index, child in enumerate(children):

            def enter(_m: Any, _a: Any, index: int = index) -> None:
                call.current = index

            def record(_m: Any, _a: Any, out: Any, index: int = index) -> None:
                call.outputs[index] = out

            call.children.append(child)
            call.hooks.append(child.register_forward_pre_hook(enter))
            call.hooks.append(child.register_forward_hook(record))

    def _flush_run(self, call: _Call, stmt: Statement) -> None:
        for hook in call.hooks:
            hook.remove()
        values = call.graph.value_map if call.graph is not None else {}
        for index, planned in enumerate(stmt.nodes):
            node = call.node(planned)
            if node is None or index >= len(call.children):
                continue
            if index in call.outputs:
                self._check_value(values[node.output], call.outputs[index], node)
            self._count(call, node, call.children[index], f"{stmt.run}.{index}")
        call.children, call.outputs, call.hooks, call.current = [], {}, [], 0

    def _flush(self, call: _Call, frame: types.FrameType) -> None:
        stmt = call.pending
        call.pending = None
        if stmt is not None and stmt.run is not None:
            self._flush_run(call, stmt)
            return
        if stmt is None or call.graph is None:
            return
        local_vars = frame.f_locals
        values = call.graph.value_map
        several = len(stmt.nodes) == 1 and len(stmt.nodes[0].outputs) > 1
        pairs = (
            [
                (target, stmt.nodes[0], output)
                for target, output in zip(stmt.targets, stmt.nodes[0].outputs, strict=False)
            ]
            if several
            else [
                (target, planned, planned.output)
                for target, planned in zip(stmt.targets, stmt.nodes, strict=False)
            ]
        )
        for target, planned, output in pairs:
            node = call.node(planned)
            if node is not None and target in local_vars:
                name = output if several else node.output
                self._check_value(values[name], local_vars[target], node)
        if stmt.attribute is not None and len(stmt.nodes) == 1:
            self._check_parameters(call, stmt, local_vars.get("self"))

    def _check_value(
        self, value: Value, observed: Any, node: Node | None = None, count: bool = True
    ) -> None:
        import torch

        if value.shape is None or not isinstance(observed, torch.Tensor):
            return
        self.report.values_checked += count
        shape = evaluate(value.shape, self.sizes)
        expected = tuple(self.batch if d == BATCH else d for d in shape)
        actual = tuple(observed.shape)
        what = f"'{node.id}'" if node is not None else "the input"
        if len(actual) != len(expected) or any(
            isinstance(e, int) and e != a for e, a in zip(expected, actual, strict=False)
        ):
            self._add(
                "T110",
                f"compiler bug: {what} has shape {_shape(actual)} at run time, "
                f"but the compiler inferred {_shape(value.shape)}",
                value,
            )
        if value.dtype is not None and str(observed.dtype) != f"torch.{value.dtype}":
            self._add(
                "T111",
                f"compiler bug: {what} has dtype {str(observed.dtype).removeprefix('torch.')} "
                f"at run time, but the compiler inferred {value.dtype}",
                value,
            )

    def _check_parameters(self, call: _Call, stmt: Statement, owner: Any) -> None:
        node = call.node(stmt.nodes[0])
        if node is None or owner is None:
            return
        for path in stmt.attributes:
            target = _resolve(owner, path)
            if _parameters(target) or _is_module(target):
                self._count(call, node, target, path)
                return

    def _count(self, call: _Call, node: Node, target: Any, path: str) -> None:
        key = (id(call.graph), node.id)
        if key in self.checked_params:
            return
        self.checked_params.add(key)
        params = _parameters(target)
        fresh = [p for p in params if id(p) not in call.claimed]
        call.claimed.update(id(p) for p in params)
        count = sum(p.numel() for p in fresh)
        self.report.parameters_checked += 1
        if count != node.parameters:
            self._add(
                "T112",
                f"compiler bug: '{node.id}' has {count:,} parameters at run time "
                f"(self.{path}), but the compiler counted {node.parameters:,}",
                node,
            )

    def _add(self, code: str, message: str, where: Value | Node) -> None:
        self.report.diagnostics.append(diag(code, message, where.span, hint=BUG_HINT))


def _first_arg(frame: types.FrameType) -> str:
    names = frame.f_code.co_varnames
    return names[1] if len(names) > 1 else ""


def _resolve(owner: Any, path: str) -> Any:
    """The object ``self.<path>`` names (``block[0].fc1`` or ``block.0.fc1``), or None."""
    current = owner
    for part in layer_path(path).split("."):
        try:
            current = getattr(current, part)
        except (AttributeError, TypeError):
            return None
    return current


def _is_module(target: Any) -> bool:
    import torch

    return isinstance(target, torch.nn.Module)


def _parameters(target: Any) -> list[Any]:
    import torch

    if isinstance(target, torch.nn.Parameter):
        return [target]
    if isinstance(target, torch.nn.Module):
        return list(target.parameters())
    return []


def _shape(shape: Any) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# -- running a model ------------------------------------------------------------------------


def verify_model(
    gen: Generated,
    name: str,
    sizes: Mapping[str, int] | None = None,
    checkpoint: str | None = None,
    *,
    device: str | None = None,
    train: bool = False,
    batch: int = BATCH_SIZE,
    seed: int = 0,
) -> ModelReport:
    """Build the model ``name``, run it traced and compare.

    By default the model is built without real weights (``meta``, falling back to a CPU
    run for ops without a meta kernel) and run in eval mode without gradients; ``device``
    names the device to use instead, and ``train`` runs it in training mode with gradients
    and then a backward pass from its output. ``batch`` is the batch size of the input.
    Symbolic sizes run at ``sizes`` (default: an example inside each declared range); every
    formula of the IR is evaluated there and compared with torch's shapes. With
    ``checkpoint`` (a file) the model runs on the CPU with the weights a training checkpoint
    holds for it (``aurane.trained.load_trained``: CheckpointRefused when it holds none).
    """
    graph = gen.graphs[name]
    if sizes is None:
        sizes = input_sizes(graph)
    report = ModelReport(name, gen.class_names[name], values_expected=ir_values(graph))
    report.checkpoint = checkpoint
    started = time.perf_counter()
    cls = getattr(gen.module, report.class_name)
    if device is not None:
        devices: tuple[str, ...] = (device,)
    else:
        devices = ("cpu",) if checkpoint is not None else ("meta", "cpu")
    for where in devices:
        report.device = where
        report.diagnostics.clear()
        report.values_checked = report.parameters_checked = 0
        report.unmapped_classes.clear()
        run = _Run(where, train, batch, seed)
        error = _run(gen, graph, cls, run, report, sizes)
        if error is None or where == "cpu" or not _meta_unsupported(error):
            break
    report.seconds = time.perf_counter() - started
    return report


@record(frozen=True)
class _Run:
    device: str
    train: bool
    batch: int
    seed: int


def _run(
    gen: Generated,
    graph: Graph,
    cls: Callable[[], Any],
    run: _Run,
    report: ModelReport,
    sizes: Mapping[str, int],
) -> BaseException | None:
    import torch

    from aurane.trained import load_trained

    device = run.device
    tracer = _Tracer(gen, report, graph, sizes, run.batch)
    try:
        torch.manual_seed(run.seed)
        with torch.device(device):
            net = cls()
        net.train(run.train)
        xs = sample_inputs(graph, device, run.batch, sizes=sizes)
        for x in xs:
            if run.train and x.is_floating_point():
                x.requires_grad_(True)
    except Exception as error:  # constructing the module failed: a compiler bug too
        report.diagnostics.append(
            diag("T113", f"compiler bug: building {report.class_name} failed: {error}",
                 graph.span, hint=BUG_HINT)
        )  # fmt: skip
        return error
    if report.checkpoint is not None:  # a refusal is the input's problem: raised, not a T113
        report.weights_entry = load_trained(net, report.name, report.checkpoint)
        net.train(run.train)
    previous = sys.gettrace()
    sys.settrace(tracer.global_trace)
    try:
        with torch.set_grad_enabled(run.train):
            out = net(*xs)
    except Exception as error:
        sys.settrace(previous)
        if not (device == "meta" and _meta_unsupported(error)):
            span = tracer.failure[0].span if tracer.failure else graph.span
            report.diagnostics.append(
                diag(
                    "T113",
                    f"compiler bug: the generated forward of {report.class_name} raised "
                    f"{type(error).__name__}: {error}",
                    span,
                    hint=BUG_HINT,
                )
            )
        return error
    finally:
        sys.settrace(previous)
    returned = out if graph.output_names else (out,)  # several outputs: a tuple
    if len(returned) != len(graph.outputs):
        report.diagnostics.append(
            diag("T113", f"compiler bug: {report.class_name} returned {len(returned)} values, "
                 f"the IR has {len(graph.outputs)} outputs", graph.span, hint=BUG_HINT)
        )  # fmt: skip
        return None
    for value, observed in zip(graph.outputs, returned, strict=True):
        producer = next((n for n in graph.nodes if value.name in (n.output, *n.outputs)), None)
        tracer._check_value(value, observed, producer, count=False)  # returned
    grads = [o for o in returned if isinstance(o, torch.Tensor) and o.requires_grad]
    if run.train and grads:
        try:
            sum(o.float().sum() for o in grads).backward()  # type: ignore[union-attr]
        except Exception as error:
            report.diagnostics.append(
                diag("T113", f"compiler bug: the backward pass of {report.class_name} raised "
                     f"{type(error).__name__}: {error}", graph.span, hint=BUG_HINT)
            )  # fmt: skip
            return error
    total = sum(p.numel() for p in net.parameters())
    if total != graph.parameters:
        report.diagnostics.append(
            diag(
                "T112",
                f"compiler bug: {report.class_name} has {total:,} parameters at run time, "
                f"but the compiler counted {graph.parameters:,}",
                graph.span,
                hint=BUG_HINT,
            )
        )
    report.parameters_checked += 1
    return None


def _producer(graph: Graph) -> Node | None:
    return next((n for n in graph.nodes if n.output == graph.output), None)


def _meta_unsupported(error: BaseException) -> bool:
    text = str(error).lower()
    return isinstance(error, NotImplementedError) or "meta" in text


def verify_text(text: str, filename: str, model: str | None = None) -> list[ModelReport]:
    """Reports for ``model`` or every model with an input shape (raises CompilationError)."""
    gen = load_generated(text, filename)
    names = [model] if model is not None else list(gen.graphs)
    return [verify_model(gen, name) for name in names]

"""The lowerer's state and its operation step, shared by ``lower.py`` and its helpers.

``Lowering`` holds what lowering one program keeps (the program, the semantic pass's
argument bindings, the diagnostics, the block cache) and applies one catalog operation to
values of the graph being built (``apply``: infer the output type, count the parameters and
add the node, or report the operation's error with where each input came from).
``lower.py``'s ``_Lowerer`` walks models, expressions and block calls on top of it;
``blocks.py`` (parameterised blocks) and ``layers.py`` (layer names) take a ``Lowering``,
so neither imports ``lower.py``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ir.builder import GraphBuilder, ModelInfo
from aurane.ir.graph import BATCH, BATCH_SIZE, Graph, Node, Value
from aurane.ops.rules import check_int64
from aurane.ops.rules import fmt_shape as shape_text
from aurane.ops.spec import BoundArgs, InferContext, OpError, OpSpec, TensorType
from aurane.records import replace
from aurane.semantics.sizes import ConcreteSizeNeeded, UndecidedSize, free_symbols
from aurane.source import Span
from aurane.syntax import ast


class Lowering(ABC):
    def __init__(
        self,
        program: ast.AuraneProgram,
        skip: set[str],
        bound: dict[int, BoundArgs],
        sizes: Mapping[str, int] | None = None,
    ) -> None:
        self.program = program
        self.sizes = dict(sizes or {})  # symbolic sizes bound to numbers (profile --at)
        self.bound = bound
        self.models = {m.name: m for m in program.models}
        self.skip = skip
        self.diagnostics: list[Diagnostic] = []
        self.block_cache: dict[tuple[object, ...], Graph | None] = {}
        # the blocks being lowered, outermost first: a block-valued argument can make a
        # cycle (``A(A)``) or a nesting the semantic pass cannot see
        self.lowering: list[str] = []
        self.instances: list[ast.Model] = []  # block instances stay alive: bound is by id
        # parameterless blocks lowered per call all the same (one class for their calls at
        # several input shapes, issue 24 item 3: code generation asks for it)
        self.per_call_blocks: frozenset[str] = frozenset()

    @abstractmethod
    def lower_model(
        self,
        model: ast.Model,
        info: ModelInfo,
        input_type: TensorType,
        input_span: Span,
        graph_name: str,
        input_origin: str | None = None,
        more_inputs: tuple[tuple[TensorType, Span], ...] = (),
        callees: Mapping[tuple[int, int], str] | None = None,
    ) -> Graph | None:
        """The graph of ``model``'s forward at ``input_type`` (``lower.py``); ``more_inputs``
        the types of the inputs after the first (a forward with several); ``callees`` the
        block calls named after the model-valued parameter they call (``GraphBuilder``)."""

    # -------------------------------------------------------------- operations

    def stamp_origin(self, b: GraphBuilder, first: int, origin: tuple[ast.Origin, ...]) -> None:
        """The nodes from index ``first`` came from an unrolled iteration or chosen branch."""
        if not origin:
            return
        for index in range(first, len(b.nodes)):
            node = replace(b.nodes[index], origin=origin)
            b.nodes[index] = node
            b.producers[node.output] = node

    def input_types(self, b: GraphBuilder, names: list[str]) -> list[TensorType] | None:
        types: list[TensorType] = []
        for name in names:
            value = b.value(name)
            if value.sample_shape is None:
                return None
            types.append(TensorType(value.sample_shape, value.dtype))
        return types

    def apply(
        self,
        b: GraphBuilder,
        spec: OpSpec,
        bound: BoundArgs,
        inputs: list[str],
        span: Span,
        *,
        suffix_of: str | None = None,
        stem: str | None = None,
        what: str | None = None,
    ) -> str | None:
        types = self.input_types(b, inputs)
        if types is None:
            return None
        ctx = InferContext.of_node(bound, tuple(types), b.param_dtype, BATCH_SIZE)
        try:
            out = spec.infer(ctx)
            parameters = spec.parameters(ctx, out)
            check_int64(spec.name, out, parameters)
            if not isinstance(parameters, int):  # a SizeExpr: weights sized by a symbol
                raise ConcreteSizeNeeded(f"its parameter count would be {parameters}")
        except ConcreteSizeNeeded as needed:
            problem = (
                "does not hold for every size in the declared range"
                if isinstance(needed, UndecidedSize)
                else "needs a concrete size here"
            )
            error = OpError(
                "T114",
                f"{spec.name} {problem}: {needed}",
                hint="make that axis a number in input_shape, or narrow the dim(min, max) range",
            )
            self.report(b, error, bound, inputs, span, what or spec.name)
            return None
        except OverflowError:
            error = OpError("T090", f"{spec.name} computes a size too large for torch (int64)")
            self.report(b, error, bound, inputs, span, what or spec.name)
            return None
        except OpError as error:
            if error.code == "T006" and free_symbols(tuple(t.shape for t in types)):
                error.hint = (
                    "the element count is a formula of a symbolic size, so the target must be "
                    "proven equal for every size: keep the symbolic part in one -1 axis"
                )
            self.report(b, error, bound, inputs, span, what or spec.name)
            return None
        node_id = b.fresh(stem or spec.name)
        node = Node(
            id=node_id,
            op=spec.name,
            args=bound.plain(),
            inputs=tuple(inputs),
            output=node_id,
            parameters=parameters,
            span=span,
            arg_spans={k: v.span for k, v in bound.values.items() if v.span is not None},
            suffix_of=suffix_of,
        )
        b.add_node(node)
        note = None
        if spec.name == "flatten" and types[0].rank > 1:
            note = f"{out.shape[0]} = " + "·".join(map(str, types[0].shape))
        return b.add_value(Value(node_id, (BATCH, *out.shape), out.dtype, span), note)

    def report(
        self,
        b: GraphBuilder,
        error: OpError,
        bound: BoundArgs,
        inputs: list[str],
        span: Span,
        what: str,
    ) -> None:
        primary = (bound.span(error.blame) if error.blame else None) or span
        labels: list[Label] = []
        for index, note in error.input_notes:
            if index < len(inputs):
                labels.append(
                    Label(b.value(inputs[index]).span, self.origin(b, inputs[index], note))
                )
        if not error.input_notes and inputs:
            labels.append(
                Label(b.value(inputs[0]).span, "input " + self.origin(b, inputs[0], None))
            )
        message, hint = error.message, error.hint
        if what == "residual":
            # the user wrote '.residual', not add(...): say so
            shapes = [b.value(name).sample_shape for name in inputs]
            if error.code == "T001" and len(shapes) == 2 and None not in shapes:
                before, after = (shape_text(s) for s in shapes if s is not None)
                message = (
                    "'.residual' adds the operation's input to its result, so the shapes must "
                    f"be equal: the input is {before}, the result {after}"
                )
            hint = "make the operation keep its input shape, or drop '.residual'"
        self.diagnostics.append(diag(error.code, message, primary, hint=hint, labels=tuple(labels)))

    def origin(self, b: GraphBuilder, name: str, note: str | None) -> str:
        node = b.producers.get(name)
        text = b.notes.get(name) or note or shape_text(b.value(name).sample_shape)
        if node is None:
            return text
        return f"{text} from `{node.op}` at {node.span}"

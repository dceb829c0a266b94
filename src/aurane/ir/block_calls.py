"""Lowering block calls: a model used as an operation (``Block(x)``, ``x -> Block()``),
``repeat``, splicing (``-> *Block()``), numbered-container continuation, and the blocks'
outputs. ``_Lowerer`` (``lower.py``) inherits these; the statement and expression walk
stays there."""

from __future__ import annotations

from abc import abstractmethod

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ir import blocks, containers, layers
from aurane.ir.builder import GraphBuilder, model_info
from aurane.ir.graph import Graph, Node, Value
from aurane.ir.lowering import Lowering
from aurane.ops.rules import fmt_shape as shape_text
from aurane.ops.spec import (
    TensorType,
)
from aurane.records import replace
from aurane.semantics.check import MAX_BLOCK_NESTING
from aurane.semantics.constants import block_tensor_count, per_call
from aurane.semantics.dims import declared_dims
from aurane.semantics.inputs import several_outputs
from aurane.source import Span
from aurane.syntax import ast


class BlockCalls(Lowering):
    """The block-call half of the lowerer."""

    @abstractmethod
    def tensor(self, b: GraphBuilder, env: dict[str, str | None], expr: ast.Expr) -> str | None: ...

    # -------------------------------------------------------------- composition

    def lower_block(
        self,
        name: str,
        input_type: TensorType,
        call_span: Span,
        call: ast.Call | None = None,
        args: tuple[ast.Expr, ...] = (),
        more: tuple[tuple[TensorType, Span], ...] = (),
    ) -> Graph | None:
        model = self.models[name]
        if name in self.lowering or len(self.lowering) >= MAX_BLOCK_NESTING:
            self.diagnostics.append(_too_deep(name, self.lowering, call_span))
            return None
        self.lowering.append(name)
        try:
            return self._lower_block(name, model, input_type, call_span, call, args, more)
        finally:
            self.lowering.pop()

    def _lower_block(
        self,
        name: str,
        model: ast.Model,
        input_type: TensorType,
        call_span: Span,
        call: ast.Call | None,
        args: tuple[ast.Expr, ...],
        more: tuple[tuple[TensorType, Span], ...] = (),
    ) -> Graph | None:
        values: dict[str, object] | None = None
        if per_call(model) or (name in self.per_call_blocks and model.base is None):
            values = blocks.bind(self, model, args, call, call_span) if model.params else {}
            if values is None:
                return None
        others = tuple((t.shape, t.dtype) for t, _ in more)
        key = (name, input_type.shape, input_type.dtype, blocks.values_key(values), others)
        if key in self.block_cache:
            return self.block_cache[key]
        if values is not None:
            graph = blocks.lower_instance(self, model, values, input_type, call_span, more)
            self.block_cache[key] = graph
            return graph
        info = model_info(model)
        if info.input_shape is not None and info.input_shape != input_type.shape and not more:
            self.diagnostics.append(
                diag(
                    "T010",
                    f"block '{name}' expects input shape {shape_text(info.input_shape)}, "
                    f"called with {shape_text(input_type.shape)}",
                    call_span,
                    labels=(
                        Label(
                            info.input_shape_span or model.name_span, "input_shape declared here"
                        ),
                    ),
                )
            )
            self.block_cache[key] = None
            return None
        before = len(self.diagnostics)
        if model.base is not None:  # a variant called as a block
            graph = blocks.lower_variant(
                self,
                model,
                info,
                input_type,
                call_span,
                name,
                f"the call at {call_span}",
                more_inputs=more,
            )
        else:
            assert model.forward is not None
            graph = self.lower_model(
                model,
                info,
                input_type,
                model.forward.param_span,
                name,
                input_origin=f"the call at {call_span}",
                more_inputs=more,
            )
        # errors inside the block: say which call's shapes produced them
        for index in range(before, len(self.diagnostics)):
            d = self.diagnostics[index]
            if d.is_error:
                called = Label(
                    call_span, f"block called here with input {shape_text(input_type.shape)}"
                )
                self.diagnostics[index] = replace(d, labels=(*d.labels, called))
        self.block_cache[key] = graph
        return graph

    def block(
        self, b: GraphBuilder, call: ast.Call, names: list[str], rest: tuple[ast.Expr, ...] = ()
    ) -> str | None:
        """A block call; several outputs (``h, pooled = Encoder(x)``) bind through
        ``block_outputs``, so here a block must return one tensor."""
        sub = self.block_graph(b, call, names, rest)
        if sub is None:
            return None
        if len(sub.outputs) > 1:
            self.diagnostics.append(
                diag(
                    "S152",
                    f"block '{call.func}' returns {len(sub.outputs)} tensors "
                    f"({', '.join(sub.output_label(i) for i in range(len(sub.outputs)))}): "
                    "bind one name to each",
                    call.span,
                    hint=", ".join(sub.output_label(i) for i in range(len(sub.outputs)))
                    + f" = {call.func}(...)",
                )
            )
            return None
        return self.add_block_node(b, call, names, sub, 1, self.block_stem(b, call))

    def block_graph(
        self, b: GraphBuilder, call: ast.Call, names: list[str], rest: tuple[ast.Expr, ...]
    ) -> Graph | None:
        """The block lowered at the types of the tensors this call passes it."""
        types = self.input_types(b, names)
        if types is None:
            return None
        more = self.omitted_inputs(call, types, names, b)
        if more is None:
            return None
        return self.lower_block(call.func, types[0], call.span, call, rest, more)

    def omitted_inputs(
        self, call: ast.Call, types: list[TensorType], names: list[str], b: GraphBuilder
    ) -> tuple[tuple[TensorType, Span], ...] | None:
        """The types of a block's inputs after the first: those passed, then each one left
        out (it has a default) at the shape its block declares; T130 for a dtype that
        differs from a declared one."""
        model = self.models[call.func]
        if model.forward is None or len(model.forward.inputs) == 1:
            return ()
        info = model_info(model, declared_dims(self.program, model), self.sizes)
        declared = {i.name: i for i in info.inputs}
        out: list[tuple[TensorType, Span]] = []
        for index, param in enumerate(model.forward.inputs):
            found = declared.get(param.name)
            if index < len(types):
                given = types[index]
                wanted = found.dtype if found is not None else None
                if wanted is not None and given.dtype is not None and wanted != given.dtype:
                    value = b.value(names[index])
                    self.diagnostics.append(
                        diag(
                            "T130",
                            f"block '{call.func}' takes its input '{param.name}' as "
                            f"{wanted}, and this call passes {given.dtype}",
                            call.args[index].span if index < len(call.args) else call.span,
                            labels=(
                                Label(
                                    value.span, f"{given.dtype} " + self.origin(b, value.name, None)
                                ),
                                Label(param.name_span, f"'{param.name}' declared here"),
                            ),
                            hint=f"cast it first (to({wanted})) or change the block's input_dtype",
                        )
                    )
                    return None
                if index:
                    out.append((given, call.args[index].span))
                continue
            if found is None or found.shape is None:
                self.diagnostics.append(
                    diag(
                        "S151",
                        f"this call leaves out the input '{param.name}' of block "
                        f"'{call.func}', and the block declares no shape to build its "
                        "default at",
                        call.span,
                        labels=(Label(param.name_span, "input declared here"),),
                        hint=f"pass it, or declare input_shape = {{..., {param.name}: (...)}} "
                        "in the block",
                    )
                )
                return None
            out.append((TensorType(found.shape, found.dtype), param.name_span))
        return tuple(out)

    def block_outputs(
        self, b: GraphBuilder, env: dict[str, str | None], stmt: ast.Assign
    ) -> list[str] | None:
        """``h, pooled = Encoder(x, mask)``: one block node, one value per output."""
        call = stmt.value
        assert isinstance(call, ast.Call)
        count = block_tensor_count(self.program.model(call.func), call.args, is_tensor)
        inputs = [self.tensor(b, env, arg) for arg in call.args[:count]]
        names = [i for i in inputs if i is not None]
        if len(names) != len(inputs):
            return None
        sub = self.block_graph(b, call, names, call.args[count:])
        if sub is None:
            return None
        if len(sub.outputs) != len(stmt.targets):
            where = stmt.targets[0][1].merge(stmt.targets[-1][1])
            written = ", ".join(sub.output_label(i) for i in range(len(sub.outputs)))
            self.diagnostics.append(
                diag(
                    "S152",
                    f"{len(stmt.targets)} names for the {len(sub.outputs)} output"
                    f"{'s' * (len(sub.outputs) != 1)} of block '{call.func}' ({written})",
                    where,
                    hint=f"bind exactly {len(sub.outputs)} name"
                    f"{'s' * (len(sub.outputs) != 1)}: {written} = {call.func}(...)",
                    labels=(Label(call.span, f"{call.func} returns {len(sub.outputs)}"),),
                )
            )
            return None
        first = self.add_block_node(b, call, names, sub, 1, self.block_stem(b, call))
        if call.layer is not None:  # h, bias = Layer(x, mask) as encoder.block.0
            layers.name_node(self, b, first, call)
        node = b.producers[first]
        if call.layer is not None:  # a, b = Down(x, temb) as down_blocks.0
            layers.name_node(self, b, first, call)
            node = b.producers[first]
        return [first, *node.outputs[1:]]

    def repeat(
        self,
        b: GraphBuilder,
        call: ast.Call,
        input_name: str,
        block: str,
        times: int,
        rest: tuple[ast.Expr, ...] = (),
    ) -> str | None:
        types = self.input_types(b, [input_name])
        if types is None or not self.one_input(block, call, "repeat copies"):
            return None
        in_type = types[0]
        inner = blocks.repeated_call(call, rest)
        sub = self.lower_block(
            block, in_type, call.span, inner, inner.args if inner is not None else ()
        )
        if sub is None:
            return None
        out = sub.output_value
        problem = None
        if out.sample_shape != in_type.shape:
            problem = (
                f"shape to itself: {shape_text(in_type.shape)} became "
                f"{shape_text(out.sample_shape or ())}"
            )
        elif out.dtype != in_type.dtype and in_type.dtype is not None:
            problem = f"dtype to itself: {in_type.dtype} became {out.dtype}"
        elif out.dtype != in_type.dtype and times > 1:
            # an input of unknown dtype: the first copy decides it (a learned parameter
            # makes it the parameters' dtype), and every later copy must keep that one
            again = self.lower_block(
                block, TensorType(in_type.shape, out.dtype), call.span, inner,
                inner.args if inner is not None else (),
            )  # fmt: skip
            if again is None:
                return None
            if again.output_value.sample_shape != in_type.shape or (
                again.output_value.dtype != out.dtype
            ):
                problem = (
                    f"dtype to itself: its first copy makes {out.dtype}, the next "
                    f"{again.output_value.dtype}"
                )
        if problem is not None:
            self.diagnostics.append(
                diag(
                    "T001",
                    f"repeat needs '{block}' to map its input {problem}",
                    call.span,
                    labels=(
                        Label(
                            b.value(input_name).span, "input " + self.origin(b, input_name, None)
                        ),
                    ),
                    hint="use the block once, or make its output shape and dtype equal its input's",
                )
            )
            return None
        return self.add_block_node(b, call, input_name, sub, times, "repeat")

    def splice(
        self,
        b: GraphBuilder,
        call: ast.Call,
        input_name: str,
        container: str,
        rest: tuple[ast.Expr, ...],
    ) -> str | None:
        """``-> *Block(...) as features``: the block's nodes, inlined into ``features``."""
        types = self.input_types(b, [input_name])
        if types is None or not self.one_input(call.func, call, "splicing inlines"):
            return None
        sub = self.lower_block(call.func, types[0], call.span, call, rest)
        if sub is None:
            return None
        span = call.layer_span or call.span
        in_shape = b.value(input_name).shape or ()
        return containers.splice(b, sub, input_name, container, span, in_shape, self.diagnostics)

    def one_input(self, block: str, call: ast.Call, what: str) -> bool:
        """S151 for ``repeat``/splicing a block whose forward takes several inputs or
        returns several outputs: they pass one tensor from copy to copy."""
        model = self.models.get(block)
        if model is None or model.forward is None:
            return True
        forward = model.forward
        if len(forward.inputs) == 1 and not several_outputs(model):
            return True
        self.diagnostics.append(
            diag(
                "S151",
                f"{what} a block with one input and one output, and '{block}' takes "
                f"{', '.join(forward.input_names)}"
                + (" and returns several" if several_outputs(model) else ""),
                call.span,
                labels=(Label(forward.param_span, "its inputs"),),
                hint=f"call '{block}' in graph form, once per copy",
            )
        )
        return False

    def continue_container(
        self, b: GraphBuilder, call: ast.Call, container: str, start: int | None
    ) -> bool:
        """``repeat(B, n, start=k) as P`` or a repeat into a container that already holds
        numbered layers: its copies become ``P.k``.. (True when it named them so)."""
        if container.endswith(".*"):
            return False  # P.*: the repeat is one child at P's next index
        following = containers.next_index(b, container)
        if start is None and following == 0:
            return False  # a plain named repeat: one nn.Sequential, as before
        index = len(b.nodes) - 1
        if b.nodes[index].op != "repeat":
            return False
        span = call.layer_span or call.span
        containers.expand_repeat(b, index, container, following if start is None else start)
        for node in b.nodes[index:]:
            b.layer_spans[node.id] = span
        return True

    def block_stem(self, b: GraphBuilder, call: ast.Call) -> str:
        """What a block call's node is numbered after (its layer, unless ``as`` names it):
        what the source calls, the block (``basic1``) or the model-valued parameter giving
        it (``block1``, whichever block a call of the enclosing block gave), so the IR's
        layer names are the class's."""
        start = (call.func_span.line, call.func_span.column)
        return b.callees.get(start, call.func.lower())

    def add_block_node(
        self,
        b: GraphBuilder,
        call: ast.Call,
        input_name: str | list[str],
        sub: Graph,
        times: int,
        stem: str,
    ) -> str:
        names = [input_name] if isinstance(input_name, str) else input_name
        input_name = names[0]
        node_id = b.fresh(stem)
        out = sub.output_value
        extra = tuple(f"{node_id}_{index}" for index in range(1, len(sub.outputs)))
        args: dict[str, object] = (
            {"block": sub.name, "times": times} if stem == "repeat" else {"block": sub.name}
        )
        if sub.block_params is not None:
            args["arguments"] = dict(sub.block_args)
        b.add_node(
            Node(
                id=node_id,
                op="repeat" if stem == "repeat" else "block",
                args=args,
                inputs=tuple(names),
                output=node_id,
                outputs=(node_id, *extra) if extra else (),
                parameters=sub.parameters * times,
                span=call.span,
                block=sub.name,
                subgraph=sub,
                repeat=times,
            )
        )
        # the block's own symbols, re-expressed in the caller's terms
        in_shapes = tuple(b.value(name).shape or () for name in names)
        shape = blocks.output_shape(sub, in_shapes)
        made = b.add_value(Value(node_id, shape, out.dtype, call.span))
        for name, value in zip(extra, sub.outputs[1:], strict=True):
            other = blocks.output_shape(sub, in_shapes, value)
            b.add_value(Value(name, other, value.dtype, call.span))
            b.producers[name] = b.producers[node_id]
        return made

    # -------------------------------------------------------------- program

    def variant_root(self, model: ast.Model) -> ast.Model | None:
        """The block a variant (``model m = Block(...)``) is made of, through variants of
        variants; a model with a forward is its own."""
        seen: set[str] = set()
        while model.base is not None and model.name not in seen:
            seen.add(model.name)
            found = self.models.get(model.base.func)
            if found is None:
                return None
            model = found
        return model if model.forward is not None else None


def _too_deep(name: str, stack: list[str], span: Span) -> Diagnostic:
    """S009 for a block that calls itself through a block-valued argument, else S113."""
    if name in stack:
        cycle = " -> ".join([*stack[stack.index(name) :], name])
        return diag(
            "S009",
            f"models use each other recursively: {cycle} (through a block-valued argument)",
            span,
            hint="a model cannot contain itself; pass another block",
        )
    return diag(
        "S113",
        f"blocks nested more than {MAX_BLOCK_NESTING} levels deep here (through "
        "block-valued arguments)",
        span,
        hint="flatten the nesting: call the inner blocks one after another",
    )


def is_tensor(expr: ast.Expr) -> bool:
    """A graph-form argument that is a tensor (constants are literals by now)."""
    return isinstance(expr, ast.Name | ast.Call | ast.Chain)

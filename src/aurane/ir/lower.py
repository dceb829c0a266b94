"""Lowering to the IR with shape and dtype inference (the type checker).

Each model with an input_shape lowers once; blocks lower at each call site with the
caller's input type. A failed operation gives its output an unknown shape, and consumers of
unknown shapes stay silent, so one mistake gives one diagnostic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aurane import ops
from aurane.codes import diag
from aurane.diagnostics import CompilationError, Diagnostic, Label
from aurane.ir import blocks, layers
from aurane.ir.block_calls import BlockCalls, is_tensor
from aurane.ir.builder import GraphBuilder, ModelInfo, as_names, input_default, model_info
from aurane.ir.contracts import padding_mask_length
from aurane.ir.graph import BATCH, Graph, Value
from aurane.ir.inits import rule_reaches_nothing
from aurane.ir.jobs import check_jobs
from aurane.ir.tying import resolve_ties, tie_target
from aurane.ops.rules import fmt_shape as shape_text
from aurane.ops.shape import piece_sizes
from aurane.ops.spec import (
    ArgValue,
    BoundArgs,
    InferContext,
    OpError,
    OpSpec,
    TensorArg,
    TensorName,
    TensorType,
)
from aurane.records import replace
from aurane.semantics import config
from aurane.semantics.binding import bind_arguments
from aurane.semantics.check import SemanticResult
from aurane.semantics.constants import block_tensor_count
from aurane.semantics.dims import declared_dims
from aurane.semantics.inits import check_layer_init, read_rules, split_init
from aurane.semantics.sizes import ConcreteSizeNeeded
from aurane.semantics.symbolic import plain
from aurane.semantics.tying import split_tie
from aurane.semantics.unroll import label_new
from aurane.source import Span
from aurane.syntax import ast


class _Lowerer(BlockCalls):
    """Walks each model's forward: statements, expressions, calls and block calls, each
    operation applied by ``Lowering.apply`` (``lowering.py``)."""

    # -------------------------------------------------------------- models

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
        """Lower ``model``'s forward; ``input_type`` is the first input's, ``more_inputs``
        the types (and where they come from) of the others of a forward with several;
        ``callees``: the block calls named after the model-valued parameter they call."""
        assert model.forward is not None
        dtype = input_type.dtype
        param_dtype = dtype if dtype is not None and dtype in config.FLOAT_DTYPES else "float32"
        forward = model.forward
        builder = GraphBuilder(
            graph_name, param_dtype, callees=dict(callees or {}), named=as_names(forward.body)
        )
        input_name = forward.param
        env: dict[str, str | None] = {}  # None: its producer failed
        typed = [(input_type, input_span), *more_inputs]
        for param, (in_type, span) in zip(forward.inputs, typed, strict=False):
            builder.add_value(
                Value(param.name, (BATCH, *in_type.shape), in_type.dtype, span, param.name),
                f"{shape_text(in_type.shape)} from "
                f"{input_origin or f'the model input at {span}'}"
                + (f" (input '{param.name}')" if len(typed) > 1 else ""),
            )
            env[param.name] = param.name
        if not self.defaults_have_sizes(builder, forward):
            return None
        assigned: list[tuple[str, Span]] = []
        output = input_name
        outputs: tuple[str, ...] = ()
        labels: tuple[str, ...] = ()
        failed = False
        for stmt in forward.body:
            before, first_node = len(self.diagnostics), len(builder.nodes)
            if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.TupleExpr):
                several = [self.tensor(builder, env, item) for item in stmt.value.items]
                if any(item is None for item in several):
                    failed = True
                else:
                    outputs = tuple(item for item in several if item is not None)
                    output = outputs[0]
                    labels = tuple(
                        item.id if isinstance(item, ast.Name) else value
                        for item, value in zip(stmt.value.items, outputs, strict=True)
                    )
                continue
            result = self.statement(builder, env, stmt, assigned)
            if result is None:
                failed = True
            elif result:
                output = result
            origin = getattr(stmt, "origin", ())
            if origin:  # unrolled: say which iteration or branch
                label_new(self.diagnostics, before, origin)
                self.stamp_origin(builder, first_node, origin)
        if failed:
            return None
        layers.check_names(self, builder)
        tied = resolve_ties(builder, self.diagnostics)
        for param in forward.inputs if len(typed) > 1 else ():
            if builder.uses[param.name] == 0 and param.name not in outputs:
                self.diagnostics.append(
                    diag(
                        "S155",
                        f"input '{param.name}' of '{graph_name}' is never used",
                        param.name_span,
                        hint="use it, or remove it from the forward and input_shape",
                    )
                )
        for value_name, span in assigned:
            if value_name != output and value_name not in outputs and builder.uses[value_name] == 0:
                source = builder.value(value_name).source_name
                if source == "_":  # h, _ = Block(x): discarded on purpose, as in Python
                    continue
                self.diagnostics.append(
                    diag(
                        "S018",
                        f"value '{source}' is computed but never used",
                        span,
                        hint="use it, return it, or delete the statement",
                    )
                )
        # no input_dtype is float32: a float input has no token ids to compare with
        not_integer = input_type.dtype not in config.INPUT_INT_DTYPES
        if info.padding_idx is not None and not_integer:
            self.diagnostics.append(
                diag(
                    "T003",
                    "input_padding_idx needs integer token inputs (input_dtype int64 or int32)",
                    info.padding_span,
                    hint="set input_dtype = int64",
                )
            )
        rules, problems = read_rules(model)
        self.diagnostics.extend(problems)
        graph = Graph(
            name=graph_name,
            input=input_name,
            output=output,
            values=tuple(builder.values.values()),
            nodes=tuple(builder.nodes),
            span=model.span,
            input_dtype=input_type.dtype,
            param_dtype=builder.param_dtype,
            padding_idx=info.padding_idx,
            tied=tied,
            init_rules=rules,
            input_names=forward.input_names if len(typed) > 1 else (),
            output_names=outputs,
            output_labels=labels,
            input_defaults={
                p.name: input_default(p.default) for p in forward.inputs if p.default is not None
            },
        )
        for rule in rules:
            if rule_reaches_nothing(graph, rule):
                self.diagnostics.append(
                    diag(
                        "S127",
                        f"'init {rule.text}' reaches no parameter of model '{graph_name}'",
                        rule.span,
                        hint="check the operation or the pattern against the layer names "
                        "(aurane ir lists them)",
                    )
                )
        if info.padding_idx is not None and not not_integer and not graph.has_attention:
            self.diagnostics.append(
                diag(
                    "T091",
                    "input_padding_idx masks padding in self-attention, and this model has none: "
                    "it would be ignored",
                    info.padding_span,
                    hint="remove input_padding_idx, or add multihead_attention / a transformer "
                    "block",
                )
            )
        wrong_length = padding_mask_length(graph, info.padding_span)  # ir/contracts.py
        if wrong_length is not None:
            self.diagnostics.append(wrong_length)
        return graph

    def defaults_have_sizes(self, builder: GraphBuilder, forward: ast.Forward) -> bool:
        """S154: each symbolic size of an optional input's shape is an axis of a required
        input (the generated default reads it from there)."""
        values = builder.values
        required = {
            dim
            for p in forward.inputs
            if p.default is None and p.name in values
            for dim in (values[p.name].shape or ())[1:]
        }
        ok = True
        for param in forward.inputs:
            if param.default is None or param.name not in values:
                continue
            for dim in (values[param.name].shape or ())[1:]:
                if not isinstance(dim, int) and dim not in required:
                    self.diagnostics.append(
                        diag(
                            "S154",
                            f"the default of '{param.name}' needs the size {dim}, and no "
                            "required input has it",
                            param.default.span,
                            labels=(
                                Label(values[param.name].span, f"'{param.name}' declared here"),
                            ),
                            hint=f"make '{param.name}' required, or give a required input "
                            f"the size {dim}",
                        )
                    )
                    ok = False
                    break
        return ok

    def statement(
        self,
        builder: GraphBuilder,
        env: dict[str, str | None],
        stmt: ast.ForwardStmt,
        assigned: list[tuple[str, Span]],
    ) -> str | None:
        """Lower one statement: the value it makes the output (``""``: none), None on failure."""
        match stmt:
            case ast.Assign(targets=targets, value=ast.Call(func=func)) if (
                targets and func in self.models and ops.lookup(func) is None
            ):  # h, pooled = Encoder(x, mask)
                outs = self.block_outputs(builder, env, stmt)
                output = ""
                for index, (target, span) in enumerate(targets):
                    if outs is None:
                        env[target] = None
                        continue
                    env[target] = output = self.bind_name(builder, outs[index], target)
                    assigned.append((output, span))
                return None if outs is None else output
            case ast.Assign(targets=targets) if targets:  # a, b = chunk(x, 2)
                pieces = self.pieces(builder, env, stmt)
                output = ""
                for index, (target, span) in enumerate(targets):
                    if pieces is None:
                        env[target] = None
                        continue
                    env[target] = output = self.bind_name(builder, pieces[index], target)
                    assigned.append((output, span))
                return None if pieces is None else output
            case ast.Assign(target=target, target_span=span, value=value):
                result = self.tensor(builder, env, value)
                if result is None:
                    env[target] = None
                    return None
                env[target] = output = self.bind_name(builder, result, target)
                assigned.append((output, span))
                return output
            case ast.ChainStmt(chain=chain):
                result = self.tensor(builder, env, chain)
                if isinstance(chain.source, ast.Name):
                    source = chain.source.id
                    env[source] = (
                        None if result is None else self.bind_name(builder, result, source)
                    )
                return result
            case ast.Return(value=value):
                return self.tensor(builder, env, value)
        return ""  # if/for: constant resolution has unrolled them

    def bind_name(self, builder: GraphBuilder, value_name: str, source_name: str) -> str:
        """Record the program's name for a value (the first name wins for display)."""
        value = builder.values[value_name]
        if value.source_name is None:
            builder.values[value_name] = Value(
                value.name, value.shape, value.dtype, value.span, source_name
            )
        return value_name

    # -------------------------------------------------------------- expressions

    def tensor(self, b: GraphBuilder, env: dict[str, str | None], expr: ast.Expr) -> str | None:
        match expr:
            case ast.Name(id=name):
                value = env.get(name)
                if value is not None:
                    b.uses[value] += 1
                return value
            case ast.Call():
                return self.call(b, env, expr, None)
            case ast.Chain(source=source, steps=steps):
                current = self.tensor(b, env, source)
                first = len(b.nodes)
                for step in steps:
                    if current is None:
                        return None
                    current = self.call(b, env, step, current)
                if current is not None and expr.layer is not None:
                    layers.name_chain(self, b, first, expr)
                return current
        return None

    def call(
        self, b: GraphBuilder, env: dict[str, str | None], call: ast.Call, chained: str | None
    ) -> str | None:
        spec = ops.lookup(call.func)
        if chained is not None:
            b.uses[chained] += 1
            names = [chained]
            rest = call.args
        else:
            if spec is not None:
                count = spec.graph_inputs(call.args, is_tensor)
            else:
                count = block_tensor_count(self.program.model(call.func), call.args, is_tensor)
            inputs = [self.tensor(b, env, arg) for arg in call.args[:count]]
            names = [i for i in inputs if i is not None]
            if len(names) != len(inputs):
                return None
            rest = call.args[count:]
        named = call.layer is not None
        if call.func in self.models and spec is None and call.splice and call.layer is not None:
            result = self.splice(b, call, names[0], call.layer, rest)
            named = False  # the spliced layers took their names
        elif call.func in self.models and spec is None:
            result = self.block(b, call, names, rest)
        elif spec is not None and spec.name == "repeat":
            bound = self.arguments(call, spec, rest, call.keywords)
            result = self.repeat(b, call, names[0], bound["block"], bound["times"], rest)
            start = int(bound["start"]) if bound.given("start") else None
            if result is not None and call.layer is not None:
                named = not self.continue_container(b, call, call.layer, start)
            elif start is not None:
                self.diagnostics.append(
                    diag(
                        "S045",
                        "start= numbers the copies in a named container, and this repeat "
                        "has no name",
                        bound.span("start") or call.span,
                        hint="add 'as NAME' after the repeat, or drop start=",
                    )
                )
        else:
            assert spec is not None
            keywords, init = split_init(split_tie(call.keywords)[0], spec.name)
            bound = self.arguments(call, spec, rest, keywords)
            tensors = self.tensor_keywords(b, env, bound, names)
            result = None if tensors is None else self.apply(b, spec, tensors, names, call.span)
            tied = tie_target(call.keywords)
            if result is not None and tied is not None and (node := b.producers.get(result)):
                b.ties[node.id] = tied
            if result is not None and init is not None:
                self.initialise(b, result, spec.name, init)
        if result is not None and named:
            layers.name_node(self, b, result, call)
        main = result
        for suffix in call.suffixes:
            if result is None:
                return None
            result = self.suffix(b, suffix, result, main)
        return result

    def tensor_keywords(
        self, b: GraphBuilder, env: dict[str, str | None], bound: BoundArgs, names: list[str]
    ) -> BoundArgs | None:
        """``attn_mask=pad``: each tensor keyword's value joins the node's inputs (after the
        positional ones) and its argument becomes that position (``TensorArg``)."""
        if not any(isinstance(v.value, TensorName) for v in bound.values.values()):
            return bound
        values = dict(bound.values)
        for key, entry in bound.values.items():
            if not isinstance(entry.value, TensorName) or entry.span is None:
                continue
            value = self.tensor(b, env, ast.Name(entry.value.name, entry.span))
            if value is None:
                return None
            names.append(value)
            values[key] = ArgValue(TensorArg(len(names) - 1), entry.span)
        return BoundArgs(values)

    def initialise(self, b: GraphBuilder, value: str, op: str, keyword: ast.Keyword) -> None:
        """``dense(8, init=normal(0.02))``: the node records its weight's initialiser."""
        spec, problems = check_layer_init(op, keyword)
        node = b.producers.get(value)
        if spec is None or node is None:
            if not self.bound:  # lowering alone: the semantic pass did not report it
                self.diagnostics.extend(problems)
            return
        made = replace(node, init=(("weight", spec),))
        b.nodes[b.nodes.index(node)] = made
        b.producers[value] = made

    def pieces(
        self, b: GraphBuilder, env: dict[str, str | None], stmt: ast.Assign
    ) -> list[str] | None:
        """``a, b = chunk(x, 2)``: one split/chunk node per name, each with its ``index``."""
        call = stmt.value
        spec = ops.lookup(call.func) if isinstance(call, ast.Call) else None
        if not isinstance(call, ast.Call) or spec is None or not call.args:
            return None  # the semantic pass reported it (S065)
        source = self.tensor(b, env, call.args[0])
        types = self.input_types(b, [source]) if source is not None else None
        if source is None or types is None:
            return None
        bound = self.arguments(call, spec, call.args[1:], call.keywords)
        names = stmt.targets
        if bound.given("index"):
            self.diagnostics.append(
                diag(
                    "S065",
                    f"{spec.name} binds every piece to a name here; index= picks one piece",
                    bound.span("index") or call.span,
                    hint=f"drop index=, or bind one name: h = {spec.name}(..., index=0)",
                )
            )
            return None
        try:
            _, sizes = piece_sizes(InferContext.of_node(bound, tuple(types), b.param_dtype))
        except OpError as error:
            self.report(b, error, bound, [source], call.span, spec.name)
            return None
        if len(sizes) != len(names):
            where = names[0][1].merge(names[-1][1])
            self.diagnostics.append(
                diag(
                    "S065",
                    f"{len(names)} names for the {len(sizes)} pieces of {spec.name}: "
                    f"{shape_text(types[0].shape)} cut into {shape_text(sizes)}",
                    where,
                    hint=f"bind exactly {len(sizes)} names",
                    labels=(Label(call.span, f"{spec.name} gives {len(sizes)} pieces"),),
                )
            )
            return None
        results: list[str] = []
        for index in range(len(sizes)):
            if index:
                b.uses[source] += 1
            args = BoundArgs({**bound.values, "index": ArgValue(index, None)})
            result = self.apply(b, spec, args, [source], call.span)
            if result is None:
                return None
            results.append(result)
        return results

    def suffix(
        self, b: GraphBuilder, suffix: ast.Suffix, current: str, main: str | None
    ) -> str | None:
        main_id = self.node_of(b, main)
        if suffix.name == "residual":
            before = self.node_input(b, main)
            if before is None:
                return current
            return self.apply(
                b,
                ops.CATALOG["add"],
                BoundArgs({}),
                [before, current],
                suffix.span,
                suffix_of=main_id,
                stem="residual",
                what="residual",
            )
        spec = ops.lookup(suffix.name)
        assert spec is not None
        bound = self.arguments(suffix, spec, suffix.args, suffix.keywords)
        return self.apply(b, spec, bound, [current], suffix.span, suffix_of=main_id)

    def arguments(
        self,
        node: ast.Call | ast.Suffix,
        spec: OpSpec,
        args: tuple[ast.Expr, ...],
        keywords: tuple[ast.Keyword, ...],
    ) -> BoundArgs:
        """The semantic pass's binding of this call, or a fresh one when lowering alone."""
        cached = self.bound.get(id(node))
        if cached is not None:
            return cached
        bound, _ = bind_arguments(
            spec.params, args, keywords, owner=spec.name, owner_span=node.span
        )
        return bound

    def node_of(self, b: GraphBuilder, value: str | None) -> str | None:
        node = b.producers.get(value) if value else None
        return node.id if node else None

    def node_input(self, b: GraphBuilder, value: str | None) -> str | None:
        node = b.producers.get(value) if value else None
        return node.inputs[0] if node and node.inputs else None

    def run(self) -> dict[str, Graph]:
        graphs: dict[str, Graph] = {}
        for model in self.program.models:
            if model.name in self.skip or (model.forward is None and model.base is None):
                continue
            root = self.variant_root(model)
            forward = root.forward if root is not None else None
            info = model_info(model, declared_dims(self.program, model), self.sizes, forward)
            if info.input_shape is None or model.name in graphs:
                continue
            input_type = TensorType(info.input_shape, info.input_dtype)
            span = info.input_shape_span or model.name_span
            more = tuple(
                (TensorType(i.shape, i.dtype), i.span)
                for i in info.inputs[1:]
                if i.shape is not None
            )
            if model.base is not None:
                graph = blocks.lower_variant(
                    self, model, info, input_type, span, model.name, more_inputs=more
                )
            else:
                graph = self.lower_model(model, info, input_type, span, model.name, None, more)
            if graph is not None:
                graphs[model.name] = graph
        return graphs


def lower_program(
    program: ast.AuraneProgram,
    semantic: SemanticResult | None = None,
    *,
    sizes: Mapping[str, int] | None = None,
    per_call_blocks: frozenset[str] = frozenset(),
) -> tuple[dict[str, Graph], list[Diagnostic]]:
    """Lower every model that has an input_shape; blocks appear inside their callers.

    ``semantic`` (the semantic pass's result) names models to skip and carries argument
    bindings to reuse; without it the program is assumed semantically valid.
    ``per_call_blocks`` are parameterless blocks to lower per call with symbolic input
    sizes, as parameterised ones are (code generation: one class for several shapes).
    """
    skip = semantic.broken_models if semantic else set()
    lowerer = _Lowerer(program, skip, semantic.bound if semantic else {}, sizes)
    lowerer.per_call_blocks = per_call_blocks
    graphs = lowerer.run()
    prior = [*(semantic.diagnostics if semantic else ()), *lowerer.diagnostics]
    lowerer.diagnostics.extend(check_jobs(program, graphs, prior))
    return graphs, lowerer.diagnostics


def lower_block_at(
    program: ast.AuraneProgram,
    instance: Graph,
    values: Mapping[str, Any],
    width: tuple[int, int] | None = None,
) -> Graph | None:
    """The block of ``instance`` (a parameterised block's graph at one call) lowered
    again at the input types of that call with the arguments ``values``, or None where
    that lowering reports an error (a shape that does not fit). Code generation lowers a
    block so at arguments no call gives, to write one class for bodies no call runs, and
    at another input ``width`` (a sample axis and its size) to learn what the width after
    it follows; the program's own graphs are not touched."""
    model = next((m for m in program.models if m.name == instance.name), None)
    if model is None or model.forward is None:
        return None
    lowerer = _Lowerer(program, set(), {}, None)
    more = tuple(
        (TensorType(plain(value.sample_shape), value.dtype), model.name_span)
        for value in instance.inputs[1:]
    )
    first = instance.input_value  # the call's types: its sample, without the batch axis
    sample = list(plain(first.sample_shape))
    if width is not None:
        axis, size = width
        if not -len(sample) <= axis < len(sample):
            return None
        sample[axis] = size
    input_type = TensorType(tuple(sample), first.dtype)
    lowerer.lowering.append(model.name)  # an inner call of the block itself is too deep
    try:
        graph = blocks.lower_instance(
            lowerer, model, dict(values), input_type, model.name_span, more
        )
    except (CompilationError, OpError, ConcreteSizeNeeded, ArithmeticError):
        # the semantic pass checked the calls' arguments only: at others a shape rule may
        # refuse, or the block's own sums fail (a division by a count of 0): no phantom,
        # the roller refuses the arguments instead; anything else is a bug and surfaces
        return None
    if any(d.is_error for d in lowerer.diagnostics):
        return None
    return graph

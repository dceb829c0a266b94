"""Lowering to the IR with shape and dtype inference (the type checker).

Each model with an input_shape lowers once; blocks lower at each call site with the
caller's input type. A failed operation gives its output an unknown shape, and consumers of
unknown shapes stay silent, so one mistake gives one diagnostic.
"""

from __future__ import annotations

from collections.abc import Mapping

from aurane import ops
from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ir import blocks, containers, layers
from aurane.ir.builder import GraphBuilder, ModelInfo, model_info
from aurane.ir.contracts import padding_mask_length
from aurane.ir.graph import BATCH, Graph, Node, Value
from aurane.ir.inits import rule_reaches_nothing
from aurane.ir.jobs import check_jobs
from aurane.ir.lowering import Lowering
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
from aurane.semantics.check import MAX_BLOCK_NESTING, SemanticResult
from aurane.semantics.constants import per_call
from aurane.semantics.dims import declared_dims
from aurane.semantics.inits import check_layer_init, read_rules, split_init
from aurane.semantics.tying import split_tie
from aurane.semantics.unroll import label_new
from aurane.source import Span
from aurane.syntax import ast


class _Lowerer(Lowering):
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
    ) -> Graph | None:
        assert model.forward is not None
        dtype = input_type.dtype
        param_dtype = dtype if dtype is not None and dtype in config.FLOAT_DTYPES else "float32"
        builder = GraphBuilder(graph_name, param_dtype)
        forward = model.forward
        input_name = forward.param
        builder.add_value(
            Value(input_name, (BATCH, *input_type.shape), input_type.dtype, input_span, input_name),
            f"{shape_text(input_type.shape)} from {input_origin or f'the model input at {input_span}'}",
        )
        env: dict[str, str | None] = {forward.param: input_name}  # None: its producer failed
        assigned: list[tuple[str, Span]] = []
        output = input_name
        failed = False
        for stmt in forward.body:
            before, first_node = len(self.diagnostics), len(builder.nodes)
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
        for value_name, span in assigned:
            if value_name != output and builder.uses[value_name] == 0:
                source = builder.value(value_name).source_name
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

    def statement(
        self,
        builder: GraphBuilder,
        env: dict[str, str | None],
        stmt: ast.ForwardStmt,
        assigned: list[tuple[str, Span]],
    ) -> str | None:
        """Lower one statement: the value it makes the output (``""``: none), None on failure."""
        match stmt:
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
            count = spec.graph_inputs(call.args, _is_tensor) if spec is not None else 1
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
            result = self.block(b, call, names[0], rest)
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

    # -------------------------------------------------------------- composition

    def lower_block(
        self,
        name: str,
        input_type: TensorType,
        call_span: Span,
        call: ast.Call | None = None,
        args: tuple[ast.Expr, ...] = (),
    ) -> Graph | None:
        model = self.models[name]
        if name in self.lowering or len(self.lowering) >= MAX_BLOCK_NESTING:
            self.diagnostics.append(_too_deep(name, self.lowering, call_span))
            return None
        self.lowering.append(name)
        try:
            return self._lower_block(name, model, input_type, call_span, call, args)
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
    ) -> Graph | None:
        values: dict[str, object] | None = None
        if per_call(model):
            values = blocks.bind(self, model, args, call, call_span) if model.params else {}
            if values is None:
                return None
        key = (name, input_type.shape, input_type.dtype, blocks.values_key(values))
        if key in self.block_cache:
            return self.block_cache[key]
        if values is not None:
            graph = blocks.lower_instance(self, model, values, input_type, call_span)
            self.block_cache[key] = graph
            return graph
        info = model_info(model)
        if info.input_shape is not None and info.input_shape != input_type.shape:
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
                self, model, info, input_type, call_span, name, f"the call at {call_span}"
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
        self, b: GraphBuilder, call: ast.Call, input_name: str, rest: tuple[ast.Expr, ...] = ()
    ) -> str | None:
        types = self.input_types(b, [input_name])
        if types is None:
            return None
        sub = self.lower_block(call.func, types[0], call.span, call, rest)
        if sub is None:
            return None
        return self.add_block_node(b, call, input_name, sub, 1, call.func.lower())

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
        if types is None:
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
        if types is None:
            return None
        sub = self.lower_block(call.func, types[0], call.span, call, rest)
        if sub is None:
            return None
        span = call.layer_span or call.span
        in_shape = b.value(input_name).shape or ()
        return containers.splice(b, sub, input_name, container, span, in_shape, self.diagnostics)

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

    def add_block_node(
        self, b: GraphBuilder, call: ast.Call, input_name: str, sub: Graph, times: int, stem: str
    ) -> str:
        node_id = b.fresh(stem)
        out = sub.output_value
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
                inputs=(input_name,),
                output=node_id,
                parameters=sub.parameters * times,
                span=call.span,
                block=sub.name,
                subgraph=sub,
                repeat=times,
            )
        )
        # the block's own symbols, re-expressed in the caller's terms
        shape = blocks.output_shape(sub, b.value(input_name).shape or ())
        return b.add_value(Value(node_id, shape, out.dtype, call.span))

    # -------------------------------------------------------------- program

    def run(self) -> dict[str, Graph]:
        graphs: dict[str, Graph] = {}
        for model in self.program.models:
            if model.name in self.skip or (model.forward is None and model.base is None):
                continue
            info = model_info(model, declared_dims(self.program, model), self.sizes)
            if info.input_shape is None or model.name in graphs:
                continue
            input_type = TensorType(info.input_shape, info.input_dtype)
            span = info.input_shape_span or model.name_span
            if model.base is not None:
                graph = blocks.lower_variant(self, model, info, input_type, span, model.name)
            else:
                graph = self.lower_model(model, info, input_type, span, model.name)
            if graph is not None:
                graphs[model.name] = graph
        return graphs


def lower_program(
    program: ast.AuraneProgram,
    semantic: SemanticResult | None = None,
    *,
    sizes: Mapping[str, int] | None = None,
) -> tuple[dict[str, Graph], list[Diagnostic]]:
    """Lower every model that has an input_shape; blocks appear inside their callers.

    ``semantic`` (the semantic pass's result) names models to skip and carries argument
    bindings to reuse; without it the program is assumed semantically valid.
    """
    skip = semantic.broken_models if semantic else set()
    lowerer = _Lowerer(program, skip, semantic.bound if semantic else {}, sizes)
    graphs = lowerer.run()
    prior = [*(semantic.diagnostics if semantic else ()), *lowerer.diagnostics]
    lowerer.diagnostics.extend(check_jobs(program, graphs, prior))
    return graphs, lowerer.diagnostics


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


def _is_tensor(expr: ast.Expr) -> bool:
    """A graph-form argument that is a tensor (constants are literals by now)."""
    return isinstance(expr, ast.Name | ast.Call | ast.Chain)

"""Program lint rules: dead code (L1xx) from the AST, training mistakes (L2xx) from the IR.

The IR rules read the same graphs as code generation, so they see constants resolved, graph
and chain forms alike, and blocks through their call sites. A model that does not lower is
skipped by them (``aurane check`` reports why).
"""

from __future__ import annotations

from collections.abc import Iterator

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ir.graph import Graph, Node
from aurane.ops import family
from aurane.ops.rules import CONVOLUTION
from aurane.semantics.config import canonical_loss, option_name
from aurane.semantics.constants import MODEL_FIELD_NAMES
from aurane.source import Span
from aurane.syntax import ast

_NON_NEGATIVE = frozenset({"relu", "sigmoid", "softmax", "relu6", "hardsigmoid", "softplus"})
_BIASED = frozenset({*family(CONVOLUTION), "dense"})
_CROSS_ENTROPY = frozenset({"cross_entropy", "cross_entropy_with_label_smoothing"})
_BATCH_FIELDS = frozenset({"batch", "batch_size"})


def program_rules(program: ast.AuraneProgram, text: str, filename: str) -> list[Diagnostic]:
    from aurane.frontend import run_front_end

    found = constant_rules(program) + unused_values(program) + unused_datasets(program)
    front = run_front_end(text, filename)
    if front.resolved is not None:
        found += graph_rules(front.graphs) + job_rules(front.resolved, front.graphs)
    return found


# ---------------------------------------------------------------- AST walks


def names_in(expr: ast.Expr) -> Iterator[ast.Name]:
    pending: list[ast.Expr] = [expr]
    while pending:
        node = pending.pop()
        match node:
            case ast.Name():
                yield node
            case ast.TupleExpr() | ast.ListExpr():
                pending += node.items
            case ast.DictExpr():  # input_shape = {ids: (seq,)}: the values, not the keys
                pending += node.values
            case ast.Call():
                yield ast.Name(node.func, node.func_span)  # act() with act a parameter
                pending += [*node.args, *(k.value for k in node.keywords), *node.layer_holes]
                for suffix in node.suffixes:
                    yield ast.Name(suffix.name, suffix.name_span)  # .act
                    pending += [*suffix.args, *(k.value for k in suffix.keywords)]
            case ast.BinOp() | ast.Compare() | ast.BoolOp():
                pending += [node.left, node.right]
            case ast.UnaryOp() | ast.Not():
                pending.append(node.operand)
            case ast.IfExp():
                pending += [node.body, node.test, node.orelse]
            case ast.Subscript():
                pending += [node.value, node.index]
            case ast.Chain():
                pending += [node.source, *node.steps, *node.layer_holes]


def _values(node: ast.Statement) -> list[ast.Expr]:
    match node:
        case ast.Constant():
            return [node.value]
        case ast.Experiment() | ast.Dataset() | ast.Train() | ast.TrainGan():
            return [f.value for f in node.fields]
        case ast.Model():
            defaults = [p.default for p in node.params if p.default is not None]
            return [f.value for f in node.fields] + _model_reads(node) + defaults
    return []


def _model_reads(model: ast.Model) -> list[ast.Expr]:
    """The forward body's expressions, a variant's block call and the init rules."""
    body = ast.body_expressions(model.forward.body) if model.forward is not None else []
    extra: list[ast.Expr] = [rule.spec for rule in model.inits]
    if model.base is not None:
        extra.append(model.base)
    return body + extra


def _used(exprs: list[ast.Expr]) -> set[str]:
    return {name.id for expr in exprs for name in names_in(expr)}


# ---------------------------------------------------------------- L101, L103


def constant_rules(program: ast.AuraneProgram) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    constants = {c.name: c for c in program.constants}
    used_globally: set[str] = set()
    for statement in program.statements:
        if isinstance(statement, ast.Constant):
            used_globally |= _used([statement.value]) - {statement.name}
        elif isinstance(statement, ast.Model):
            found += _model_constants(statement, constants, used_globally)
        else:
            used_globally |= _used(_values(statement))
    for name, constant in constants.items():
        if name not in used_globally:
            found.append(_unused_constant(name, constant.name_span, "global constant"))
    return found


def _model_constants(
    model: ast.Model, constants: dict[str, ast.Constant], used_globally: set[str]
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    own = {f.name: f for f in model.fields if f.name not in MODEL_FIELD_NAMES}
    used = _used(_values(model))
    params = {p.name: p for p in model.params}  # a block's parameters shadow globals too
    used_globally |= used - set(own) - set(params) | _used(
        [p.default for p in model.params if p.default is not None]
    )
    found += _block_parameters(model, params, constants)
    for name, defined in own.items():
        uses = _used([f.value for f in model.fields if f.name != name])
        uses |= _used(_model_reads(model))
        if name not in uses:
            found.append(
                _unused_constant(name, defined.name_span, f"constant of model '{model.name}'")
            )
        if name in constants:
            found.append(
                diag(
                    "L103",
                    f"model constant '{name}' shadows the global constant of the same name",
                    defined.name_span,
                    hint="rename one of them if the shadowing is not intended",
                    labels=(Label(constants[name].name_span, "the global constant"),),
                )
            )
    return found


def _block_parameters(
    model: ast.Model, params: dict[str, ast.ModelParam], constants: dict[str, ast.Constant]
) -> list[Diagnostic]:
    """L101 for a parameter the block never reads; L103 for one named like a global."""
    found: list[Diagnostic] = []
    uses = _used([f.value for f in model.fields] + _model_reads(model))
    for name, param in params.items():
        if name not in uses:
            found.append(
                diag(
                    "L101",
                    f"parameter '{name}' of model '{model.name}' is never used",
                    param.name_span,
                    hint="use it or delete it",
                )
            )
        if name in constants:
            found.append(
                diag(
                    "L103",
                    f"parameter '{name}' of model '{model.name}' shadows the global constant "
                    "of the same name",
                    param.name_span,
                    hint="rename one of them if the shadowing is not intended",
                    labels=(Label(constants[name].name_span, "the global constant"),),
                )
            )
    return found


def _unused_constant(name: str, span: Span, what: str) -> Diagnostic:
    return diag("L101", f"{what} '{name}' is never used", span, hint="use it or delete it")


# ---------------------------------------------------------------- L102


def unused_values(program: ast.AuraneProgram) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for model in program.models:
        body = model.forward.body if model.forward is not None else ()
        for index, statement in enumerate(body):
            if not isinstance(statement, ast.Assign) or index == len(body) - 1:
                continue  # the last statement's value is the output
            if not _read_later(statement.target, body[index + 1 :]):
                found.append(
                    diag(
                        "L102",
                        f"'{statement.target}' is computed but never used",
                        statement.target_span,
                        hint="use the value or delete the statement",
                    )
                )
    return found


def _read_later(target: str, rest: tuple[ast.ForwardStmt, ...]) -> bool:
    for statement in rest:
        if not isinstance(statement, ast.Assign | ast.ChainStmt | ast.Return):
            return True  # an if or for: read in some branch or iteration, maybe
        if target in _used([ast.statement_value(statement)]):
            return True
        if isinstance(statement, ast.Assign) and statement.target == target:
            return False  # rebound before any read
    return False


# ---------------------------------------------------------------- L105


def unused_datasets(program: ast.AuraneProgram) -> list[Diagnostic]:
    used: set[str] = set()
    for statement in program.statements:
        if isinstance(statement, ast.Train | ast.TrainGan):
            used.add(statement.dataset.id)
            used |= _used([f.value for f in statement.fields])
    return [
        diag(
            "L105",
            f"dataset '{d.name}' is never used by a train or train_gan job",
            d.name_span,
            hint="use it in a job (e.g. validate_on) or delete it",
        )
        for d in program.datasets
        if d.name not in used
    ]


# ---------------------------------------------------------------- IR rules


def _all_graphs(graphs: dict[str, Graph]) -> Iterator[Graph]:
    pending = list(graphs.values())
    while pending:
        graph = pending.pop()
        yield graph
        pending += [n.subgraph for n in graph.nodes if n.subgraph is not None]


def graph_rules(graphs: dict[str, Graph]) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for graph in _all_graphs(graphs):
        producers = {node.output: node for node in graph.nodes}
        for node in graph.nodes:
            source = producers.get(node.inputs[0]) if node.inputs else None
            if source is None:
                continue
            if node.op == "relu" and source.op in _NON_NEGATIVE:
                found.append(_redundant(node, source))
            if node.op == "batchnorm" and _only_feeds(graph, source):
                found.append(_bias_before_norm(source, node))
    for graph in graphs.values():
        last = _producer(graph)
        if last is not None and last.op == "dropout":
            found.append(
                diag(
                    "L202",
                    f"dropout is the last operation of model '{graph.name}'",
                    last.span,
                    hint="move the dropout before the last layer, or delete it",
                )
            )
    return found


def _only_feeds(graph: Graph, layer: Node) -> bool:
    """A biased layer whose output goes to one consumer only (else the bias matters)."""
    if layer.op not in _BIASED or not layer.args.get("bias") or graph.output == layer.output:
        return False
    return sum(node.inputs.count(layer.output) for node in graph.nodes) == 1


def _producer(graph: Graph) -> Node | None:
    return next((n for n in graph.nodes if n.output == graph.output), None)


def _redundant(node: Node, source: Node) -> Diagnostic:
    return diag(
        "L104",
        f"relu has no effect: its input comes from {source.op}, which is never negative",
        node.span,
        hint="delete the redundant relu",
        labels=(Label(source.span, f"{source.op} here"),),
    )


def _bias_before_norm(layer: Node, norm: Node) -> Diagnostic:
    return diag(
        "L201",
        f"the bias of this {layer.op} is cancelled by the batch norm that follows it",
        layer.span,
        hint=f"pass bias=false to {layer.op}: batch norm subtracts the per-channel mean",
        labels=(Label(norm.span, "batch norm here"),),
    )


def job_rules(program: ast.AuraneProgram, graphs: dict[str, Graph]) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    datasets = {d.name: d for d in program.datasets}
    for job in program.statements:
        loss_fields: tuple[str, ...]
        if isinstance(job, ast.Train):
            models, loss_fields = [job.model.id], ("loss",)
            judged = job.model.id
        elif isinstance(job, ast.TrainGan):
            models = [job.generator.id, job.discriminator.id]
            loss_fields, judged = ("generator_loss", "discriminator_loss"), job.discriminator.id
        else:
            continue
        for field in job.fields:
            if field.name in loss_fields and judged in graphs:
                found += _loss_rule(field, graphs[judged])
        dataset = datasets.get(job.dataset.id)
        if dataset is not None:
            found += _batch_one(dataset, [graphs[m] for m in models if m in graphs])
    return found


def _loss_rule(field: ast.Field, graph: Graph) -> list[Diagnostic]:
    loss, last = canonical_loss(option_name(field.value)), _producer(graph)
    if loss is None or last is None:
        return []
    if loss in _CROSS_ENTROPY and last.op == "softmax":
        code, what, fix = "L203", "softmax", "drop the softmax: cross_entropy expects logits"
    elif loss == "bce_with_logits" and last.op == "sigmoid":
        code, what, fix = "L204", "sigmoid", "drop the sigmoid, or use loss = bce"
    else:
        return []
    return [
        diag(
            code,
            f"model '{graph.name}' ends in {what} but is trained with {loss}, which applies "
            f"{what} itself",
            last.span,
            hint=fix,
            labels=(Label(field.value.span, f"{loss} here"),),
        )
    ]


def _batch_one(dataset: ast.Dataset, graphs: list[Graph]) -> list[Diagnostic]:
    batch = next((f for f in dataset.fields if f.name in _BATCH_FIELDS), None)
    if batch is None or not isinstance(batch.value, ast.Number) or batch.value.value != 1:
        return []
    for graph in graphs:
        norm = next(
            (n for g in _all_graphs({"": graph}) for n in g.nodes if n.op == "batchnorm"), None
        )
        if norm is not None:
            return [
                diag(
                    "L205",
                    f"model '{graph.name}' has batch norm but dataset '{dataset.name}' "
                    "has batch = 1",
                    batch.value.span,
                    hint="use a larger batch, or layer_norm instead of batchnorm",
                    labels=(Label(norm.span, "batch norm here"),),
                )
            ]
    return []

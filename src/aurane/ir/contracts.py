"""Data contracts of training jobs: dataset -> model input -> output -> loss -> metrics.

``check_data`` compares what each job's datasets yield (``semantics.data_contracts``) with
the lowered models: sample shape and dtype against the model's input (T092), the model's
output against the targets under the loss (class count against the label range, binary
and regression target shapes; T093), metrics against the loss's task (T094), and the
transforms themselves (T095). Facts that are not known statically are skipped here;
``runtime_check`` says when the generated program must check its first batch instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aurane import ops
from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ir.graph import Graph, Node, Value
from aurane.ops.rules import fmt_shape
from aurane.records import record, replace
from aurane.runtime.tasks import METRICS_BY_TASK
from aurane.semantics import config, feeding
from aurane.semantics.data_contracts import (
    LOSS_TASKS,
    PIL,
    DataContract,
    Origin,
    contract,
)
from aurane.semantics.values import NotLiteral, literal_value
from aurane.source import Span
from aurane.syntax import ast

_FLOATS = config.FLOAT_DTYPES


@record(frozen=True, slots=True)
class _Loss:
    name: str
    task: str
    span: Span | None
    ignore_index: int | None
    weights: int | None = None  # how many class weights ``weight=`` gives


def _fields(stmt: ast.Train | ast.TrainGan) -> dict[str, ast.Field]:
    return {item.name: item for item in stmt.fields}


def _ref(expr: ast.Expr) -> str | None:
    match expr:
        case ast.Name(id=name) | ast.String(value=name):
            return name
    return None


def _loss(stmt: ast.Train) -> _Loss:
    item = _fields(stmt).get("loss")
    if item is None:
        return _Loss("cross_entropy", "class", None, None)
    name = config.canonical_loss(config.option_name(item.value)) or "cross_entropy"
    ignore = None
    weights = None
    if isinstance(item.value, ast.Call):
        for keyword in item.value.keywords:
            try:
                value = literal_value(keyword.value)
            except NotLiteral:
                continue
            if keyword.name == "ignore_index":
                ignore = value
            elif keyword.name == "weight" and isinstance(value, tuple | list):
                weights = len(value)
    return _Loss(name, LOSS_TASKS.get(name, "class"), item.value.span, ignore, weights)


def _int_shape(shape: tuple[Any, ...] | None) -> tuple[int, ...] | None:
    if shape is None or not all(isinstance(d, int) for d in shape):
        return None  # symbolic sizes are not compared here
    return shape


def _input_origin(model: ast.Model | None, graph: Graph) -> Origin:
    item = next((f for f in model.fields if f.name == "input_shape"), None) if model else None
    span = item.value.span if item else graph.input_value.span
    return Origin("`input_shape`", span)


def _classes(output: tuple[int, ...], target: tuple[int, ...]) -> int | None:
    """The class axis's size as the runtime pairs them (``rt.match_target``), or None."""
    if len(output) != len(target) + 1:
        return None
    if len(output) > 1 and output[:-1] == target:
        return output[-1]
    if output[1:] == target:
        return output[0]
    return None


def _inside(span: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (span.line, span.column) and (
        span.end_line,
        span.end_column,
    ) <= (outer.end_line, outer.end_column)


class _JobChecker:
    def __init__(
        self, program: ast.AuraneProgram, graphs: dict[str, Graph], prior: Sequence[Diagnostic]
    ) -> None:
        self.program = program
        self.graphs = graphs
        self.contracts = {d.name: contract(d) for d in program.datasets}
        self.out: list[Diagnostic] = []
        self.errors = [d.span for d in prior if d.is_error and d.span is not None]

    def broken(self, stmt: ast.Train | ast.TrainGan) -> bool:
        """A job, or a dataset it uses, with an error already: its data is not compared
        (the error is the news, and the job may not mean what it says yet)."""
        spans = [stmt.span]
        spans += [d.span for d in self.program.datasets if d.name in self.used(stmt)]
        return any(_inside(error, span) for error in self.errors for span in spans)

    @staticmethod
    def used(stmt: ast.Train | ast.TrainGan) -> set[str]:
        names = {stmt.dataset.id}
        for item in stmt.fields:
            if item.name in ("validate_on", "test_on"):
                names.add(_ref(item.value) or "")
        return names

    def run(self) -> list[Diagnostic]:
        for data in self.contracts.values():
            self.out.extend(data.problems)
        for stmt in self.program.statements:
            if isinstance(stmt, ast.Train | ast.TrainGan) and self.broken(stmt):
                continue
            if isinstance(stmt, ast.Train):
                self.train(stmt)
            elif isinstance(stmt, ast.TrainGan):
                self.gan(stmt)
        return self.out

    # ---------------------------------------------------------------- train

    def train(self, stmt: ast.Train) -> None:
        loss = _loss(stmt)
        graph = self.graphs.get(stmt.model.id)
        model = self.program.model(stmt.model.id)
        index = feeding.output_index(model, stmt) if model is not None else None
        value = None
        if graph is not None:
            value = graph.outputs[index] if index is not None else graph.output_value
        output = _int_shape(value.sample_shape) if value is not None else None
        self.metrics(stmt, loss, output)
        if graph is None or model is None or value is None:
            return
        fields = _fields(stmt)
        uses: list[tuple[str | None, Span]] = [(stmt.dataset.id, stmt.dataset.span)]
        for key in ("validate_on", "test_on"):
            if key in fields:
                uses.append((_ref(fields[key].value), fields[key].value.span))
        for name, span in uses:
            data = self.contracts.get(name) if name else None
            if data is None:
                continue
            if feeding.uses_feed(model, stmt, data):
                if self.fed(model, stmt, data, graph, span) and output is not None:
                    self.targets(data, graph, output, loss, span, value)
                continue
            if self.model_input(data, graph, stmt.model.id, span) and output is not None:
                self.targets(data, graph, output, loss, span)

    def fed(
        self, model: ast.Model, stmt: ast.Train, data: DataContract, graph: Graph, where: Span
    ) -> bool:
        """Samples of several fields against several inputs: every required input fed, no
        field left over (T150, T151), each fed input's shape and dtype (T092). True when
        the targets can be compared."""
        if data.problems:
            return False
        dataset = next((d for d in self.program.datasets if d.name == data.dataset), None)
        source = dataset.source.span if dataset is not None and dataset.source else None
        feed, problems = feeding.plan(model, stmt, data, where, source)
        self.out.extend(problems)
        if problems or not feed.static:
            return False
        fields = feeding.data_fields(data)
        values = graph.inputs
        ok = True
        for (name, key), value in zip(feed.inputs, values, strict=False):
            if key is None or key not in fields:
                continue
            single = replace(graph, input=value.name, input_dtype=value.dtype)
            sample = fields[key]
            what = f"{data.dataset}' field '{key}" if isinstance(key, str) else data.dataset
            shown = replace(data, dataset=what, sample=sample)
            if len(feed.inputs) > 1 and key != name:
                shown = replace(shown, dataset=f"{what}' for input '{name}")
            ok = self.model_input(shown, single, model.name, where) and ok
        if feed.target != feeding.target_key(data):
            return False  # another field is the target: its facts are not known
        return ok

    def model_input(self, data: DataContract, graph: Graph, model: str, where: Span) -> bool:
        """T092 when the samples do not fit the model's input; True when they fit or are
        not known."""
        sample = data.sample
        if data.problems:
            return False
        takes = _int_shape(graph.input_value.sample_shape)
        origin = _input_origin(self.program.model(model), graph)
        labels = [
            Label(sample.origin.span, f"{fmt_shape(sample.shape)} from {sample.origin.what}")
            if sample.origin.span
            else None,
            Label(origin.span, f"model '{model}' takes {fmt_shape(takes)}")
            if origin.span
            else None,
        ]
        if sample.shape is not None and takes is not None and sample.shape != takes:
            self.out.append(
                diag(
                    "T092",
                    f"dataset '{data.dataset}' yields samples of shape {fmt_shape(sample.shape)} "
                    f"from {sample.origin}, but model '{model}' takes {fmt_shape(takes)} "
                    f"from {origin}",
                    where,
                    labels=tuple(label for label in labels if label),
                    hint="make the dataset's sample shape and the model's input_shape agree",
                )
            )
            return False
        has = sample.dtype
        start = graph.input if graph.input_names else None  # one input of several
        needs = unknown_input_needs(graph, start) if graph.input_dtype is None else None
        if graph.input_dtype is None and needs is None:
            return True  # an unknown input dtype no layer constrains: the data's decides
        wants = graph.input_dtype or (needs[0] if needs else None)
        if has is None or wants is None or has in (PIL, wants):
            return True
        if has not in _FLOATS and wants in config.INPUT_INT_DTYPES and has.startswith("int"):
            return True  # int32 and int64 token ids both index embeddings
        made = sample.dtype_origin or sample.origin
        found: list[Label] = [Label(made.span, f"{has} from {made.what}")] if made.span else []
        wanted = f"takes {wants}"
        if needs is not None:  # no input_dtype: what its first layers need of the data
            node = needs[1]
            wanted = f"has no input_dtype and its {node.op} at {node.span} needs {wants} input"
            found.append(Label(node.span, f"{node.op} needs {wants} input"))
        self.out.append(
            diag(
                "T092",
                f"dataset '{data.dataset}' yields {has} samples (from {made}), but model "
                f"'{model}' {wanted}",
                where,
                labels=tuple(found),
                hint="set the model's input_dtype to the data's dtype, or convert the data",
            )
        )
        return False

    def targets(
        self,
        data: DataContract,
        graph: Graph,
        output: tuple[int, ...],
        loss: _Loss,
        where: Span,
        value: Value | None = None,
    ) -> None:
        """T093 when the model's output (``value``: the one the loss reads) does not fit
        the targets under the loss."""
        targets = data.targets
        model = graph.name
        if targets.kind is None or targets.shape is None:
            return
        made = Label((value or graph.output_value).span, f"output {fmt_shape(output)} made here")
        from_data = Label(targets.origin.span, "targets from here") if targets.origin.span else None
        by_loss = Label(loss.span, f"loss {loss.name}") if loss.span else None
        labels = tuple(label for label in (made, from_data, by_loss) if label)

        def report(message: str, hint: str) -> None:
            self.out.append(diag("T093", message, where, labels=labels, hint=hint))

        if loss.task == "class":
            if targets.kind != "class":
                report(
                    f"loss {loss.name} needs integer class labels, but dataset '{data.dataset}' "
                    f"yields {targets.dtype} {targets.kind} targets",
                    "use a regression loss such as mse",
                )
                return
            classes = _classes(output, targets.shape)
            if classes is None:
                report(
                    f"model '{model}' outputs {fmt_shape(output)} per sample, but dataset "
                    f"'{data.dataset}' has targets of shape {fmt_shape(targets.shape)}: "
                    f"{loss.name} needs one class score vector per target",
                    "end the model with dense(number of classes)",
                )
                return
            if targets.classes is not None and classes < targets.classes:
                report(
                    f"model '{model}' outputs {classes} class scores, but dataset "
                    f"'{data.dataset}' has labels 0 to {targets.classes - 1} "
                    f"({targets.classes} classes from {targets.origin})",
                    f"end the model with dense({targets.classes}), or give the dataset "
                    f"{classes} classes",
                )
                return
            if loss.weights is not None and loss.weights != classes:
                report(
                    f"loss {loss.name} has {loss.weights} class weights, but model '{model}' "
                    f"outputs {classes} class scores (torch needs one weight per class)",
                    f"give weight= {classes} numbers",
                )
                return
            if targets.low < 0 and loss.ignore_index != targets.low:
                report(
                    f"dataset '{data.dataset}' marks unlabeled samples with {targets.low} "
                    f"({targets.origin}), which {loss.name} refuses",
                    f"use a labeled split, or {loss.name}(ignore_index={targets.low})",
                )
            return
        shape = targets.shape
        fits = output == shape or (loss.task == "binary" and output == (1,) and shape == ())
        if not fits:
            report(
                f"model '{model}' outputs {fmt_shape(output)} per sample, but dataset "
                f"'{data.dataset}' has targets of shape {fmt_shape(shape)}: {loss.name} needs "
                "the same shape (never broadcast"
                + ("; a (1,) output takes scalar targets)" if loss.task == "binary" else ")"),
                "make the model's output shape equal the targets'",
            )
            return
        if loss.name == "bce" and targets.kind == "class" and (targets.classes or 0) > 2:
            report(
                f"bce needs targets in [0, 1], but dataset '{data.dataset}' has labels 0 to "
                f"{(targets.classes or 0) - 1} (from {targets.origin})",
                "use cross_entropy with dense(number of classes), or a two-class dataset",
            )

    def metrics(self, stmt: ast.Train, loss: _Loss, output: tuple[int, ...] | None) -> None:
        item = _fields(stmt).get("metrics")
        if item is None:
            return
        items = item.value.items if isinstance(item.value, ast.ListExpr | ast.TupleExpr) else ()
        for metric in items or (item.value,):
            name = config.canonical_metric(_ref(metric) or "")
            if name is None:
                continue
            kind = "topk" if name.startswith("top") else name
            if kind not in METRICS_BY_TASK[loss.task]:
                allowed = sorted(METRICS_BY_TASK[loss.task] - {"topk"})
                self.out.append(
                    diag(
                        "T094",
                        f"metric {name} does not apply to loss {loss.name} (a {loss.task} loss)",
                        metric.span,
                        hint="use " + ", ".join(allowed),
                    )
                )

    # ---------------------------------------------------------------- train_gan

    def gan(self, stmt: ast.TrainGan) -> None:
        """Real samples go to the discriminator (cast to the noise's dtype)."""
        graph = self.graphs.get(stmt.discriminator.id)
        data = self.contracts.get(stmt.dataset.id)
        if graph is None or data is None or data.problems:
            return
        sample = data.sample
        takes = _int_shape(graph.input_value.sample_shape)
        if sample.shape is None or takes is None or sample.shape == takes:
            return
        origin = _input_origin(self.program.model(stmt.discriminator.id), graph)
        labels = (
            [Label(origin.span, f"discriminator takes {fmt_shape(takes)}")] if origin.span else []
        )
        if sample.origin.span:
            labels.insert(0, Label(sample.origin.span, f"{fmt_shape(sample.shape)} from here"))
        self.out.append(
            diag(
                "T092",
                f"dataset '{data.dataset}' yields samples of shape {fmt_shape(sample.shape)} "
                f"from {sample.origin}, but discriminator '{stmt.discriminator.id}' takes "
                f"{fmt_shape(takes)} from {origin}",
                stmt.dataset.span,
                labels=tuple(labels),
                hint="make the dataset's sample shape and the discriminator's input_shape agree",
            )
        )


def check_data(
    program: ast.AuraneProgram, graphs: dict[str, Graph], prior: Sequence[Diagnostic] = ()
) -> list[Diagnostic]:
    """Every data-contract diagnostic of the program's datasets and jobs; ``prior``: the
    errors found before (jobs with one of them are skipped)."""
    return _JobChecker(program, graphs, prior).run()


def unknown_input_needs(graph: Graph, start: str | None = None) -> tuple[str, Node] | None:
    """What the first layers of a model without ``input_dtype`` need of its input's dtype,
    and the first node that needs it: ``int64`` (token ids, any integer) for an embedding,
    the parameter dtype for a layer that takes floats; None when nothing constrains it
    (the values a layer reads keep the unknown dtype up to that layer). ``start``: one
    input of several, followed alone through the values of unknown dtype it makes."""
    unknown = {v.name for v in graph.values if v.dtype is None}
    if start is not None:
        values = graph.value_map
        reached = {start}
        for node in graph.nodes:
            if any(name in reached for name in node.inputs):
                made = node.outputs or (node.output,)
                reached.update(n for n in made if n in values and values[n].dtype is None)
        unknown &= reached
    for node in graph.nodes:
        if not any(name in unknown for name in node.inputs):
            continue
        if node.subgraph is not None:
            inner = unknown_input_needs(node.subgraph)
            if inner is not None:
                return inner
            continue
        spec = ops.lookup(node.op)
        if spec is not None and spec.input_dtypes == "int":
            return "int64", node
        if spec is not None and spec.input_dtypes == "float":
            return graph.param_dtype, node
    return None


def runtime_check(dataset: ast.Dataset | None) -> bool:
    """True when the generated job must check this dataset's first batch: its samples, or
    the class range of its labels, are not known statically."""
    if dataset is None:
        return False
    data = contract(dataset)
    targets = data.targets
    labels_known = targets.kind is not None and targets.shape is not None
    if targets.kind == "class":
        labels_known = labels_known and targets.classes is not None
    return not data.sample_known or not labels_known


def _self_attention_inputs(graph: Graph) -> list[tuple[Any, tuple[Any, ...] | None]]:
    """(node, input sample shape) of every self-attention in ``graph`` and its blocks."""
    values = graph.value_map
    found: list[tuple[Any, tuple[Any, ...] | None]] = []
    for node in graph.nodes:
        if node.op == "multihead_attention" and len(node.inputs) == 1:
            found.append((node, values[node.inputs[0]].sample_shape))
        elif node.subgraph is not None:
            found.extend(_self_attention_inputs(node.subgraph))
    return found


def padding_mask_length(graph: Graph, padding_span: Span | None) -> Diagnostic | None:
    """T096 when the ``input_padding_idx`` mask, (batch, sequence) of the input tokens, no
    longer has the length of the sequence that self-attention reads."""
    tokens = graph.input_value.sample_shape
    if graph.padding_idx is None or padding_span is None or tokens is None or len(tokens) != 1:
        return None
    for node, shape in _self_attention_inputs(graph):
        if shape is None or not shape or not isinstance(shape[0], int) or shape[0] == tokens[0]:
            continue
        return diag(
            "T096",
            f"input_padding_idx masks {tokens[0]} input positions, but this self-attention "
            f"reads a sequence of {shape[0]} (its input is {fmt_shape(shape)})",
            node.span,
            labels=(Label(padding_span, f"mask of {tokens[0]} positions from here"),),
            hint="keep the sequence length until attention, or drop input_padding_idx",
        )
    return None

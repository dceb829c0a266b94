"""Type checks of training jobs against the lowered graphs (GAN boundary, loss fit)."""

from __future__ import annotations

from collections.abc import Sequence

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ir.contracts import check_data
from aurane.ir.graph import Graph
from aurane.ops.rules import fmt_shape as _shape
from aurane.semantics import config
from aurane.source import Span
from aurane.syntax import ast


def _loss_field(fields: tuple[ast.Field, ...], name: str) -> tuple[str | None, ast.Field | None]:
    """The loss field ``name`` and its loss: the catalog name, or as written when unknown."""
    for item in fields:
        if item.name == name:
            written = config.option_name(item.value)
            return config.canonical_loss(written) or written, item
    return None, None


def _check_png_samples(stmt: ast.TrainGan, gen: Graph) -> list[Diagnostic]:
    """PNG sample grids need (1 or 3 channels, height, width) generator outputs."""
    item = next((f for f in stmt.fields if f.name == "sample_format"), None)
    if item is None or not isinstance(item.value, ast.String) or item.value.value == "tensor":
        return []
    shape = gen.output_value.sample_shape
    if shape is not None and len(shape) == 3 and shape[0] in (1, 3):
        return []
    return [
        diag(
            "T008",
            f"sample_format {item.value.value!r} writes image grids, but generator "
            f"'{gen.name}' produces shape {_shape(shape)}, not (1 or 3 channels, height, width)",
            item.value.span,
            labels=(Label(gen.output_value.span, "generator output made here"),),
            hint='use sample_format = "tensor" or reshape the output to (C, H, W)',
        )
    ]


def _output_expression_span(model: ast.Model) -> Span | None:
    """The operations that make a model's output: the last statement's chain steps or call."""
    if model.forward is None or not model.forward.body:
        return None
    last = model.forward.body[-1]
    if isinstance(last, ast.If | ast.For):  # resolved programs have none; be safe
        return None
    value = ast.statement_value(last)
    if isinstance(value, ast.Chain) and value.steps:
        return value.steps[0].span.merge(value.steps[-1].span)
    return value.span


def _last_activation(graph: Graph) -> str | None:
    node = next((n for n in graph.nodes if n.output == graph.output), None)
    return node.op if node else None


def check_jobs(
    program: ast.AuraneProgram, graphs: dict[str, Graph], prior: Sequence[Diagnostic] = ()
) -> list[Diagnostic]:
    """GAN boundaries and data contracts; ``prior``: errors found so far (a job with one
    in its block or its datasets is not checked against its data)."""
    out: list[Diagnostic] = []
    for stmt in program.statements:
        if isinstance(stmt, ast.TrainGan):
            out.extend(_check_gan(stmt, graphs, program))
    out.extend(check_data(program, graphs, prior))  # datasets -> models -> losses
    return out


def _check_gan(
    stmt: ast.TrainGan, graphs: dict[str, Graph], program: ast.AuraneProgram
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    gen = graphs.get(stmt.generator.id)
    disc = graphs.get(stmt.discriminator.id)
    if gen is None or disc is None:
        return out
    produced = gen.output_value
    expected = disc.input_value
    if produced.sample_shape != expected.sample_shape:
        gen_model = program.model(stmt.generator.id)
        disc_model = program.model(stmt.discriminator.id)
        shape_field = (
            next((f for f in disc_model.fields if f.name == "input_shape"), None)
            if disc_model
            else None
        )
        labels = [
            Label(stmt.generator.span, "generator of this train_gan job"),
            Label(stmt.discriminator.span, "discriminator"),
        ]
        if shape_field is not None:
            labels.append(
                Label(
                    shape_field.value.span,
                    f"discriminator input_shape {_shape(expected.sample_shape)}",
                )
            )
        primary = _output_expression_span(gen_model) if gen_model else None
        out.append(
            diag(
                "T008",
                f"generator '{gen.name}' produces shape {_shape(produced.sample_shape)} but "
                f"discriminator '{disc.name}' takes {_shape(expected.sample_shape)}",
                primary or produced.span,
                labels=tuple(labels),
                hint="make the generator's output shape equal the discriminator's input_shape",
            )
        )
    if gen.input_dtype is not None and gen.input_dtype not in config.FLOAT_DTYPES:
        out.append(
            diag(
                "T003",
                f"generator '{gen.name}' takes {gen.input_dtype} input, but GAN noise is "
                "floating point",
                stmt.generator.span,
                hint="use a floating input_dtype",
            )
        )
    # a discriminator without input_dtype takes what its parameters are (float32 Linear
    # weights refuse a float64 batch at run time)
    takes = expected.dtype or disc.param_dtype
    if (
        produced.sample_shape == expected.sample_shape
        and None not in (produced.dtype, takes)
        and produced.dtype != takes
    ):
        out.append(
            diag(
                "T008",
                f"generator '{gen.name}' produces {produced.dtype} but discriminator "
                f"'{disc.name}' takes {takes}",
                stmt.generator.span,
                labels=(Label(produced.span, f"{produced.dtype} output made here"),),
                hint="give both models the same floating input_dtype",
            )
        )
    out.extend(_check_png_samples(stmt, gen))
    loss, item = _loss_field(stmt.fields, "discriminator_loss")
    last = _last_activation(disc)
    if item is not None and loss == "bce" and last != "sigmoid":
        out.append(
            diag(
                "T009",
                "discriminator_loss bce needs probabilities, but the discriminator does not "
                "end in sigmoid",
                item.value.span,
                labels=(Label(disc.output_value.span, "output made here"),),
                hint="end the discriminator with .sigmoid or use bce_with_logits",
            )
        )
    if item is not None and loss == "bce_with_logits" and last == "sigmoid":
        out.append(
            diag(
                "T009",
                "bce_with_logits applies its own sigmoid; the discriminator already ends in "
                "sigmoid",
                item.value.span,
                labels=(Label(disc.output_value.span, "sigmoid here"),),
                hint="remove .sigmoid or use bce",
            )
        )
    return out

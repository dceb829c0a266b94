"""Training code for a program: dataset factories, train and train_gan functions, helpers.

``emit_jobs`` is called by the model code generator. Configuration comes from the
resolved AST and the catalogs in ``aurane.semantics.config``; shapes come from the IR.
Everything emitted is deterministic: the same program gives the same text.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from aurane.backends.torch import data_check, data_emit, gan, training
from aurane.backends.torch.data_emit import (
    Experiment,
    Option,
    block_fields,
    dataset_ref,
    field_literal,
    format_call,
    format_literal,
    loader_name,
    quote,
    read_option,
)
from aurane.backends.torch.runtime import fill
from aurane.ir.graph import Graph
from aurane.records import record
from aurane.runtime.version import RUNTIME_VERSION
from aurane.semantics import config as catalog
from aurane.semantics.values import literal_value
from aurane.syntax import ast

# The loss decides how outputs pair with targets and how metrics read the outputs.
_TASKS = {
    "cross_entropy": ("class", "logits"),
    "cross_entropy_with_label_smoothing": ("class", "logits"),
    "nll": ("class", "log_probabilities"),
    "bce": ("binary", "probabilities"),
    "bce_with_logits": ("binary", "logits"),
    "mse": ("regression", "outputs"),
    "mae": ("regression", "outputs"),
    "huber": ("regression", "outputs"),
}
_EPOCH_SCHEDULERS = {"step_lr", "exponential_lr", "cosine_annealing"}


RUNTIME_IMPORT = "from aurane import runtime as rt"
# The runtime version this compiler's jobs are written for (``aurane.runtime.version``).
REQUIRE_LINE = f"rt.require({RUNTIME_VERSION})  # the Aurane runtime this file was compiled for"


# Every name a generated job function binds or reads besides the model classes and its
# own parameters: a model class must not take one (issue 11 reserves them in names.py).
JOB_LOCALS = frozenset(
    {
        "rt",
        "nn",
        "torch",
        # train
        "device",
        "loss_fn",
        "optimizer",
        "scheduler",
        "scaler",
        "amp_dtype",
        "stats",
        "run",
        "net",
        "epoch",
        "inputs",
        "targets",
        "outputs",
        "loss",
        "scores",
        "val_scores",
        "test_metrics",
        "data_check",
        # train_gan
        "discriminator_steps",
        "generator_steps",
        "g_optimizer",
        "d_optimizer",
        "g_loss_fn",
        "d_loss_fn",
        "noise_shape",
        "sample_shape",
        "generate_samples_every",
        "noise_source",
        "fixed_noise",
        "running_loss",
        "g_net",
        "d_net",
        "sums",
        "totals",
        "batch",
        "real",
        "size",
        "noise",
        "fake",
        "real_out",
        "fake_out",
        "d_loss_real",
        "d_loss_fake",
        "frozen",
        "judged",
        "g_loss",
        "images",
    }
)


@record(frozen=True)
class JobCode:
    """What the training emitter contributes to a file (``TorchCodeGenerator`` places it)."""

    imports: tuple[str, ...]  # full import lines, e.g. "import torchvision"
    sections: tuple[str, ...]  # top-level code blocks (functions), in order
    main: tuple[str, ...]  # statements for `if __name__ == "__main__":`, unindented


def _experiment(program: ast.AuraneProgram) -> Experiment:
    block = next((s for s in program.statements if isinstance(s, ast.Experiment)), None)
    values = block_fields(block.fields, catalog.EXPERIMENT_TABLE) if block else {}
    read = {key: literal_value(expr) for key, expr in values.items()}
    return Experiment(read.get("seed"), read.get("device", "auto"), read.get("precision", "fp32"))


def _callbacks(fields: dict[str, ast.Expr]) -> dict[str, Option]:
    found = (read_option(item, catalog.CALLBACK_TABLE) for item in _list(fields.get("callbacks")))
    return {option.name: option for option in found}


def _amp_dtype(experiment: Experiment) -> str:
    return "torch.bfloat16" if experiment.precision == "bf16" else "torch.float16"


def _uses_amp(fields: dict[str, ast.Expr], experiment: Experiment) -> bool:
    return bool(field_literal(fields, "mixed_precision", False)) or experiment.precision != "fp32"


def _scheduler(option: Option, epochs: int) -> tuple[list[str], str, dict[str, Any]]:
    kwargs = dict(option.kwargs)
    if option.name == "cosine_annealing" and kwargs.get("T_max") is None:
        kwargs["T_max"] = epochs  # SPEC: T_max defaults to the job's epochs
    args = [f"{key}={format_literal(value)}" for key, value in kwargs.items()]
    if option.name == "warmup_cosine":
        lines = format_call("scheduler = rt.warmup_cosine", ["optimizer", *args], 4)
        return lines, "step", kwargs
    head = f"scheduler = torch.optim.lr_scheduler.{option.spec.torch_name}"
    when = "plateau" if option.name == "reduce_lr_on_plateau" else "epoch"
    return format_call(head, ["optimizer", *args], 4), when, kwargs


def emit_train(
    stmt: ast.Train,
    name: str,
    class_name: str,
    experiment: Experiment,
    *,
    program: ast.AuraneProgram | None = None,
    graph: Graph | None = None,
) -> str:
    """The ``train_<model>`` function source (``program`` and ``graph``: to check the first
    batch of data not known statically)."""
    fields = block_fields(stmt.fields, catalog.TRAIN_TABLE)
    callbacks = _callbacks(fields)
    epochs = int(field_literal(fields, "epochs", 1))
    loss = read_option(fields.get("loss", ast.Name("cross_entropy", stmt.span)), catalog.LOSS_TABLE)
    task, outputs = _TASKS[loss.name]
    opt_expr = fields.get("optimizer", ast.Name("adam", stmt.span))
    optimizer = read_option(opt_expr, catalog.OPTIMIZER_TABLE)
    opt_lines, opt_used = data_emit.optimizer_source(
        optimizer, field_literal(fields, "lr"), "model.parameters()", "optimizer", 4
    )
    metrics = [catalog.canonical_metric(dataset_ref(m)) for m in _list(fields.get("metrics"))]
    flags: set[str] = set()
    values: dict[str, str] = {}
    config: dict[str, Any] = {
        "model": stmt.model.id,
        "loss": [loss.name, loss.kwargs],
        "optimizer": [optimizer.name, opt_used],
    }
    if "scheduler" in fields:
        sched = read_option(fields["scheduler"], catalog.SCHEDULER_TABLE)
        lines, when, used = _scheduler(sched, epochs)
        flags |= {"sched", f"{when}_sched"}
        values["scheduler"] = "\n".join(lines)
        config["scheduler"] = [sched.name, used]
    data_emit.add_clip(fields, flags, values, config)
    if _uses_amp(fields, experiment):
        flags.add("amp")
        config["mixed_precision"] = experiment.precision if experiment.precision != "fp32" else True
    early = field_literal(fields, "early_stopping", False) or "early_stopping" in callbacks
    es_options = callbacks["early_stopping"].kwargs if "early_stopping" in callbacks else {}
    es_spec = catalog.CALLBACK_TABLE["early_stopping"]
    patience = field_literal(
        fields, "patience", es_options.get("patience", data_emit.default_of(es_spec, "patience"))
    )
    min_delta = field_literal(fields, "min_delta", es_options.get("min_delta", 0.0))
    if early:
        flags.add("es")
        config["early_stopping"] = {"patience": patience, "min_delta": min_delta}
    ckpt = data_emit.add_checkpointing(fields, callbacks, name, flags)
    validate = dataset_ref(fields["validate_on"]) if "validate_on" in fields else None
    test = dataset_ref(fields["test_on"]) if "test_on" in fields else None
    monitor = "val_loss" if validate else "loss"
    dataset = stmt.dataset.id
    if validate:
        flags.add("val")
        values["make_val"] = loader_name(validate)
    if test:
        flags.add("test")
        values["make_test"] = loader_name(test)
    title = f"Train {class_name} on {dataset}" + (f", validated on {validate}" if validate else "")
    ignore = loss.kwargs.get("ignore_index")
    values.update(data_emit.job_values(name, title, epochs, experiment, dataset))
    values.update(
        model_class=class_name,
        loss="\n".join(data_emit.loss_source(loss, "loss_fn", 4)),
        optimizer="\n".join(opt_lines),
        amp_dtype=_amp_dtype(experiment),
        task=quote(task),
        stats="\n".join(
            format_call(
                "stats = rt.EpochStats",
                [
                    data_emit.literal_doc(metrics),
                    f"task={quote(task)}",
                    f"outputs={quote(outputs)}",
                    *([f"ignore_index={ignore!r}"] if ignore is not None else []),
                ],
                4,
            )
        ),
        train_what=quote(f"training data {dataset!r}"),
        plateau_value='val_scores["loss"]' if validate else 'scores["loss"]',
        end_epoch=f"            run.end_epoch(epoch, scores{', val_scores' if validate else ''})",
        finish_args="model" + (", test_metrics=test_metrics" if test else ""),
    )
    state = {"model": "model", "optimizer": "optimizer"}
    state.update(
        {key: key for key, flag in (("scheduler", "sched"), ("scaler", "amp")) if flag in flags}
    )
    extra: list[data_emit.Doc] = [] if monitor == "loss" else [f"monitor={quote(monitor)}"]
    if early:
        extra.append(f"patience={patience!r}")
        extra += [f"min_delta={min_delta!r}"] if min_delta else []
    extra += data_emit.log_every_args(fields)
    loaders = ["train_loader", "validation_loader", "test_loader"]
    values["run"] = data_emit.run_call(name, "train", config, state, loaders, ckpt, epochs, extra)
    amp_arg = ["amp_dtype=amp_dtype"] if "amp" in flags else []
    unknown = set()
    if program is not None and graph is not None:
        unknown = data_check.unknown_datasets(program, [dataset, validate, test])
    check = None
    if unknown and graph is not None:
        check = data_check.batch_check(stmt.model.id, graph, loss=loss.name, ignore_index=ignore)
    if check is not None:
        flags |= {"check", *(["check_train"] if dataset in unknown else [])}
        values["data_check"] = check
    for role, loader, what in (
        ("val", "validation_loader", validate),
        ("test", "test_loader", test),
    ):
        if what is not None:
            label = "validation" if role == "val" else "test"
            args = [
                "model",
                loader,
                "loss_fn",
                "stats",
                "device",
                quote(f"{label} data {what!r}"),
                *amp_arg,
                *(["check=data_check"] if check is not None and what in unknown else []),
            ]
            target = "val_scores" if role == "val" else "test_metrics"
            values[f"{role}_call"] = "\n".join(
                format_call(f"{target} = rt.evaluate", args, 12 if role == "val" else 8)
            )
    return fill(training.TRAIN_TEMPLATE, flags, values)


def _list(expr: ast.Expr | None) -> tuple[ast.Expr, ...]:
    if expr is None:
        return ()
    return expr.items if isinstance(expr, ast.ListExpr | ast.TupleExpr) else (expr,)


def job_names(program: ast.AuraneProgram) -> list[tuple[ast.Train | ast.TrainGan, str]]:
    """``train_<model>`` / ``train_gan_<generator>``, with ``_2``, ``_3`` for repeats."""
    seen: dict[str, int] = {}
    jobs: list[tuple[ast.Train | ast.TrainGan, str]] = []
    for stmt in program.statements:
        if isinstance(stmt, ast.Train):
            base = f"train_{stmt.model.id.lower()}"
        elif isinstance(stmt, ast.TrainGan):
            base = f"train_gan_{stmt.generator.id.lower()}"
        else:
            continue
        base = unicodedata.normalize("NFKC", base)  # as Python reads it: `ｎet` is `net`
        seen[base] = seen.get(base, 0) + 1
        jobs.append((stmt, base if seen[base] == 1 else f"{base}_{seen[base]}"))
    return jobs


def _used_datasets(jobs: list[tuple[ast.Train | ast.TrainGan, str]]) -> set[str]:
    used = set()
    for stmt, _ in jobs:
        used.add(stmt.dataset.id)
        if isinstance(stmt, ast.Train):
            fields = block_fields(stmt.fields, catalog.TRAIN_TABLE)
            used |= {
                dataset_ref(fields[key]) for key in ("validate_on", "test_on") if key in fields
            }
    return used


def emit_jobs(
    program: ast.AuraneProgram, graphs: dict[str, Graph], class_names: dict[str, str]
) -> JobCode:
    """Imports, top-level sections and main-guard statements for every dataset and job."""
    experiment = _experiment(program)
    jobs = job_names(program)
    if not jobs and not program.datasets:
        return JobCode(imports=(), sections=(), main=())
    used = _used_datasets(jobs)
    imports: set[str] = {"import torch", RUNTIME_IMPORT}
    if jobs:
        imports.add("from torch import nn")
    sections: list[str] = [REQUIRE_LINE]
    for dataset in program.datasets:
        info = data_emit.dataset_info(dataset)
        imports.update(data_emit.imports_for(info))
        if dataset.name in used or info.source is not None:
            sections.append(data_emit.emit_loader_factory(info))
    names: list[str] = []
    for stmt, name in jobs:
        if isinstance(stmt, ast.Train):
            code = emit_train(
                stmt,
                name,
                class_names[stmt.model.id],
                experiment,
                program=program,
                graph=graphs.get(stmt.model.id),
            )
        else:
            code = gan.emit_gan(stmt, name, graphs, class_names, experiment, program)
        sections.append(code)
        names.append(name)
    main = ("rt.main(" + ", ".join(names) + ")",) if names else ()
    return JobCode(
        imports=tuple(sorted(imports)),  # the generator groups and merges them
        sections=tuple(sections),
        main=main,
    )

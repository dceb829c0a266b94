"""Training code for a program: dataset factories, train and train_gan functions, helpers.

``emit_jobs`` is called by the model code generator. Configuration comes from the
resolved AST and the catalogs in ``aurane.semantics.config``; shapes come from the IR.
Everything emitted is deterministic: the same program gives the same text.
"""

from __future__ import annotations

import unicodedata
from typing import Any

# The siblings are imported by their own paths: this package's __init__ imports this module.
import aurane.backends.torch.data_check as data_check
import aurane.backends.torch.data_emit as data_emit
import aurane.backends.torch.gan as gan
import aurane.backends.torch.training as training
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
from aurane.semantics import feeding
from aurane.semantics.data_contracts import contract
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
        "budget",
        "stats",
        "val_stats",
        "validate",
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
        "feed",
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


def _uses_amp(fields: dict[str, ast.Expr], experiment: Experiment) -> bool:
    return bool(field_literal(fields, "mixed_precision", False)) or experiment.precision != "fp32"


# Optimizers with a fused (single-kernel) CUDA implementation; torch picks foreach (one
# kernel per group of tensors) for the others on CUDA by itself.
_FUSED = {"adam", "adamw", "sgd"}


def _optimizer_source(
    option: Option, fields: dict[str, ast.Expr], config: dict[str, Any]
) -> list[str]:
    """``optimizer = torch.optim.<Opt>(...)``: weight decay in groups that leave out biases,
    norms and embeddings (``no_weight_decay``), fused kernels on CUDA where torch has them.
    Records the options used (and the groups) in ``config``."""
    kwargs = dict(option.kwargs)
    lr = kwargs.pop("lr", None)
    if lr is None:
        lr = field_literal(fields, "lr")
    used = {"lr": lr if lr is not None else 0.001, **kwargs}
    config["optimizer"] = [option.name, used]
    decay = used.get("weight_decay", data_emit.default_of(option.spec, "weight_decay"))
    skip = field_literal(fields, "no_weight_decay", list(catalog.NO_WEIGHT_DECAY_DEFAULT))
    params: data_emit.Doc = "model.parameters()"
    if decay and skip:
        used = {key: value for key, value in used.items() if key != "weight_decay"}
        args = ["model", repr(decay)]
        if list(skip) != list(catalog.NO_WEIGHT_DECAY_DEFAULT):
            args.append(format_literal(list(skip)))
        params = data_emit.Seq("rt.decay_groups", tuple(args))
        config["weight_decay_groups"] = list(skip)
    items: list[data_emit.Doc] = [params]
    items += [data_emit.literal_doc(value, f"{key}=") for key, value in used.items()]
    if option.name in _FUSED:
        items.append('fused=device.type == "cuda"')
    head = f"optimizer = torch.optim.{option.spec.torch_name}"
    return format_call(head, items, 4)


def _scheduler(option: Option) -> tuple[list[str], str, dict[str, Any]]:
    """The scheduler line, when it steps ("step", "epoch", "plateau"), and its options as
    written; a length the program leaves out comes from ``budget`` (the run's)."""
    kwargs = dict(option.kwargs)
    args = [f"{key}={format_literal(value)}" for key, value in kwargs.items()]
    if option.name == "cosine_annealing" and kwargs.get("T_max") is None:
        args.append("T_max=budget.epochs")  # SPEC: T_max defaults to the job's epochs
    if option.name == "warmup_cosine":
        if kwargs.get("max_steps") is None:
            args.append("max_steps=budget.total_steps()")
        lines = format_call("scheduler = rt.warmup_cosine", ["optimizer", *args], 4)
        return lines, "step", kwargs
    head = f"scheduler = torch.optim.lr_scheduler.{option.spec.torch_name}"
    when = "plateau" if option.name == "reduce_lr_on_plateau" else "epoch"
    return format_call(head, ["optimizer", *args], 4), when, kwargs


def _sized_by_run(option: Option) -> bool:
    """Whether the schedule's length is the run's (a length the program leaves out)."""
    if option.name == "cosine_annealing":
        return option.kwargs.get("T_max") is None
    return option.name == "warmup_cosine" and option.kwargs.get("max_steps") is None


def _amp_lines(experiment: Experiment) -> tuple[list[str], bool]:
    """The autocast set-up and whether fp16's gradient scaler is used."""
    if experiment.precision == "bf16":
        return [
            "    # bf16 autocast on every device; bfloat16 keeps float32's range: no loss scaling",
            "    amp_dtype = torch.bfloat16",
        ], False
    return [
        "    # fp16 autocast with a gradient scaler on CUDA; full precision elsewhere",
        '    amp_dtype = torch.float16 if device.type == "cuda" else None',
        '    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype is not None)',
    ], True


def _forward(
    task: str, amp: bool, indent: int, feed: bool = False, pick: tuple[int, str] | None = None
) -> str:
    """The forward pass and the loss's pairing; ``feed``: the model takes the fed inputs;
    ``pick``: the output the loss reads of several (its index and name)."""
    template = training.FORWARD_AMP if amp else training.FORWARD
    if pick is not None and not amp:
        template = training.FORWARD_PICK
    picked = f"[{pick[0]}]  # output = {pick[1]}" if pick is not None else ""
    text = template.replace("$task", task).replace("$pick", picked)
    if feed:
        text = text.replace("net(inputs)", "net(*inputs)")
    return "\n".join(" " * indent + line for line in text.split("\n"))


def _feed_line(model: ast.Model, stmt: ast.Train, program: ast.AuraneProgram) -> str | None:
    """``feed = rt.Feed(...)`` when the job feeds the model from samples of several fields
    (None for the one-tensor ``(inputs, targets)`` pairs): the fields resolved here when
    every dataset of the job is known and they agree, else by name or position at run
    time (with the fields ``inputs = {...}`` names)."""
    fields = block_fields(stmt.fields, catalog.TRAIN_TABLE)
    names = [stmt.dataset.id]
    names += [dataset_ref(fields[key]) for key in ("validate_on", "test_on") if key in fields]
    datasets = {d.name: d for d in program.datasets}
    contracts = [contract(datasets[n]) if n in datasets else None for n in names]
    if not any(feeding.uses_feed(model, stmt, data) for data in contracts):
        return None
    plans = [feeding.plan(model, stmt, data, stmt.dataset.span)[0] for data in contracts]
    plan = plans[0]
    if plan.static and all(other == plan for other in plans):
        items = tuple(f"{quote(n)}: {_key_source(k)}" for n, k in plan.inputs)
        args: list[data_emit.Doc] = [data_emit.Seq("", items, "{}")]
        comment = "  # input: field"
        target = plan.target
    else:
        args = [format_literal([name for name, _ in plan.inputs])]
        mapping, given = feeding.given_fields(stmt)
        if mapping:
            items = tuple(f"{quote(n)}: {_key_source(k)}" for n, k in mapping.items())
            args.append(data_emit.Seq("fields=", items, "{}"))
        inputs = model.forward.inputs if model.forward else ()
        optional = [p.name for p in inputs if p.default is not None]
        args += [f"optional={format_literal(optional)}"] if optional else []
        comment = "  # by field name, or position"
        target = given
    if target is not None:
        args.append(f"target={_key_source(target)}")
    lines = format_call("feed = rt.Feed", args, 4)
    lines[-1] += comment if len(lines[-1]) + len(comment) <= 100 else ""
    return "\n".join(lines)


def _key_source(key: str | int | None) -> str:
    return "None" if key is None else quote(key) if isinstance(key, str) else repr(key)


def _budget(fields: dict[str, ast.Expr]) -> tuple[int | None, int | None, int]:
    """(epochs, max_steps, accumulate) as the job gives them (epochs 1 when neither)."""
    max_steps = field_literal(fields, "max_steps")
    epochs = field_literal(fields, "epochs", None if max_steps is not None else 1)
    return epochs, max_steps, int(field_literal(fields, "accumulate", 1))


def _length_args(epochs: int | None, max_steps: int | None, accumulate: int) -> list[str]:
    args = [] if epochs is None else [f"epochs={epochs!r}"]
    args += [] if max_steps is None else [f"max_steps={max_steps!r}"]
    return args + ([] if accumulate == 1 else [f"accumulate={accumulate!r}"])


def _length_doc(epochs: int | None, max_steps: int | None) -> str:
    parts = [] if epochs is None else [f"{epochs} epoch{'s' if epochs != 1 else ''}"]
    parts += [] if max_steps is None else [f"at most {max_steps} steps"]
    return " and ".join(parts)


def _run_call(
    name: str,
    config: dict[str, Any],
    state: dict[str, str],
    length: list[str],
    ckpt: data_emit.Checkpointing | None,
    extra: list[data_emit.Doc],
) -> str:
    """The job's ``with rt.Run(...) as run:`` line (folders, resume, checkpoints, budget)."""
    items = tuple(f"{quote(key)}: {value}" for key, value in state.items())
    args: list[data_emit.Doc] = [
        quote(name),
        *length,
        data_emit.literal_doc(config, "config="),
        data_emit.Seq("state=", items, "{}"),
        data_emit.Seq("loaders=", ("train_loader", "validation_loader", "test_loader"), "[]"),
    ]
    if ckpt is not None:
        folder, every, save_best = ckpt
        args.append(f"checkpoint_dir={quote(folder)}")
        args += ["save_best=True"] if save_best else []
        args += [f"checkpoint_every={every!r}"] if every is not None else []
    args += ["resume_from=resume_from", *extra]
    return "\n".join(format_call("with rt.Run", args, 4, " as run:"))


def emit_train(
    stmt: ast.Train,
    name: str,
    class_name: str,
    experiment: Experiment,
    *,
    program: ast.AuraneProgram | None = None,
    graph: Graph | None = None,
    units: tuple[str, ...] = (),
) -> str:
    """The ``train_<model>`` function source (``program`` and ``graph``: to check the first
    batch of data not known statically; ``units``: the classes of the blocks the model
    calls, sharded and checkpointed one by one)."""
    fields = block_fields(stmt.fields, catalog.TRAIN_TABLE)
    callbacks = _callbacks(fields)
    epochs, max_steps, accumulate = _budget(fields)
    loss = read_option(fields.get("loss", ast.Name("cross_entropy", stmt.span)), catalog.LOSS_TABLE)
    task, outputs = _TASKS[loss.name]
    opt_expr = fields.get("optimizer", ast.Name("adam", stmt.span))
    optimizer = read_option(opt_expr, catalog.OPTIMIZER_TABLE)
    metrics = [catalog.canonical_metric(dataset_ref(m)) for m in _list(fields.get("metrics"))]
    flags: set[str] = set()
    values: dict[str, str] = {}
    config: dict[str, Any] = {"model": stmt.model.id, "loss": [loss.name, loss.kwargs]}
    opt_lines = _optimizer_source(optimizer, fields, config)
    length = _length_args(epochs, max_steps, accumulate)
    if "scheduler" in fields:
        sched = read_option(fields["scheduler"], catalog.SCHEDULER_TABLE)
        sized = _sized_by_run(sched)
        lines, when, used = _scheduler(sched)
        flags |= {"sched", f"{when}_sched"}
        values["scheduler"] = "\n".join(lines)
        config["scheduler"] = [sched.name, used]
        if sized:
            flags.add("budget")
            budget = format_call("budget = rt.Budget", ["train_loader", *length], 4)
            budget[-1] += "  # the run's length sizes the schedule"
            values["budget"] = "\n".join(budget)
            length = ["budget=budget"]
    data_emit.add_clip(fields, flags, values, config)
    if accumulate > 1:
        flags.add("accum")
        config["accumulate"] = accumulate
    if _uses_amp(fields, experiment):
        amp_lines, scaler = _amp_lines(experiment)
        flags |= {"amp", *(["scaler"] if scaler else [])}
        values["amp"] = "\n".join(amp_lines)
        config["mixed_precision"] = experiment.precision if experiment.precision != "fp32" else True
    if field_literal(fields, "compile", False):
        flags.add("compile")
    channels = bool(field_literal(fields, "channels_last", False))
    if channels:
        flags.add("channels")
    wrapping = _wrapping(fields, class_name, units)
    if field_literal(fields, "strategy", "ddp") == "fsdp":
        flags.add("fsdp")
    if wrapping:
        flags.add("wrap")
        values["wrap"] = "\n".join(wrapping)
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
    values.update(data_emit.job_values(name, title, epochs or 1, experiment, dataset))
    values["doc"] = f"{title}, for {_length_doc(epochs, max_steps)}."
    stats_args: list[data_emit.Doc] = [
        data_emit.literal_doc(metrics),
        f"task={quote(task)}",
        f"outputs={quote(outputs)}",
        *([f"ignore_index={ignore!r}"] if ignore is not None else []),
    ]
    amp = "amp" in flags
    net = "torch.compile(model)" if "compile" in flags else "model"
    model_ast = program.model(stmt.model.id) if program is not None else None
    feed = _feed_line(model_ast, stmt, program) if model_ast and program else None
    pick = None
    index = feeding.output_index(model_ast, stmt) if model_ast is not None else None
    if index is not None and model_ast is not None:
        pick = (index, feeding.output_names(model_ast)[index] or str(index))
    if feed is not None:
        flags.add("feed")
        values["feed"] = feed
    values.update(
        model_class=class_name,
        loss="\n".join(data_emit.loss_source(loss, "loss_fn", 4)),
        optimizer="\n".join(opt_lines),
        task=quote(task),
        stats="\n".join(format_call("stats = rt.EpochStats", stats_args, 4)),
        train_what=quote(f"training data {dataset!r}"),
        plateau_value='val_scores["loss"]' if validate else 'scores["loss"]',
        end_epoch=f"            run.end_epoch(epoch, scores{', val_scores' if validate else ''})",
        finish_args="model" + (", test_metrics=test_metrics" if test else ""),
        forward=_forward(quote(task), amp, 20 if accumulate > 1 else 16, feed is not None, pick),
        accumulate=repr(accumulate),
        memory_format=", memory_format=torch.channels_last" if channels else "",
        net=f"rt.distribute({net}, device)" + ("  # compile = true" if "compile" in flags else ""),
    )
    fsdp = field_literal(fields, "strategy", "ddp") == "fsdp"
    if fsdp:  # sharded above, in place: no DDP wrapper
        values["net"] = (
            net + "  # sharded by FSDP above" + (", compile = true" if "compile" in flags else "")
        )
    state = {"model": "model", "optimizer": "optimizer"}
    state.update(
        {key: key for key, flag in (("scheduler", "sched"), ("scaler", "scaler")) if flag in flags}
    )
    extra: list[data_emit.Doc] = [] if monitor == "loss" else [f"monitor={quote(monitor)}"]
    if early:
        extra.append(f"patience={patience!r}")
        extra += [f"min_delta={min_delta!r}"] if min_delta else []
    extra += data_emit.log_every_args(fields)
    eval_every = field_literal(fields, "eval_every_steps")
    if eval_every is not None and validate:
        flags.add("evals")
        extra += [f"eval_every_steps={int(eval_every)!r}", "validate=validate"]
        values["eval_every"] = str(int(eval_every))
    every_steps = field_literal(fields, "checkpoint_every_steps")
    if every_steps is not None:
        extra.append(f"checkpoint_every_steps={int(every_steps)!r}")
    if fsdp:  # the model and optimizer in torch.distributed.checkpoint folders
        extra.append("sharded=rt.ShardedCheckpoints()")
    values["run"] = _run_call(name, config, state, length, ckpt, extra)
    amp_arg = ["amp_dtype=amp_dtype"] if amp else []
    unknown = set()
    if program is not None and graph is not None:
        unknown = data_check.unknown_datasets(program, [dataset, validate, test])
    check = None
    if unknown and graph is not None and feed is None:  # a Feed reports missing fields
        check = data_check.batch_check(
            stmt.model.id,
            graph,
            loss=loss.name,
            ignore_index=ignore,
            output=pick[0] if pick is not None else None,
        )
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
                "val_stats" if role == "val" and "evals" in flags else "stats",
                "device",
                quote(f"{label} data {what!r}"),
                *amp_arg,
                *(["check=data_check"] if check is not None and what in unknown else []),
                *(["feed=feed"] if feed is not None else []),
                *([f"output={pick[0]!r}"] if pick is not None else []),
            ]
            if role == "val" and "evals" in flags:
                values["validate"] = "\n".join(format_call("return rt.evaluate", args, 8))
                values["val_stats"] = "\n".join(
                    format_call("val_stats = rt.EpochStats", stats_args, 4)
                )
                values["val_call"] = "            val_scores = validate()"
                continue
            target = "val_scores" if role == "val" else "test_metrics"
            values[f"{role}_call"] = "\n".join(
                format_call(f"{target} = rt.evaluate", args, 12 if role == "val" else 8)
            )
    return fill(training.TRAIN_TEMPLATE, flags, values)


def _wrapping(fields: dict[str, ast.Expr], model: str, units: tuple[str, ...]) -> list[str]:
    """``strategy = "fsdp"`` and ``activation_checkpointing``: the lines that wrap the
    model's blocks (each copy of a repeat: ``aurane plan``'s units) before the optimizer
    sees its parameters."""
    fsdp = field_literal(fields, "strategy", "ddp") == "fsdp"
    checkpoint = bool(field_literal(fields, "activation_checkpointing", False))
    if not fsdp and not checkpoint:
        return []
    options = ["device"]
    precision = field_literal(fields, "fsdp_precision", "fp32")
    options += [f"precision={quote(precision)}"] if precision != "fp32" else []
    options += ["cpu_offload=True"] if field_literal(fields, "cpu_offload", False) else []
    head = 'strategy = "fsdp"' if fsdp else "activation_checkpointing = true"
    # (FSDP moves each unit to the device as it shards it: rt.to_device comes after)
    if not units:
        if not fsdp:
            return [f"    # {head}: {model} calls no block, so nothing is recomputed"]
        lines = [f"    # {head}: {model} calls no block, so it is one FSDP unit"]
        return lines + format_call("rt.fully_shard", ["model", *options], 4)
    what = "recomputed in backward"
    if fsdp:
        what = "FSDP2 shards each block, then the rest, each moved to the device"
    lines = [f"    # {head}: {what}"]
    lines += format_call("for block in rt.blocks", ["model", *units], 4, ":")
    recompute = "  # activation_checkpointing: recomputed in backward" if fsdp else ""
    lines += [f"        rt.checkpoint_activations(block){recompute}"] if checkpoint else []
    if fsdp:
        lines += format_call("rt.fully_shard", ["block", *options], 8)
        lines += format_call("rt.fully_shard", ["model", *options], 4)
    return lines


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
    program: ast.AuraneProgram,
    graphs: dict[str, Graph],
    class_names: dict[str, str],
    units: dict[str, tuple[str, ...]] | None = None,
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
                units=(units or {}).get(stmt.model.id, ()),
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

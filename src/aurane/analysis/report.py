"""Rendering of profiles: the text table of ``aurane profile`` and the §11.1 JSON payload."""

from __future__ import annotations

from typing import Any

from aurane.analysis.memory import TrainingMemory
from aurane.analysis.profile import (
    UNKNOWN_DTYPE_BYTES,
    LayerProfile,
    ModelProfile,
    by_operation,
    walk,
)
from aurane.ops.rules import fmt_shape as shape_text

ESTIMATE_NOTE = (
    "static estimates from the IR: work and memory, not latency; "
    "FLOPs = 2 per multiply-accumulate (MAC)"
)


def human_bytes(count: int) -> str:
    if not isinstance(count, int):  # a symbolic size's formula (seq = dim(...))
        return f"{count} B"
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"  # pragma: no cover


def op_label(layer: LayerProfile) -> str:
    """``conv2d``, ``BasicBlock(128, stride=2) (block)``, ``Bottleneck(64) x3``."""
    called = layer.call or layer.block
    if layer.op == "repeat":
        return f"{called} x{layer.repeat}"
    if layer.op == "block":
        return f"{called} (block)"
    return layer.op


# ---------------------------------------------------------------- JSON


def layer_json(layer: LayerProfile, batch: int, explain: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "node": layer.node,
        "op": layer.op,
        "output_shape": list(layer.output_shape) if layer.output_shape is not None else None,
        "parameters": layer.parameters,
        "flops_per_sample": layer.flops,
        "macs_per_sample": layer.macs,
        "other_flops_per_sample": layer.other_flops,
        "activation_bytes": batch * layer.activation_bytes,
    }
    if layer.name is not None:
        item["name"] = layer.name  # the user's layer name (``as conv1``)
    if explain:
        item["formula"] = layer.formula
    if layer.call is not None:
        item["call"] = layer.call
    if layer.block is not None:
        item["block"] = layer.block
        item["repeat"] = layer.repeat
        item["layers"] = [layer_json(c, batch, explain) for c in layer.children]
    return item


def memory_json(memory: TrainingMemory | None) -> dict[str, Any] | None:
    if memory is None:
        return None
    job = memory.job
    return {
        "job": job.role,
        "dataset": job.dataset,
        "optimizer": job.optimizer,
        "optimizer_states_per_parameter": memory.states_per_parameter,
        "mixed_precision": job.mixed_precision,
        "batch_size": memory.batch_size,
        "parameter_bytes": memory.parameter_bytes,
        "gradient_bytes": memory.gradient_bytes,
        "optimizer_bytes": memory.optimizer_bytes,
        "activation_bytes": memory.activation_bytes,
        "total_bytes": memory.total_bytes,
        "estimate": True,
    }


def model_json(
    p: ModelProfile, memory: TrainingMemory | None = None, explain: bool = False
) -> dict[str, Any]:
    return {
        "name": p.name,
        "parameters": p.parameters,
        "trainable_parameters": p.trainable_parameters,
        "flops_per_sample": p.flops,
        "macs_per_sample": p.macs,
        "other_flops_per_sample": p.other_flops,
        "activation_bytes": p.activation_bytes,
        "activation_bytes_per_sample": p.activation_bytes_per_sample,
        "parameter_bytes": p.parameter_bytes,
        "parameter_dtype": p.param_dtype,
        "input_shape": list(p.input_shape) if p.input_shape is not None else None,
        "output_shape": list(p.output_shape) if p.output_shape is not None else None,
        "unknown_dtype_values": p.unknown_dtypes,
        "unknown_dtype_bytes": UNKNOWN_DTYPE_BYTES,
        "estimate": True,
        "layers": [layer_json(layer, p.batch_size, explain) for layer in p.layers],
        "training_memory": memory_json(memory),
        **({"init": dict(p.inits)} if p.inits else {}),  # layer path -> its initialisers
        **(
            {
                "inputs": [
                    {
                        "name": name,
                        "shape": list(shape) if shape is not None else None,
                        "dtype": dtype,
                        "bytes_per_sample": size,
                    }
                    for name, shape, dtype, size in p.inputs
                ],
                "input_bytes_per_sample": p.input_bytes,
                "outputs": [
                    {
                        "name": name,
                        "shape": list(shape) if shape is not None else None,
                        "dtype": dtype,
                    }
                    for name, shape, dtype in p.outputs
                ],
            }
            if p.inputs
            else {}
        ),
    }


def profiles_json(
    profiles: list[tuple[ModelProfile, TrainingMemory | None]], batch: int, explain: bool = False
) -> dict[str, Any]:
    return {
        "batch_size": batch,
        "estimate": True,
        "note": ESTIMATE_NOTE,
        "models": [model_json(p, m, explain) for p, m in profiles],
    }


# ---------------------------------------------------------------- text


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  " + "  ".join(cells).rstrip())
        if index == 0:
            lines.append("  " + "  ".join("-" * w for w in widths))
    return lines


def _layer_rows(p: ModelProfile, detailed: bool) -> list[list[str]]:
    header = ["layer", "op", "output shape", "params", "MACs", "FLOPs"]
    if detailed:
        header += ["other FLOPs", "activations", "dtype"]
    rows = [header]
    items = walk(p.layers) if detailed else ((layer.shown, 0, layer) for layer in p.layers)
    for path, depth, layer in items:
        name = "  " * depth + (path.rsplit("/", 1)[-1] if depth else path)
        row = [
            name,
            op_label(layer),
            shape_text(layer.output_shape),
            f"{layer.parameters:,}",
            f"{layer.macs:,}",
            f"{layer.flops:,}",
        ]
        if detailed:
            row += [
                f"{layer.other_flops:,}",
                human_bytes(p.batch_size * layer.activation_bytes),
                layer.dtype or "? (4 B guess)",
            ]
        rows.append(row)
    total = [
        "total",
        "",
        shape_text(p.output_shape),
        f"{p.parameters:,}",
        f"{p.macs:,}",
        f"{p.flops:,}",
    ]
    if detailed:
        total += [f"{p.other_flops:,}", human_bytes(p.activation_bytes), ""]
    rows.append(total)
    return rows


def model_text(
    p: ModelProfile,
    memory: TrainingMemory | None = None,
    *,
    detailed: bool = False,
    explain: bool = False,
) -> str:
    lines = [
        f"model {p.name}: {shape_text(p.input_shape)} {p.input_dtype or 'dtype ?'} -> "
        f"{shape_text(p.output_shape)}",
        f"  ({ESTIMATE_NOTE})",
    ]
    if p.inputs:  # several inputs or outputs: each one, and the inputs' total
        ins = ", ".join(
            f"{name} {shape_text(shape)} {dtype or 'dtype ?'} ({human_bytes(size)})"
            for name, shape, dtype, size in p.inputs
        )
        outs = ", ".join(
            f"{name} {shape_text(shape)} {dtype or 'dtype ?'}" for name, shape, dtype in p.outputs
        )
        lines[0] = f"model {p.name}: {ins} -> {outs}"
        lines.insert(1, f"  inputs per sample: {human_bytes(p.input_bytes)} in all")
    lines += _table(_layer_rows(p, detailed), right={3, 4, 5, 6, 7})
    lines.append("")
    lines += _summary(p)
    if detailed and any(layer.repeat > 1 for layer in p.layers):
        lines.append("  (rows inside a repeated block show one copy)")
    if detailed:
        lines += ["", "  by operation (blocks expanded, copies counted):"]
        rows = [["op", "count", "params", "MACs", "other FLOPs"]]
        rows += [
            [t.op, str(t.count), f"{t.parameters:,}", f"{t.macs:,}", f"{t.other_flops:,}"]
            for t in by_operation(p)
        ]
        lines += ["  " + line for line in _table(rows, right={1, 2, 3, 4})]
    if p.inits:
        lines += ["", "  initialisation (parameters not left at PyTorch's default):"]
        lines += [f"    {path}: {text}" for path, text in p.inits]
    if explain:
        lines += ["", "  formulas (counts from the op catalog rules):"]
        lines += [f"    {path}: {layer.formula}" for path, _, layer in walk(p.layers)]
    if memory is not None:
        lines += ["", *memory_text(memory)]
    return "\n".join(lines)


def _summary(p: ModelProfile) -> list[str]:
    guess = (
        (
            f"; {p.unknown_dtypes} values of unknown dtype guessed at "
            f"{UNKNOWN_DTYPE_BYTES} bytes (float32)"
        )
        if p.unknown_dtypes
        else ""
    )
    return [
        f"  parameters: {p.parameters:,} ({p.trainable_parameters:,} trainable), "
        f"{human_bytes(p.parameter_bytes)} as {p.param_dtype}",
        f"  per sample: {p.macs:,} MACs = {p.flops:,} FLOPs; "
        f"other FLOPs (elementwise, normalization, pooling, estimate): {p.other_flops:,}",
        f"  activation memory at batch {p.batch_size}: {human_bytes(p.activation_bytes)} "
        f"({p.activation_bytes:,} bytes, every IR value incl. the input{'s' * bool(p.inputs)}{guess})",
    ]


def memory_text(m: TrainingMemory) -> list[str]:
    job = m.job
    where = f"train_gan {job.role}" if job.role != "train" else "train"
    lines = [
        f"  training memory estimate ({where} on {job.dataset}, {job.optimizer}, "
        f"batch {m.batch_size}):"
    ]
    rows = [
        ["parameters", human_bytes(m.parameter_bytes), ""],
        ["gradients", human_bytes(m.gradient_bytes), "one per trainable parameter"],
        [
            "optimizer state",
            human_bytes(m.optimizer_bytes),
            f"{m.states_per_parameter} per parameter ({m.state_note})",
        ],
        ["activations", human_bytes(m.activation_bytes), m.activation_note],
        ["total", human_bytes(m.total_bytes), "excludes allocator overhead and workspaces"],
    ]
    width = max(len(r[0]) for r in rows)
    size = max(len(r[1]) for r in rows)
    for name, amount, note in rows:
        lines.append(f"    {name.ljust(width)}  {amount.rjust(size)}  {note}".rstrip())
    return lines

"""A run's history as files beside its checkpoints (metrics.csv, metrics.jsonl) and plots.

Both files are rewritten whole and atomically after every epoch from the in-memory history,
so a resumed run continues them and an interrupted one never leaves half a row. A job with
``log_every = N`` also has step rows (every N training batches: epoch, step, the epoch's
running loss, lr); then every row has a ``kind`` ("step" or "epoch") and a ``step`` (for an
epoch row: the batches trained when it ended), and rows are in step order.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from typing import Any

from aurane.runtime.checkpoint import save_file


def history_rows(
    history: Sequence[dict[str, Any]], steps: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """The rows of the history files: the epoch rows, or with step rows, both kinds in step
    order (a step row before the epoch row that ends at the same step)."""
    if not steps:
        return list(history)
    rows = [{"kind": "step", **row} for row in steps]
    rows += [{"kind": "epoch", **row} for row in history]
    return sorted(rows, key=lambda row: (row.get("step", 0), row["kind"] == "epoch"))


def write_history(
    folder: str, history: Sequence[dict[str, Any]], steps: Sequence[dict[str, Any]] = ()
) -> list[str]:
    """metrics.csv and metrics.jsonl in ``folder`` (epoch rows and step rows); returns their
    paths."""
    history = history_rows(history, steps)
    columns: list[str] = []
    for row in history:
        columns += [key for key in row if key not in columns]
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(history)
    lines = "".join(json.dumps(row) + "\n" for row in history)
    paths = [os.path.join(folder, "metrics.csv"), os.path.join(folder, "metrics.jsonl")]
    save_file(paths[0], table.getvalue().encode())
    save_file(paths[1], lines.encode())
    return paths


def read_history(folder: str) -> list[dict[str, Any]]:
    """The rows of ``folder``/metrics.jsonl (a run folder written by ``write_history``),
    step rows included (``kind`` "step")."""
    path = os.path.join(folder, "metrics.jsonl")
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def plot_runs(runs: Sequence[tuple[str, Sequence[dict[str, Any]]]], path: str) -> Any:
    """One panel per quantity (loss, each metric): training solid, validation dashed, one
    colour per run; step rows (``log_every``) as a thin line of the same colour. The x axis
    is the step when every run's epoch rows have one, else the epoch. Writes a PNG to
    ``path`` and returns the matplotlib figure."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.ticker import MaxNLocator

    names: list[str] = []
    for _, history in runs:
        for row in history:
            for key in row:
                base = key[4:] if key.startswith("val_") else key
                if base not in ("epoch", "lr", "step", "kind") and base not in names:
                    names.append(base)
    epochs = [[r for r in h if r.get("kind", "epoch") == "epoch"] for _, h in runs]
    x_key = "step" if all(r and all("step" in row for row in r) for r in epochs) else "epoch"
    columns = min(3, max(1, len(names)))
    rows = (len(names) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.5 * rows), squeeze=False)
    for index, name in enumerate(names):
        axis = axes[index // columns][index % columns]
        for number, (label, history) in enumerate(runs):
            colour = f"C{number % 10}"
            steps = [row for row in history if row.get("kind") == "step" and name in row]
            if steps and x_key == "step":
                step_xs = [row["step"] for row in steps]
                step_ys = [row[name] for row in steps]
                axis.plot(step_xs, step_ys, "-", color=colour, alpha=0.35, linewidth=1)
            for key, style, part in ((name, "-o", "train"), ("val_" + name, "--o", "val")):
                points = [(row[x_key], row[key]) for row in epochs[number] if key in row]
                if points:
                    xs, ys = zip(*points, strict=True)
                    axis.plot(xs, ys, style, color=colour, markersize=3, label=f"{label} {part}")
        axis.set_title(name)
        axis.set_xlabel(x_key)
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.legend(fontsize="small")
    for index in range(len(names), rows * columns):
        axes[index // columns][index % columns].axis("off")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    save_file(path, buffer.getvalue())
    plt.close(figure)
    return figure


def plot_history(
    folder: str, history: Sequence[dict[str, Any]], steps: Sequence[dict[str, Any]] = ()
) -> str | None:
    """``folder``/metrics.png when matplotlib is installed; None otherwise, or when the
    environment sets ``AURANE_PLOT=0`` (a headless cluster, or a test suite that starts many
    short runs: drawing costs a second or more per run)."""
    if os.environ.get("AURANE_PLOT") == "0":
        return None
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    path = os.path.join(folder, "metrics.png")
    label = os.path.basename(os.path.normpath(folder)) or folder
    plot_runs([(label, history_rows(history, steps))], path)
    return path


def tensorboard_writer(folder: str) -> Any:
    """A ``SummaryWriter`` logging to ``folder``/tensorboard when TensorBoard is installed
    (``torch.utils.tensorboard`` imports), else None."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(os.path.join(folder, "tensorboard"))


def log_scalars(writer: Any, row: dict[str, Any]) -> None:
    """One epoch's row as scalars (``loss``, ``val_loss``, ``lr``, ...) at step ``epoch``."""
    for key, value in row.items():
        if key not in ("epoch", "step") and isinstance(value, int | float):
            writer.add_scalar(key, value, row["epoch"])
    writer.flush()

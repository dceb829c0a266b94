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


# Limits of `aurane plot` (docs/limits.md): the file is read only when it is a regular file
# no larger than this, each row must be a flat JSON object (depth 1: nothing to recurse
# into), and one figure draws at most this many quantities (one panel each).
MAX_HISTORY_BYTES = 32 * 1024 * 1024
MAX_PLOT_QUANTITIES = 32
_X_KEYS = ("epoch", "step")
_NOT_QUANTITIES = ("epoch", "lr", "step", "kind")


class HistoryError(ValueError):
    """A metrics.jsonl that cannot be plotted, located at its line (0: the whole file)."""

    def __init__(self, path: str, line: int, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


def read_history(folder: str) -> list[dict[str, Any]]:
    """The rows of ``folder``/metrics.jsonl (a run folder written by ``write_history``),
    step rows included (``kind`` "step").

    Each row is checked: a flat JSON object of numbers (and ``null``; ``kind`` is a string)
    with a numeric ``epoch`` or ``step``, at most ``MAX_PLOT_QUANTITIES`` quantities in the
    file. Raises ``HistoryError`` (a ``ValueError``) at the first bad line, for a file past
    ``MAX_HISTORY_BYTES`` (checked before reading) and for a FIFO, device or directory
    (refused without waiting); ``OSError`` (``FileNotFoundError``) as ``open`` does.
    """
    path = os.path.join(folder, "metrics.jsonl")
    data = _read_bounded(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        bad_line = data[: error.start].count(b"\n") + 1
        raise HistoryError(path, bad_line, "not UTF-8 text") from None
    rows: list[dict[str, Any]] = []
    names: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            row = _row(path, number, line)
            for name in _quantities(row):
                if name in names:
                    continue
                names.append(name)
                if len(names) > MAX_PLOT_QUANTITIES:
                    raise HistoryError(
                        path,
                        number,
                        f"{name!r} is quantity number {len(names)}; one figure draws at most "
                        f"{MAX_PLOT_QUANTITIES}",
                    )
            rows.append(row)
    return rows


def _read_bounded(path: str) -> bytes:
    """At most ``MAX_HISTORY_BYTES`` of a regular file; a FIFO is never waited on."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    info = os.stat(path)
    fd = os.open(path, flags) if stat.S_ISREG(info.st_mode) else -1
    try:
        if fd >= 0:
            info = os.fstat(fd)
        if fd < 0 or not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            if stat.S_ISFIFO(info.st_mode):
                kind = "a FIFO"
            elif stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
                kind = "a device"
            raise HistoryError(path, 0, f"it is {kind}, not a regular file")
        if info.st_size > MAX_HISTORY_BYTES:
            raise HistoryError(
                path, 0, f"it is {info.st_size} bytes; the limit is {MAX_HISTORY_BYTES}"
            )
        chunks, total = [], 0
        while total <= MAX_HISTORY_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_HISTORY_BYTES + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > MAX_HISTORY_BYTES:
            raise HistoryError(
                path, 0, f"it is more than {MAX_HISTORY_BYTES} bytes; the limit is that"
            )
        return b"".join(chunks)
    finally:
        if fd >= 0:
            os.close(fd)


_EXAMPLE_ROW = '{"epoch": 1, "loss": 0.5}'


def _row(path: str, number: int, line: str) -> dict[str, Any]:
    import re

    # A flat object has one "{", one "}" and no "[" outside its strings; checked before
    # json.loads, so no nesting (100,000 levels deep or not) is ever recursed into.
    bare = re.sub(r'"[^"\\]*(?:\\.[^"\\]*)*"', '""', line).strip()
    flat = bare.startswith("{") and bare.endswith("}")
    if not flat or bare.count("{") + bare.count("}") != 2 or "[" in bare or "]" in bare:
        raise HistoryError(
            path, number, f"expected a flat JSON object of numbers, like {_EXAMPLE_ROW}"
        )
    try:
        row = json.loads(line)
    except ValueError as error:  # bad JSON, or an integer of thousands of digits
        raise HistoryError(path, number, f"invalid JSON ({error})") from None
    if not isinstance(row, dict):
        raise HistoryError(path, number, f"expected a JSON object, like {_EXAMPLE_ROW}")
    for key, value in row.items():
        if key == "kind" and isinstance(value, str):
            continue
        if value is not None and not _is_number(value):
            shown = json.dumps(value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise HistoryError(path, number, f"{key!r} is {shown}, not a number")
    if not any(_is_number(row.get(key)) for key in _X_KEYS):
        raise HistoryError(
            path, number, f"the row has no 'epoch' or 'step' number, like {_EXAMPLE_ROW}"
        )
    return row


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _quantities(row: dict[str, Any]) -> list[str]:
    """The panels a row contributes to: each key but the axes, ``val_x`` drawn with ``x``."""
    names: list[str] = []
    for key in row:
        base = key[4:] if key.startswith("val_") else key
        if base not in _NOT_QUANTITIES and base not in names:
            names.append(base)
    return names


def plot_runs(runs: Sequence[tuple[str, Sequence[dict[str, Any]]]], path: str) -> Any:
    """One panel per quantity (loss, each metric): training solid, validation dashed, one
    colour per run; step rows (``log_every``) as a thin line of the same colour. The x axis
    is the step when every run's epoch rows have one, else the epoch. Writes a PNG to
    ``path`` and returns the matplotlib figure."""
    png, figure = render_runs(runs)
    save_file(path, png)
    return figure


def render_runs(runs: Sequence[tuple[str, Sequence[dict[str, Any]]]]) -> tuple[bytes, Any]:
    """``plot_runs``'s figure as PNG bytes, and the (closed) figure. A point is drawn only
    where both coordinates are numbers. Raises ``ValueError`` when the runs have no
    quantity, or more than ``MAX_PLOT_QUANTITIES`` together."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.ticker import MaxNLocator

    names: list[str] = []
    for _, history in runs:
        for row in history:
            names += [name for name in _quantities(row) if name not in names]
    if not names:
        raise ValueError("nothing to plot: the rows hold no quantity but epoch, step and lr")
    if len(names) > MAX_PLOT_QUANTITIES:
        raise ValueError(
            f"the runs have {len(names)} quantities together; one figure draws at most "
            f"{MAX_PLOT_QUANTITIES}"
        )
    epochs = [[r for r in h if r.get("kind", "epoch") == "epoch"] for _, h in runs]
    x_key = "step" if all(r and all("step" in row for row in r) for r in epochs) else "epoch"
    columns = min(3, max(1, len(names)))
    rows = (len(names) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.5 * rows), squeeze=False)
    for index, name in enumerate(names):
        axis = axes[index // columns][index % columns]
        for number, (label, history) in enumerate(runs):
            colour = f"C{number % 10}"
            steps = [row for row in history if row.get("kind") == "step"]
            step_points = _points(steps, "step", name)
            if step_points and x_key == "step":
                step_xs, step_ys = zip(*step_points, strict=True)
                axis.plot(step_xs, step_ys, "-", color=colour, alpha=0.35, linewidth=1)
            for key, style, part in ((name, "-o", "train"), ("val_" + name, "--o", "val")):
                points = _points(epochs[number], x_key, key)
                if points:
                    xs, ys = zip(*points, strict=True)
                    axis.plot(xs, ys, style, color=colour, markersize=3, label=f"{label} {part}")
        axis.set_title(name)
        axis.set_xlabel(x_key)
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize="small")
    for index in range(len(names), rows * columns):
        axes[index // columns][index % columns].axis("off")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return buffer.getvalue(), figure


def _points(rows: Sequence[dict[str, Any]], x_key: str, key: str) -> list[tuple[Any, Any]]:
    return [
        (row[x_key], row[key])
        for row in rows
        if _is_number(row.get(x_key)) and _is_number(row.get(key))
    ]


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

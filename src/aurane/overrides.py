"""``--set NAME=VALUE``: a program's fields changed from the command line, then checked.

``aurane run FILE --set lr=3e-4 --set batch=64`` edits the program's text, not the compiled
program: each override replaces the value of the field it names (or adds the field to its
block), and the edited program goes through the same checks as any other, before anything
runs. A problem inside an override's value is reported at that ``--set``, as if the
argument were a one-line file (``--set lr=-1:1:4``); a problem elsewhere at its place in the
program as written.

Names (S131 when none fits):
- ``FIELD``: the experiment's field (``seed``, ``device``, ``precision``), else every job's
  (``lr``, ``epochs``, ``max_steps``: the train and train_gan blocks that take it), else the
  field of the datasets the jobs train on (``batch``, ``size``; not their validation data).
- ``BLOCK.FIELD``: ``experiment.seed`` (or the experiment's name), ``shapes_val.batch`` (a
  dataset), ``ShapeNet.lr`` (the job training that model; a GAN job by either model), or
  ``train.lr`` (every job).

``VALUE`` is one Aurane value: ``3e-4``, ``true``, ``"./ck"``, ``[accuracy, f1]``,
``adamw(lr=1e-3)``; a line break in it is refused (it could start another field or block).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.records import record, replace
from aurane.semantics import config
from aurane.semantics.suggest import did_you_mean
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.parser import parse_program

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
Block = ast.Experiment | ast.Dataset | ast.Train | ast.TrainGan


@record(frozen=True)
class Override:
    """One ``--set`` argument: ``text`` as given, split at its first ``=``."""

    text: str
    block: str | None  # "shapes_val" in shapes_val.batch=64
    name: str
    value: str
    value_at: int  # where the value starts in ``text`` (0-based)

    @property
    def shown(self) -> str:
        return f"--set {self.text}"


class OverrideError(Exception):
    """An override that names no field, or a program whose edited text has errors. Holds
    (diagnostic, text, filename) triples: each diagnostic with the text it points into."""

    def __init__(self, located: list[tuple[Diagnostic, str, str]]) -> None:
        super().__init__("; ".join(d.message for d, _, _ in located))
        self.located = located


def _error(
    item: Override, message: str, start: int, end: int, hint: str | None = None
) -> OverrideError:
    span = Span(1, start + 1, 1, max(end, start + 1) + 1)
    return OverrideError([(diag("S131", message, span, hint=hint), item.text, item.shown)])


def parse_override(text: str) -> Override:
    """``NAME=VALUE`` or ``BLOCK.NAME=VALUE``; raises ``OverrideError`` (S131)."""
    key, equals, value = text.partition("=")
    item = Override(text, None, key.strip(), value.strip(), len(key) + 1)
    if not equals:
        raise _error(item, f"--set {text!r} needs NAME=VALUE", 0, len(text), "e.g. --set lr=3e-4")
    bad = next((i for i, ch in enumerate(text) if ch in "\r\n\x00"), None)
    if bad is not None:
        raise _error(item, "an override's value is one line", bad, bad + 1)
    if not value.strip():
        raise _error(item, f"--set {key}= gives no value", len(key), len(key) + 1)
    block, _, name = key.strip().rpartition(".")
    for part in (block, name) if block else (name,):
        if not _NAME.fullmatch(part):
            where = text.find(part) if part else 0
            raise _error(item, f"{part!r} is not a field name", where, where + len(part))
    lead = len(value) - len(value.lstrip())
    return Override(text, block or None, name, value.strip(), len(key) + 1 + lead)


@record(frozen=True)
class Edit:
    """Replace ``text[start:end]`` (offsets in the program) by ``new``, whose value part
    (the override's VALUE) starts at ``value_at`` in ``new``."""

    start: int
    end: int
    new: str
    value_at: int
    override: Override


@record(frozen=True)
class Edited:
    """The program with every override applied, and how to read its diagnostics back."""

    text: str
    edits: tuple[Edit, ...]  # in the program's order

    def locate(
        self, diagnostics: Sequence[Diagnostic], original: str, filename: str
    ) -> list[tuple[Diagnostic, str, str]]:
        """Each diagnostic of the edited program with the text it points into: its
        ``--set`` argument, or the program as written."""
        starts = _line_starts(self.text)
        located = []
        for item in diagnostics:
            if item.span is None:
                located.append((item, original, filename))
                continue
            start = _offset(starts, item.span.line, item.span.column)
            edit = next(
                (e for e in self.edits if _new_start(self, e) <= start < _new_end(self, e)), None
            )
            if edit is not None:
                located.append(self._into_override(item, edit, starts))
                continue
            labels = tuple(
                Label(self._back(starts, label.span, original), label.message)
                for label in item.labels
                if not self._inside_edit(starts, label.span)
            )
            moved = replace(item, span=self._back(starts, item.span, original), labels=labels)
            located.append((moved, original, filename))
        return located

    def _inside_edit(self, starts: list[int], span: Span) -> bool:
        start = _offset(starts, span.line, span.column)
        return any(_new_start(self, e) <= start < _new_end(self, e) for e in self.edits)

    def _into_override(
        self, item: Diagnostic, edit: Edit, starts: list[int]
    ) -> tuple[Diagnostic, str, str]:
        assert item.span is not None
        origin = _new_start(self, edit) + edit.value_at
        begin = _offset(starts, item.span.line, item.span.column) - origin
        finish = _offset(starts, item.span.end_line, item.span.end_column) - origin
        length = len(edit.override.value)
        begin = min(max(begin, 0), length)
        finish = min(max(finish, begin + 1), max(length, begin + 1))
        at = edit.override.value_at
        span = Span(1, at + begin + 1, 1, at + finish + 1)
        message = f"{item.message} (from --set {edit.override.text})"
        moved = replace(item, span=span, message=message, labels=())
        return moved, edit.override.text, edit.override.shown

    def _back(self, starts: list[int], span: Span, original: str) -> Span:
        """A span of the edited text at its place in the original text."""
        old = _line_starts(original)

        def one(line: int, column: int) -> tuple[int, int]:
            offset = _offset(starts, line, column)
            shift = 0
            for edit in self.edits:
                if _new_start(self, edit) + len(edit.new) <= offset:
                    shift += len(edit.new) - (edit.end - edit.start)
            return _position(old, offset - shift)

        line, column = one(span.line, span.column)
        end_line, end_column = one(span.end_line, span.end_column)
        return Span(line, column, end_line, end_column)


def _new_start(edited: Edited, edit: Edit) -> int:
    """Where ``edit``'s new text starts in the edited program."""
    shift = sum(len(e.new) - (e.end - e.start) for e in edited.edits if e.start < edit.start)
    return edit.start + shift


def _new_end(edited: Edited, edit: Edit) -> int:
    return _new_start(edited, edit) + len(edit.new)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts += [index + 1 for index, ch in enumerate(text) if ch == "\n"]
    return starts


def _offset(starts: list[int], line: int, column: int) -> int:
    line = min(max(line, 1), len(starts))
    return starts[line - 1] + max(column, 1) - 1


def _position(starts: list[int], offset: int) -> tuple[int, int]:
    line = max(i for i, start in enumerate(starts) if start <= max(offset, 0))
    return line + 1, offset - starts[line] + 1


def apply_overrides(text: str, filename: str, arguments: Sequence[str]) -> Edited:
    """``text`` with every ``--set`` argument applied; raises ``OverrideError`` for an
    argument that names no field (or a program that does not parse, left to the checks)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    overrides = [parse_override(argument) for argument in arguments]
    if not overrides:
        return Edited(text, ())
    program, _ = parse_program(text, filename)
    if program is None:
        return Edited(text, ())
    starts = _line_starts(text)
    edits: dict[tuple[int, int, str], Edit] = {}  # a later --set of the same field wins
    tail = ""
    for item in overrides:
        blocks = _targets(program, item)
        if not blocks:  # an experiment field without an experiment block: add one
            tail = f"\n\nexperiment Overrides:\n    {item.name} = "
            edit = Edit(len(text), len(text), tail + item.value + "\n", len(tail), item)
            edits[(len(text), -1, item.name)] = edit
            continue
        for block in blocks:
            for edit in _edits(text, starts, block, item):
                edits[(edit.start, edit.end, item.name)] = edit
    ordered: tuple[Edit, ...] = ()
    for edit in sorted(edits.values(), key=lambda e: (e.start, -e.end)):  # stable: as given
        if ordered and edit.start < ordered[-1].end:
            continue  # inside a value another override replaces whole (optimizer=..., lr=...)
        ordered += (edit,)
    pieces, at = [], 0
    for edit in ordered:
        pieces += [text[at : edit.start], edit.new]
        at = edit.end
    pieces.append(text[at:])
    return Edited("".join(pieces), ordered)


def _edits(text: str, starts: list[int], block: Block, item: Override) -> list[Edit]:
    """The field's edit, and for ``lr`` also each optimizer call's own ``lr=`` argument
    (which wins over the field: ``--set lr=...`` must change the rate that is used)."""
    edits = [_edit(text, starts, block, item)]
    if isinstance(block, ast.Experiment | ast.Dataset):
        return edits
    table = _table(block) or {}
    spec = table.get(item.name)
    if spec is None or spec.name != "lr":
        return edits
    for found in block.fields:
        known = table.get(found.name)
        if known is None or known.kind is not config.FieldKind.OPTIMIZER:
            continue
        if isinstance(found.value, ast.Call):
            for keyword in found.value.keywords:
                if keyword.name == "lr":
                    span = keyword.value.span
                    start = _offset(starts, span.line, span.column)
                    end = _offset(starts, span.end_line, span.end_column)
                    edits.append(Edit(start, end, item.value, 0, item))
    return edits


def _edit(text: str, starts: list[int], block: Block, item: Override) -> Edit:
    table = _table(block)
    spec = table.get(item.name) if table is not None else None
    canonical = spec.name if spec is not None else item.name
    for found in block.fields:
        known = table.get(found.name) if table is not None else None
        if (known.name if known is not None else found.name) == canonical:
            start = _offset(starts, found.value.span.line, found.value.span.column)
            end = _offset(starts, found.value.span.end_line, found.value.span.end_column)
            return Edit(start, end, item.value, 0, item)
    # a new line after the block's last field (or its `from` line), indented like it
    last: ast.Field | ast.Name | None = block.fields[-1] if block.fields else None
    if last is None and isinstance(block, ast.Dataset):
        last = block.source
    if last is None:
        raise _error(item, f"{_describe(block)} has no field line to add {item.name} after", 0, 1)
    line = last.span.end_line
    column = last.name_span.column if isinstance(last, ast.Field) else 5
    end_of_line = starts[line] - 1 if line < len(starts) else len(text)
    lead = "\n" + " " * (column - 1) + f"{item.name} = "
    return Edit(end_of_line, end_of_line, lead + item.value, len(lead), item)


def _table(block: Block) -> dict[str, config.FieldSpec] | None:
    if isinstance(block, ast.Experiment):
        return config.EXPERIMENT_TABLE
    if isinstance(block, ast.Dataset):
        return config.DATASET_TABLE
    return config.TRAIN_TABLE if isinstance(block, ast.Train) else config.GAN_TABLE


def _describe(block: Block) -> str:
    if isinstance(block, ast.Experiment):
        return f"experiment {block.name}"
    if isinstance(block, ast.Dataset):
        return f"dataset {block.name}"
    if isinstance(block, ast.Train):
        return f"train {block.model.id}"
    return f"train_gan {block.generator.id}"


def _targets(program: ast.AuraneProgram, item: Override) -> list[Block]:
    """The blocks ``item`` sets a field of; [] for an experiment field without an
    experiment block (one is added)."""
    experiments = [s for s in program.statements if isinstance(s, ast.Experiment)]
    datasets = {d.name: d for d in program.datasets}
    jobs = [s for s in program.statements if isinstance(s, ast.Train | ast.TrainGan)]
    by_model: dict[str, list[Block]] = {}
    for job in jobs:
        names = [job.model.id] if isinstance(job, ast.Train) else []
        if isinstance(job, ast.TrainGan):
            names = [job.generator.id, job.discriminator.id]
        for model in names:
            by_model.setdefault(model, []).append(job)
    name = item.name
    if item.block is not None:
        block = item.block
        if block == "experiment" or any(e.name == block for e in experiments):
            _known(item, config.EXPERIMENT_TABLE, "the experiment")
            return list(experiments[:1])
        if block in datasets:
            return [datasets[block]]
        if block in by_model or block == "train":
            chosen = by_model.get(block, jobs)
            chosen_fits: list[Block] = [job for job in chosen if name in (_table(job) or {})]
            if not chosen_fits:
                _known(item, _table(chosen[0]) or {} if chosen else {}, f"{block}'s job")
            return chosen_fits
        names = ["experiment", "train", *datasets, *by_model]
        hint = did_you_mean(block, names) or "blocks: " + ", ".join(names)
        raise _error(item, f"no block named {block!r} to set {name} in", 0, len(block), hint)
    if name in config.EXPERIMENT_TABLE:
        return list(experiments[:1])
    fits: list[Block] = [job for job in jobs if name in (_table(job) or {})]
    if fits:
        return fits
    trained = [datasets[job.dataset.id] for job in jobs if job.dataset.id in datasets]
    trained = list({id(d): d for d in trained}.values())
    own: list[Block] = [
        d for d in trained if name in config.DATASET_TABLE or any(f.name == name for f in d.fields)
    ]
    if own:
        return own
    known = {*config.EXPERIMENT_TABLE, *config.TRAIN_TABLE, *config.GAN_TABLE}
    known |= {*config.DATASET_TABLE, *(f.name for d in trained for f in d.fields)}
    hint = did_you_mean(name, known) or (
        "name a field of the experiment, the train blocks or their datasets, "
        "or qualify it: DATASET.FIELD, MODEL.FIELD, experiment.FIELD"
    )
    raise _error(item, f"no field {name!r} in this program's blocks", 0, len(name), hint)


def _known(item: Override, table: dict[str, config.FieldSpec], where: str) -> None:
    if item.name not in table:
        hint = did_you_mean(item.name, table) or "fields: " + ", ".join(
            sorted({s.name for s in table.values()})
        )
        start = len(item.block or "") + 1
        raise _error(
            item, f"{where} has no field {item.name!r}", start, start + len(item.name), hint
        )

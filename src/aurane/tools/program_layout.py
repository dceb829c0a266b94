"""Program layout for ``aurane format``: statements, blocks, comments and blank lines.

The program becomes a list of units, one per logical line (a simple statement or a block
header), each with its nesting level. Own-line comments outside every unit are placed between
units at the level their original column points to; blank-line groups are kept, at most two
between top-level lines and one inside blocks, none right after a header. A unit whose comments
the structured layout cannot keep in place is printed verbatim, re-indented.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from aurane.records import record
from aurane.source import split_lines
from aurane.syntax import ast
from aurane.syntax.tokens import tokenize
from aurane.tools.layout import INDENT, Line, Printer, SourceText, Unplaceable, end, start

Render = Callable[[int, list[ast.Comment]], list[Line]]
Member = ast.Field | ast.Name | ast.Forward | ast.Budget | ast.InitRule


@record(slots=True)
class Unit:
    first: int  # first and last physical line of the logical line
    last: int
    level: int
    header: bool
    render: Render


class ProgramPrinter:
    def __init__(self, program: ast.AuraneProgram, text: str) -> None:
        body = text[1:] if text.startswith("\ufeff") else text
        self.lines = split_lines(body)
        self.printer = Printer(SourceText(self.lines))
        self.program = program
        extents = [
            (ln.tokens[0].span.line, ln.tokens[-1].span.end_line) for ln in tokenize(body).lines
        ]
        self._firsts = [first for first, _ in extents]
        self._extents = extents

    # ------------------------------------------------------------ driver

    def render(self) -> list[str]:
        units = self._units()
        covered = sorted((u.first, u.last) for u in units)
        events: list[tuple[int, Unit | ast.Comment]] = [(u.first, u) for u in units]
        events += [(c.span.line, c) for c in self.program.comments if not _inside(c, covered)]
        events.sort(key=lambda event: event[0])
        return self._emit(events, units)

    def _emit(self, events: list[tuple[int, Unit | ast.Comment]], units: list[Unit]) -> list[str]:
        out: list[str] = []
        stack: list[tuple[int, int]] = []  # (original indent, level) of the enclosing lines
        previous_last, after_header = 0, True
        upcoming = iter(units)
        next_unit = next(upcoming, None)
        for line, event in events:
            blank = line - previous_last - 1
            if isinstance(event, Unit):
                level = event.level
                indent = self._indent(event.first)
                stack = [entry for entry in stack if entry[1] < level] + [(indent, level)]
                rendered = self._unit_lines(event)
                previous_last = event.last
                next_unit = next(upcoming, None)
            else:
                level = self._comment_level(event, stack, next_unit)
                rendered = [" " * (INDENT * level) + event.text.rstrip(" \t")]
                previous_last = line
            cap = 0 if after_header or not out else (2 if level == 0 else 1)
            out += [""] * min(blank, cap)
            out += rendered
            after_header = isinstance(event, Unit) and event.header
        return out

    def _unit_lines(self, unit: Unit) -> list[str]:
        comments = [c for c in self.program.comments if unit.first <= c.span.line <= unit.last]
        indent = INDENT * unit.level
        try:
            return [line.render() for line in unit.render(indent, comments)]
        except Unplaceable:
            return self._verbatim(unit, indent)

    def _verbatim(self, unit: Unit, indent: int) -> list[str]:
        """The unit's own lines shifted to ``indent``: tokens and comments exactly as written."""
        delta = indent - self._indent(unit.first)
        out = []
        for text in self.lines[unit.first - 1 : unit.last]:
            content = text.strip(" ")
            width = len(text) - len(text.lstrip(" "))
            out.append(" " * max(0, width + delta) + content.rstrip(" \t") if content else "")
        return out

    def _indent(self, line: int) -> int:
        text = self.lines[line - 1]
        return len(text) - len(text.lstrip(" "))

    def _comment_level(
        self, comment: ast.Comment, stack: list[tuple[int, int]], next_unit: Unit | None
    ) -> int:
        """The level whose original indentation matches the comment's column best."""
        column = comment.span.column - 1
        if next_unit is not None and self._indent(next_unit.first) == column:
            return next_unit.level
        candidates = list(stack)
        if next_unit is not None:
            candidates.append((self._indent(next_unit.first), next_unit.level))
        fitting = [entry for entry in candidates if entry[0] <= column]
        return max(fitting)[1] if fitting else 0

    def _extent(self, line: int) -> tuple[int, int]:
        index = bisect.bisect_right(self._firsts, line) - 1
        return self._extents[index]

    # ------------------------------------------------------------ units

    def _units(self) -> list[Unit]:
        units: list[Unit] = []
        for statement in self.program.statements:
            units += self._statement_units(statement)
        return units

    def _unit(self, line: int, level: int, render: Render, header: bool = False) -> Unit:
        first, last = self._extent(line)
        return Unit(first, last, level, header, render)

    def _simple(self, prefix: str, value: ast.Expr | None, tail: str = "") -> Render:
        return lambda indent, comments: self._statement(indent, prefix, value, comments, tail)

    def _statement_units(self, node: ast.Statement) -> list[Unit]:
        match node:
            case ast.Use():
                alias = f" as {node.alias}" if node.alias is not None else ""
                return [
                    self._unit(node.span.line, 0, self._simple(f"use {node.module}{alias}", None))
                ]
            case ast.Constant():
                return [self._unit(node.span.line, 0, self._simple(f"{node.name} = ", node.value))]
            case ast.Experiment():
                return self._block(node.span.line, f"experiment {node.name}:", list(node.fields))
            case ast.Dataset():
                children: list[Member] = list(node.fields)
                if node.source is not None:
                    children.insert(0, node.source)
                return self._block(node.span.line, f"dataset {node.name}:", children)
            case ast.Model():
                members: list[Member] = [*node.fields, *node.budgets, *node.inits]
                if node.forward is not None:
                    members.append(node.forward)
                title = f"model {node.name}{self._params(node.params)}"
                if node.base is not None:  # a variant: model resnet50 = ResNet(...)
                    title += " = " + self.printer.flat(node.base)
                    if not members:
                        return [self._unit(node.span.line, 0, self._simple(title, None))]
                return self._block(node.span.line, title + ":", members)
            case ast.Train():
                title = f"train {node.model.id} on {node.dataset.id}:"
                return self._block(node.span.line, title, list(node.fields))
            case ast.TrainGan():
                title = (
                    f"train_gan {node.generator.id} and {node.discriminator.id} "
                    f"on {node.dataset.id}:"
                )
                return self._block(node.span.line, title, list(node.fields))
        raise TypeError(f"not a statement: {type(node).__name__}")

    def _inputs(self, forward: ast.Forward) -> str:
        """``input_ids, attention_mask=ones``: the forward's inputs, defaults printed flat."""
        return ", ".join(
            p.name + ("" if p.default is None else "=" + self.printer.flat(p.default))
            for p in forward.inputs
        )

    def _params(self, params: tuple[ast.ModelParam, ...]) -> str:
        """``(width, stride: int = 1)``: PEP 8 spacing, defaults printed flat."""
        if not params:
            return ""
        parts = []
        for param in params:
            text = param.name
            if param.annotation is not None:
                text += f": {param.annotation}"
            if param.default is not None:
                equals = " = " if param.annotation is not None else "="
                text += equals + self.printer.flat(param.default)
            parts.append(text)
        return "(" + ", ".join(parts) + ")"

    def _block(self, line: int, title: str, children: Sequence[Member]) -> list[Unit]:
        units = [self._unit(line, 0, self._simple(title, None), header=True)]
        for child in sorted(children, key=lambda c: start(c.span)):  # fields may follow forward
            units += self._member_units(child)
        return units

    def _member_units(self, node: Member) -> list[Unit]:
        match node:
            case ast.Field():
                return [self._unit(node.span.line, 1, self._simple(f"{node.name} = ", node.value))]
            case ast.Name():  # a dataset's 'from' line
                return [self._unit(node.span.line, 1, self._simple(f"from {node.id}", None))]
            case ast.Budget():
                return [self._unit(node.span.line, 1, self._simple(node.text(), None))]
            case ast.InitRule():
                render = self._simple(f"init {node.target}: ", node.spec)
                return [self._unit(node.span.line, 1, render)]
        header = self._simple(f"def forward({self._inputs(node)}):", None)
        units = [self._unit(node.span.line, 1, header, header=True)]
        return units + self._body_units(node.body, 2)

    def _body_units(self, body: tuple[ast.ForwardStmt, ...], level: int) -> list[Unit]:
        units: list[Unit] = []
        for statement in body:
            match statement:
                case ast.If():
                    for branch in statement.branches:
                        render = (
                            self._simple("else:", None)
                            if branch.test is None
                            else self._simple(f"{branch.keyword} ", branch.test, ":")
                        )
                        line = branch.header_span.line
                        units.append(self._unit(line, level, render, header=True))
                        units += self._body_units(branch.body, level + 1)
                case ast.For():
                    head = f"for {_target_text(statement.target)} in "
                    render = self._simple(head, statement.iterable, ":")
                    line = statement.header_span.line
                    units.append(self._unit(line, level, render, header=True))
                    units += self._body_units(statement.body, level + 1)
                case _:
                    line = statement.span.line
                    units.append(self._unit(line, level, self._forward_render(statement)))
        return units

    def _forward_render(self, node: ast.SimpleStmt) -> Render:
        match node:
            case ast.Assign():
                names = ", ".join(name for name, _ in node.targets) or node.target
                return self._simple(f"{names} = ", node.value)
            case ast.Return(value=ast.TupleExpr(items=items)) if len(items) > 1:
                flat = ", ".join(self.printer.flat(item) for item in items)
                return self._simple(f"return {flat}", None)
            case ast.Return():
                return self._simple("return ", node.value)
        return self._simple("", node.chain)

    # ------------------------------------------------------------ one logical line

    def _statement(
        self,
        indent: int,
        prefix: str,
        value: ast.Expr | None,
        comments: list[ast.Comment],
        tail: str = "",
    ) -> list[Line]:
        if value is None:
            inside: list[ast.Comment] = []
            after = comments
        else:
            if any(start(c.span) < start(value.span) for c in comments):
                raise Unplaceable  # e.g. inside grouping parentheses before the value
            inside = [c for c in comments if start(c.span) < end(value.span)]
            after = [c for c in comments if start(c.span) >= end(value.span)]
        if len(after) > 1 or any(c.own_line for c in after):
            raise Unplaceable
        trailing = after[0].text.rstrip(" \t") if after else None
        extra = len(trailing) + 2 if trailing is not None else 0
        if value is None:
            lines = [Line(indent, prefix)]
        else:
            lines = self.printer.lay(value, indent, prefix, tail, inside, extra, top=True)
        if trailing is not None:
            if lines[-1].comment is not None or lines[-1].own_comment:
                raise Unplaceable
            lines[-1].comment = trailing
        return lines


def _target_text(target: ast.LoopTarget, top: bool = True) -> str:
    """``i``, ``a, b``, ``i, (c, k, s)``, ``a,`` (a one-name tuple)."""
    if target.name is not None:
        return target.name
    inner = ", ".join(_target_text(item, top=False) for item in target.items)
    if len(target.items) == 1:
        inner += ","
    return inner if top else f"({inner})"


def _inside(comment: ast.Comment, covered: list[tuple[int, int]]) -> bool:
    line = comment.span.line
    index = bisect.bisect_right(covered, (line, 1 << 30)) - 1
    return index >= 0 and covered[index][0] <= line <= covered[index][1]


def layout_program(program: ast.AuraneProgram, text: str) -> str:
    """The canonical text of a program that parsed without errors."""
    printer = ProgramPrinter(program, text)
    lines = printer.render()
    while lines and not lines[-1]:
        lines.pop()
    first_break = text.find("\n")
    newline = "\r\n" if first_break > 0 and text[first_break - 1] == "\r" else "\n"
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    return bom + newline.join(lines) + (newline if lines else "")

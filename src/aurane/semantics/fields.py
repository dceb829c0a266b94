"""Checks of configuration fields: experiment, dataset, model, train and train_gan blocks."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ops.rules import is_int, is_number
from aurane.semantics import config
from aurane.semantics.binding import bind_arguments
from aurane.semantics.config import FieldKind, FieldSpec, OptionSpec
from aurane.semantics.dims import has_symbols
from aurane.semantics.pynames import KEYWORDS
from aurane.semantics.suggest import did_you_mean
from aurane.semantics.values import NotLiteral, literal_value, show, type_name
from aurane.source import Span
from aurane.syntax import ast


class FieldChecker:
    """Checks one block's fields against its table; knows the program's dataset names."""

    def __init__(self, dataset_names: set[str], diagnostics: list[Diagnostic]) -> None:
        self.dataset_names = dataset_names
        self.diagnostics = diagnostics

    def check_block(
        self,
        fields: tuple[ast.Field, ...],
        table: dict[str, FieldSpec],
        block: str,
        *,
        allow_unknown: bool = False,
    ) -> None:
        seen: dict[str, ast.Field] = {}
        for item in fields:
            spec = table.get(item.name)
            canonical = spec.name if spec else item.name
            if canonical in seen:
                self.diagnostics.append(
                    diag(
                        "S008",
                        f"field '{item.name}' is set twice in {block}",
                        item.name_span,
                        labels=(Label(seen[canonical].name_span, "first set here"),),
                    )
                )
                continue
            seen[canonical] = item
            if spec is None:
                if not allow_unknown:
                    hint = did_you_mean(item.name, table) or "fields: " + ", ".join(
                        sorted({s.name for s in table.values()})
                    )
                    self.diagnostics.append(
                        diag(
                            "S010",
                            f"unknown field '{item.name}' in {block}",
                            item.name_span,
                            hint=hint,
                        )
                    )
                continue
            self.check_field(spec, item, block)

    def check_field(self, spec: FieldSpec, item: ast.Field, block: str) -> None:
        if isinstance(item.value, ast.DictExpr):
            if spec.name not in ("input_shape", "input_dtype"):
                self.error(
                    "S013",
                    f"field '{spec.name}' takes no dict (only input_shape and input_dtype "
                    "are keyed by a model's inputs)",
                    item.value.span,
                )
                return
            for value in item.value.values:  # one input each: checked as the field alone
                if spec.name == "input_shape" and value == ast.TupleExpr((), value.span):
                    continue  # `timestep: ()`: one number per batch item, a (batch,) tensor
                self.check_field(
                    spec, ast.Field(item.name, item.name_span, value, value.span), block
                )
            return
        checker = _KIND_CHECKERS.get(spec.kind)
        if checker is not None:
            checker(self, spec, item.value)
            return
        self.check_literal(spec, item.value, block)

    def check_literal(self, spec: FieldSpec, expr: ast.Expr, block: str) -> None:
        if spec.kind is FieldKind.SHAPE and has_symbols(expr):
            return  # symbolic sizes (seq = dim(...)): resolved and checked when lowering
        try:
            value = literal_value(expr)
        except NotLiteral:
            self.error("S013", f"field '{spec.name}' must be a literal value", expr.span)
            return
        problem = _literal_problem(spec, value)
        if problem:
            self.error(
                "S013",
                f"field '{spec.name}' {problem}, got {show(value)}",
                expr.span,
                hint=_literal_hint(spec, value),
            )

    def error(self, code: str, message: str, span: Span, hint: str | None = None) -> None:
        self.diagnostics.append(diag(code, message, span, hint=hint))

    # -------------------------------------------------------------- catalog kinds

    def option(self, expr: ast.Expr, table: dict[str, OptionSpec], what: str) -> None:
        """A bare name, a quoted name or a call of a catalog entry with keyword options."""
        match expr:
            case ast.Name(id=name, span=span) | ast.String(value=name, span=span):
                if name not in table:
                    self.unknown(name, span, table, what)
                    return
                # a bare `step_lr` is a call without arguments: required ones are missing
                self.bind_option(table[name], (), (), what, expr.span)
            case ast.Call(func=name, func_span=span, args=args, keywords=keywords):
                spec = table.get(name)
                if spec is None:
                    self.unknown(name, span, table, what)
                    return
                self.bind_option(spec, args, keywords, what, expr.span)
            case _:
                self.error(
                    "S013", f"expected {what} name or call, e.g. {next(iter(table))}", expr.span
                )

    def bind_option(
        self,
        spec: OptionSpec,
        args: tuple[ast.Expr, ...],
        keywords: tuple[ast.Keyword, ...],
        what: str,
        span: Span,
    ) -> None:
        """Bind the arguments; when each is valid, check the entry's cross-argument rules."""
        owner = f"{what} '{spec.name}'"
        bound, problems = bind_arguments(spec.params, args, keywords, owner=owner, owner_span=span)
        self.diagnostics.extend(problems)
        if problems:
            return
        values = {name: entry.value for name, entry in bound.values.items()}
        for rule in spec.rules:
            found = rule(values)
            if found is not None:
                param, problem = found
                given = bound.span(param)
                hint = None if given else f"pass {param}=... explicitly"
                self.error("S081", f"argument '{param}' of {owner} {problem}", given or span, hint)

    def unknown(self, name: str, span: Span, names: Any, what: str) -> None:
        hint = did_you_mean(name, names) or f"known {what}s: " + ", ".join(sorted(names))
        self.error("S011", f"unknown {what} '{name}'", span, hint=hint)

    def loss(self, spec: FieldSpec, expr: ast.Expr) -> None:
        self.option(expr, config.LOSS_TABLE, "loss")

    def optimizer(self, spec: FieldSpec, expr: ast.Expr) -> None:
        self.option(expr, config.OPTIMIZER_TABLE, "optimizer")

    def scheduler(self, spec: FieldSpec, expr: ast.Expr) -> None:
        self.option(expr, config.SCHEDULER_TABLE, "scheduler")

    def callbacks(self, spec: FieldSpec, expr: ast.Expr) -> None:
        for item in self.list_items(spec, expr):
            self.option(item, config.CALLBACK_TABLE, "callback")

    def metrics(self, spec: FieldSpec, expr: ast.Expr) -> None:
        for item in self.list_items(spec, expr):
            match item:
                case ast.Name(id=name, span=span) | ast.String(value=name, span=span):
                    if config.canonical_metric(name) is None:
                        names = [*config.METRICS, *config.METRIC_ALIASES, "top5_accuracy"]
                        self.unknown(name, span, names, "metric")
                case _:
                    self.error(
                        "S013", "metrics are names such as accuracy or top5_accuracy", item.span
                    )

    def gan_metrics(self, spec: FieldSpec, expr: ast.Expr) -> None:
        for item in self.list_items(spec, expr):
            match item:
                case ast.Name(id=name, span=span) | ast.String(value=name, span=span):
                    if name not in config.GAN_METRICS:
                        self.unknown(name, span, config.GAN_METRICS, "GAN metric")
                case _:
                    self.error("S013", "GAN metrics are names such as generator_loss", item.span)

    def list_items(self, spec: FieldSpec, expr: ast.Expr) -> tuple[ast.Expr, ...]:
        if isinstance(expr, ast.ListExpr | ast.TupleExpr):
            return expr.items
        if isinstance(expr, ast.Name | ast.String | ast.Call):
            return (expr,)
        self.error("S013", f"field '{spec.name}' must be a list", expr.span)
        return ()

    def dataset(self, spec: FieldSpec, expr: ast.Expr) -> None:
        self.dataset_ref(expr, spec.name)

    def dataset_ref(self, expr: ast.Expr, role: str) -> None:
        if not isinstance(expr, ast.Name | ast.String):
            self.error("S013", f"'{role}' must name a dataset", expr.span)
            return
        name = expr.id if isinstance(expr, ast.Name) else expr.value
        if name not in self.dataset_names:
            hint = did_you_mean(name, self.dataset_names) or "define it with 'dataset NAME:'"
            self.error("S012", f"undefined dataset '{name}'", expr.span, hint=hint)

    def dtype(self, spec: FieldSpec, expr: ast.Expr) -> None:
        match expr:
            case ast.Name(id=name, span=span) | ast.String(value=name, span=span):
                if name not in config.DTYPES:
                    self.unknown(name, span, config.DTYPES, "dtype")
            case _:
                self.error("S013", "input_dtype must be a dtype name such as float32", expr.span)

    def transform(self, spec: FieldSpec, expr: ast.Expr) -> None:
        if not isinstance(expr, ast.Call):
            self.error(
                "S013",
                f"field '{spec.name}' must be a transform call such as Compose([ToTensor()])",
                expr.span,
            )
            return
        name = expr.func.rsplit(".", 1)[-1]
        if name not in config.TRANSFORMS:
            self.unknown(name, expr.func_span, config.TRANSFORMS, "transform")
            return
        self.keyword_names(expr.keywords, f"transform '{name}'")
        for arg in expr.args:
            if isinstance(arg, ast.ListExpr):
                for inner in arg.items:
                    self.transform(spec, inner)

    def keyword_names(self, keywords: tuple[ast.Keyword, ...], owner: str) -> None:
        """Keywords passed to a Python call as written: each once, each a name Python reads
        unchanged (NFKC), none a keyword or a dunder."""
        seen: dict[str, ast.Keyword] = {}
        for item in keywords:
            read = unicodedata.normalize("NFKC", item.name)
            if read != item.name or read in KEYWORDS or read.startswith("__"):
                clean = read not in KEYWORDS and not read.startswith("__")
                hint = f"write '{read}'" if clean else "choose another name"
                self.error(
                    "S015",
                    f"'{item.name}' cannot be a keyword argument of {owner}",
                    item.name_span,
                    hint,
                )
            elif read in seen:
                self.diagnostics.append(
                    diag(
                        "S008",
                        f"argument '{read}' of {owner} is given twice",
                        item.name_span,
                        labels=(Label(seen[read].name_span, "first given here"),),
                    )
                )
            seen.setdefault(read, item)

    def transforms(self, spec: FieldSpec, expr: ast.Expr) -> None:
        if not isinstance(expr, ast.ListExpr):
            self.error("S013", "field 'transforms' must be a list of transform calls", expr.span)
            return
        for item in expr.items:
            self.transform(spec, item)


_KIND_CHECKERS: dict[FieldKind, Callable[[FieldChecker, FieldSpec, ast.Expr], None]] = {
    FieldKind.LOSS: FieldChecker.loss,
    FieldKind.OPTIMIZER: FieldChecker.optimizer,
    FieldKind.SCHEDULER: FieldChecker.scheduler,
    FieldKind.METRICS: FieldChecker.metrics,
    FieldKind.GAN_METRICS: FieldChecker.gan_metrics,
    FieldKind.CALLBACKS: FieldChecker.callbacks,
    FieldKind.DATASET: FieldChecker.dataset,
    FieldKind.DTYPE: FieldChecker.dtype,
    FieldKind.TRANSFORM: FieldChecker.transform,
    FieldKind.TRANSFORMS: FieldChecker.transforms,
}


_LITERAL_KINDS: dict[FieldKind, Callable[[Any], bool]] = {
    FieldKind.INT: is_int,
    FieldKind.FLOAT: is_number,
    FieldKind.BOOL: lambda v: isinstance(v, bool),
    FieldKind.STR: lambda v: isinstance(v, str),
    FieldKind.SHAPE: lambda v: (
        isinstance(v, tuple) and len(v) >= 1 and all(is_int(d) and d > 0 for d in v)
    ),
    FieldKind.PAIR: lambda v: isinstance(v, tuple) and len(v) == 2 and all(map(is_number, v)),
    FieldKind.ANY: lambda v: True,
}


def _literal_problem(spec: FieldSpec, value: Any) -> str | None:
    accepts = _LITERAL_KINDS.get(spec.kind, lambda v: True)
    if not accepts(value):
        return f"must be {'an' if spec.kind.value[0] in 'aeiou' else 'a'} {spec.kind.value}" + (
            f" (not {type_name(value)})" if spec.kind is not FieldKind.SHAPE else ""
        )
    if spec.choices is not None and value not in spec.choices:
        return "must be one of " + ", ".join(repr(c) for c in spec.choices)
    if spec.check is not None:
        problem: str | None = spec.check(value)
        return problem
    return None


def _literal_hint(spec: FieldSpec, value: Any) -> str | None:
    if spec.kind is FieldKind.BOOL and is_int(value):
        return "write true or false"
    if spec.kind is FieldKind.SHAPE and is_int(value):
        return f"write a one-element tuple: ({value},)"
    return None

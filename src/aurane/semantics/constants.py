"""Constant resolution: global and model scopes, forward references, cycles, arithmetic.

The result is a new program in which every value position holds a literal node located at
the span of the expression it replaced. Positions that take tensors (graph inputs, chain
sources), catalog names (losses, metrics, dtypes, ...) or model names keep their names.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from operator import is_
from typing import Any

from aurane import ops
from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ops.rules import is_number
from aurane.ops.spec import ArgKind
from aurane.records import field, record, replace
from aurane.semantics import config
from aurane.semantics.dims import dim_declaration, is_dim_call
from aurane.semantics.suggest import did_you_mean
from aurane.semantics.symbolic import FUNCTIONS
from aurane.semantics.tying import TIE
from aurane.semantics.values import to_node, type_name
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.tokens import MAX_NUMBER

MODEL_FIELD_NAMES = frozenset(config.MODEL_TABLE)
# No result past the largest float64 (MAX_NUMBER, as for literals): an integer beyond it
# is infinite wherever torch reads it as a float. ``**`` is refused before computing.
MAX_INT_BITS = 1024


class _Failed(Exception):
    """Evaluation failed; the diagnostic (if any) was already recorded."""


@record
class _Scope:
    definitions: dict[str, ast.Constant | ast.Field]
    parent: _Scope | None = None
    values: dict[str, Any] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)

    def find(self, name: str) -> _Scope | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.definitions:
                return scope
            scope = scope.parent
        return None

    def visible_names(self) -> set[str]:
        names = set(self.definitions)
        return names | (self.parent.visible_names() if self.parent else set())


class _Symbolic(Exception):
    """A reference to a size symbol (``seq = dim(...)``): the expression stays as written."""


class _Resolver:
    def __init__(self, program: ast.AuraneProgram) -> None:
        self.program = program
        self.allow_symbols = False  # while resolving input_shape, symbols stay symbolic
        self.diagnostics: list[Diagnostic] = []
        self.stack: list[tuple[int, str]] = []
        # spans of value expressions left unresolved (their error is already reported):
        # later passes skip them instead of reporting the same mistake again
        self.failed_spans: set[Span] = set()
        self.model_names = frozenset(m.name for m in program.models)
        # the tensors the forward being resolved binds (name -> its value), and the
        # operation whose arguments are being resolved: an undefined name there may be a
        # tensor meant as an input, whose help is not "define it as a constant"
        self.tensors: dict[str, ast.Expr] = {}
        self.argument_of: ops.OpSpec | None = None

    # -------------------------------------------------------------- scopes

    def make_scope(self, defs: list[ast.Constant | ast.Field], parent: _Scope | None) -> _Scope:
        table: dict[str, ast.Constant | ast.Field] = {}
        for item in defs:
            name, span = _def_name(item)
            if name in table:
                first = _def_name(table[name])[1]
                self.diagnostics.append(
                    diag(
                        "R002",
                        f"constant '{name}' is defined twice",
                        span,
                        labels=(Label(first, "first defined here"),),
                        hint="remove or rename one of the definitions",
                    )
                )
                continue
            table[name] = item
        return _Scope(table, parent)

    # -------------------------------------------------------------- evaluation

    def lookup(self, name: str, span: Span, scope: _Scope) -> Any:
        owner = scope.find(name)
        if owner is None:
            self.undefined(name, span, scope)
            raise _Failed
        if is_dim_call(_def_value(owner.definitions[name])):
            raise _Symbolic(name)
        if name in owner.values:
            return owner.values[name]
        if name in owner.failed:
            raise _Failed
        key = (id(owner), name)
        if key in self.stack:
            cycle = [n for (_, n) in self.stack[self.stack.index(key) :]] + [name]
            self.diagnostics.append(
                diag(
                    "R003",
                    "cyclic constant definition: " + " -> ".join(cycle),
                    span,
                    hint="give one of these constants a literal value",
                )
            )
            for _, member in self.stack[self.stack.index(key) :]:
                owner.failed.add(member)
            raise _Failed
        self.stack.append(key)
        try:
            value = self.evaluate(_def_value(owner.definitions[name]), owner)
        except _Failed:
            owner.failed.add(name)
            raise
        finally:
            self.stack.pop()
        owner.values[name] = value
        return value

    def undefined(self, name: str, span: Span, scope: _Scope) -> None:
        """R001 for ``name``, with help for what it is meant to be; nothing for a constant
        computed inside forward (the semantic pass reports that assignment, S017)."""
        value = self.tensors.get(name)
        if isinstance(value, ast.BinOp | ast.UnaryOp | ast.Number):
            return
        spec = self.argument_of
        takes_tensor = spec is not None and (spec.max_inputs or 2) > 1
        if value is not None:
            message = f"'{name}' is a tensor, not a constant"
            hint = (
                f"pass a tensor as an input, in graph form: y = {spec.name}(x, {name})"
                if spec is not None and takes_tensor
                else "an argument here is a constant value"
            )
        else:
            message = f"undefined name '{name}'"
            hint = did_you_mean(name, scope.visible_names()) or (
                f"define it: a tensor assigned earlier in forward, passed in graph form "
                f"(y = {spec.name}(x, {name})), or a constant"
                if spec is not None and takes_tensor
                else "define it as a constant, globally or inside the model"
            )
        self.diagnostics.append(diag("R001", message, span, hint=hint))

    def evaluate(self, expr: ast.Expr, scope: _Scope) -> Any:
        match expr:
            case ast.Number(value=v) | ast.String(value=v) | ast.Bool(value=v):
                return v
            case ast.NoneLit():
                return None
            case ast.Name(id=name, span=span):
                return self.lookup(name, span, scope)
            case ast.TupleExpr(items=items):
                return tuple(self.evaluate_all(items, scope))
            case ast.ListExpr(items=items):
                return list(self.evaluate_all(items, scope))
            case ast.UnaryOp(op=op, operand=operand, span=span):
                value = self.evaluate(operand, scope)
                if not is_number(value):
                    self._arith_error(f"unary '{op}' needs a number", span)
                return -value if op == "-" else value
            case ast.BinOp(op=op, left=left, right=right, span=span):
                lhs = self.evaluate(left, scope)
                rhs = self.evaluate(right, scope)
                return self.arithmetic(op, lhs, rhs, span)
            case ast.Call(func=func, keywords=(), suffixes=(), layer=None) if func in FUNCTIONS:
                return self.function(expr, scope)
        self.diagnostics.append(self.not_literal(expr))
        raise _Failed

    def function(self, call: ast.Call, scope: _Scope) -> Any:
        """``max(8, c // 4)``, ``min(...)``, ``abs(...)`` of numbers (symbolic numbers of
        a block's parameters too: the class writes ``max(8, c // 4)``)."""
        values = self.evaluate_all(call.args, scope)
        wanted = 1 if call.func == "abs" else 2
        if len(values) < wanted or (call.func == "abs" and len(values) > 1):
            count = "one number" if call.func == "abs" else "two or more numbers"
            self._arith_error(f"{call.func}() takes {count}, got {len(values)}", call.span)
        for value, arg in zip(values, call.args, strict=True):
            if not is_number(value):
                self._arith_error(f"{call.func}() takes numbers, got {type_name(value)}", arg.span)
        return FUNCTIONS[call.func](*values)

    def not_literal(self, expr: ast.Expr) -> Diagnostic:
        """R005 with the fix for what the expression is."""
        if not isinstance(expr, ast.Call):
            return diag("R005", "a constant value must be a literal", expr.span)
        known = sorted(FUNCTIONS)
        if ops.lookup(expr.func) is not None or expr.func in self.model_names:
            return diag(
                "R005",
                f"'{expr.func}' is an operation: it makes a tensor, not a constant value",
                expr.span,
                hint="apply it to a tensor in forward (y = " + expr.func + "(x, ...)); a "
                "value here is a number, string, tuple or arithmetic of them",
            )
        return diag(
            "R005",
            f"a constant value cannot call '{expr.func}': only {', '.join(known)} are "
            "computed at compile time",
            expr.span,
            hint="compute it with numbers, + - * / // % ** and "
            + ", ".join(known)
            + "; a configuration call (adam(...), ToTensor()) goes in the field that takes it",
        )

    def evaluate_all(self, items: tuple[ast.Expr, ...], scope: _Scope) -> list[Any]:
        values: list[Any] = []
        failed = False
        for item in items:
            try:
                values.append(self.evaluate(item, scope))
            except _Failed:
                failed = True
        if failed:
            raise _Failed
        return values

    def arithmetic(self, op: str, lhs: Any, rhs: Any, span: Span) -> Any:
        if not (is_number(lhs) and is_number(rhs)):
            self._arith_error(
                f"'{op}' needs numbers, got {type_name(lhs)} and {type_name(rhs)}", span
            )
        try:
            match op:
                case "+":
                    result = lhs + rhs
                case "-":
                    result = lhs - rhs
                case "*":
                    result = lhs * rhs
                case "/":
                    result = lhs / rhs
                case "//":
                    result = lhs // rhs
                case "%":
                    result = lhs % rhs
                case "**":
                    result = self.power(lhs, rhs, span)
                case _:
                    self._arith_error(f"unknown operator '{op}'", span)
        except ZeroDivisionError:
            self._arith_error("division by zero", span)
        except OverflowError:
            self._arith_error("result is too large", span)
        if isinstance(result, float) and not math.isfinite(result):
            self._arith_error("result is not a finite number", span)
        if isinstance(result, int) and abs(result) > MAX_NUMBER:
            self._arith_error("result is too large", span)
        return result

    def power(self, base: Any, exponent: Any, span: Span) -> Any:
        if isinstance(base, int) and isinstance(exponent, int):
            if exponent < 0 and base == 0:
                raise ZeroDivisionError
            # |base| >= 2**(bits - 1), so the result has at least exponent * (bits - 1) bits
            if abs(base) > 1 and exponent * (abs(base).bit_length() - 1) > MAX_INT_BITS:
                self._arith_error("result is too large", span)
        result = base**exponent
        if isinstance(result, complex):
            self._arith_error("result is not a real number", span)
        return result

    def _arith_error(self, message: str, span: Span) -> Any:
        self.diagnostics.append(diag("R004", message, span))
        raise _Failed

    # -------------------------------------------------------------- rewriting

    def value_expr(self, expr: ast.Expr, scope: _Scope) -> ast.Expr:
        """Replace a value expression by its literal; on failure keep it (already reported)."""
        if isinstance(expr, _LITERALS):
            return expr  # already a literal: shared, not copied
        if isinstance(expr, ast.Call) and is_dim_call(expr):
            declared = self.config_call(expr, scope)  # a size symbol's declaration
            self.diagnostics += dim_declaration("", declared)[1]
            return declared
        if isinstance(expr, ast.TupleExpr | ast.ListExpr):
            # item by item, so each element keeps its own span: stride=(1, 0) points at the 0
            items = tuple(self.value_expr(item, scope) for item in expr.items)
            if any(item.span in self.failed_spans for item in items):
                self.failed_spans.add(expr.span)  # the tuple is incomplete: skip it too
            return expr if _same(expr.items, items) else type(expr)(items, expr.span)
        try:
            return to_node(self.evaluate(expr, scope), expr.span)
        except _Failed:
            self.failed_spans.add(expr.span)
            return expr
        except _Symbolic as symbolic:
            return self.symbolic_expr(expr, scope, str(symbolic))

    def symbolic_expr(self, expr: ast.Expr, scope: _Scope, name: str) -> ast.Expr:
        """An expression over a size symbol: kept (constants inside it resolved) where
        symbols are allowed (input_shape), S111 elsewhere."""
        if not self.allow_symbols:
            self.diagnostics.append(
                diag(
                    "S111",
                    f"'{name}' is a symbolic size (declared with dim); only input_shape may "
                    "use it: the value here must be concrete",
                    expr.span,
                    hint="write a number here, e.g. the largest size you need",
                )
            )
            self.failed_spans.add(expr.span)
            return expr
        match expr:
            case ast.BinOp(left=left, right=right):
                return replace(
                    expr, left=self.value_expr(left, scope), right=self.value_expr(right, scope)
                )
            case ast.UnaryOp(operand=operand):
                return replace(expr, operand=self.value_expr(operand, scope))
        return expr

    def catalog_expr(self, expr: ast.Expr, scope: _Scope) -> ast.Expr:
        """Names stay (catalog entries, references); call arguments are values."""
        match expr:
            case ast.Name() | ast.String():
                return expr
            case ast.Call():
                return self.config_call(expr, scope)
            case ast.ListExpr(items=items, span=span):
                return ast.ListExpr(tuple(self.catalog_expr(i, scope) for i in items), span)
        return self.value_expr(expr, scope)

    def config_call(self, call: ast.Call, scope: _Scope) -> ast.Call:
        return replace(
            call,
            args=tuple(self.config_value(a, scope) for a in call.args),
            keywords=tuple(
                replace(k, value=self.config_value(k.value, scope)) for k in call.keywords
            ),
            suffixes=self.suffixes(call.suffixes, scope),
        )

    def config_value(self, expr: ast.Expr, scope: _Scope) -> ast.Expr:
        """An argument of a configuration call: nested calls (Compose([ToTensor()])) stay."""
        match expr:
            case ast.Call():
                return self.config_call(expr, scope)
            case ast.ListExpr(items=items, span=span) if any(
                isinstance(i, ast.Call) for i in items
            ):
                return ast.ListExpr(tuple(self.config_value(i, scope) for i in items), span)
        return self.value_expr(expr, scope)

    def keywords(self, keywords: tuple[ast.Keyword, ...], scope: _Scope) -> tuple[ast.Keyword, ...]:
        if not keywords:
            return keywords
        resolved = tuple(self.keyword(k, scope) for k in keywords)
        return keywords if _same(keywords, resolved) else resolved

    def keyword(self, keyword: ast.Keyword, scope: _Scope) -> ast.Keyword:
        if keyword.name == TIE:
            return keyword  # tie=transformer.wte names a layer, not a constant
        value = self.value_expr(keyword.value, scope)
        return keyword if value is keyword.value else replace(keyword, value=value)

    def suffix(self, suffix: ast.Suffix, scope: _Scope) -> ast.Suffix:
        args = tuple(self.value_expr(a, scope) for a in suffix.args)
        keywords = self.keywords(suffix.keywords, scope)
        if _same(suffix.args, args) and keywords is suffix.keywords:
            return suffix
        return replace(suffix, args=args, keywords=keywords)

    def suffixes(self, suffixes: tuple[ast.Suffix, ...], scope: _Scope) -> tuple[ast.Suffix, ...]:
        if not suffixes:
            return suffixes
        resolved = tuple(self.suffix(s, scope) for s in suffixes)
        return suffixes if _same(suffixes, resolved) else resolved

    def op_call(self, call: ast.Call, scope: _Scope, tensor_inputs: bool) -> ast.Call:
        """An operation application; in graph form its leading positionals are tensors."""
        spec = ops.lookup(call.func)
        if spec is None and call.func not in self.model_names:
            return call  # an unknown operation (S001): its arguments mean nothing yet
        if spec is not None and spec.variadic:
            n_inputs = len(call.args)  # in a chain too, so the semantic pass can explain
        elif not tensor_inputs:
            n_inputs = 0
        elif spec is None:
            n_inputs = 1
        else:  # a name that is no constant here is a tensor: multihead_attention(x, memory)
            n_inputs = spec.graph_inputs(
                call.args,
                lambda arg: (
                    (
                        isinstance(arg, ast.Call | ast.Chain)
                        and not value_call(arg, lambda name: scope.find(name) is not None)
                    )
                    or (isinstance(arg, ast.Name) and scope.find(arg.id) is None)
                ),
            )
        positional = spec.positional_params if spec else ()
        args: list[ast.Expr] = []
        for index, arg in enumerate(call.args):
            param_index = index - n_inputs
            if index < n_inputs:
                args.append(self.tensor_expr(arg, scope))
            elif (
                0 <= param_index < len(positional) and positional[param_index].kind is ArgKind.MODEL
            ):
                args.append(self.op_call(arg, scope, False) if isinstance(arg, ast.Call) else arg)
            else:
                outer, self.argument_of = self.argument_of, spec
                try:
                    args.append(self.value_expr(arg, scope))
                finally:
                    self.argument_of = outer
        keywords = self.keywords(call.keywords, scope)
        suffixes = self.suffixes(call.suffixes, scope)
        if _same(call.args, args) and keywords is call.keywords and suffixes is call.suffixes:
            return call
        return replace(call, args=tuple(args), keywords=keywords, suffixes=suffixes)

    def tensor_expr(self, expr: ast.Expr, scope: _Scope) -> ast.Expr:
        match expr:
            case ast.Call():
                return self.op_call(expr, scope, tensor_inputs=True)
            case ast.Chain(source=source, steps=steps, span=span):
                new_source = self.tensor_expr(source, scope)
                new_steps = tuple(self.op_call(step, scope, tensor_inputs=False) for step in steps)
                if new_source is source and _same(steps, new_steps):
                    return expr
                return replace(expr, source=new_source, steps=new_steps, span=span)
        return expr  # names are tensors; anything else is reported by the semantic pass

    def forward(self, forward: ast.Forward, scope: _Scope) -> ast.Forward:
        self.tensors = {forward.param: ast.Name(forward.param, forward.param_span)}
        for stmt in forward.body:
            if isinstance(stmt, ast.Assign):
                self.tensors[stmt.target] = stmt.value
                self.tensors.update((name, stmt.value) for name, _ in stmt.targets)
        body = tuple(self.forward_statement(stmt, scope) for stmt in forward.body)
        self.tensors = {}
        return forward if _same(forward.body, body) else replace(forward, body=body)

    def forward_statement(self, stmt: ast.ForwardStmt, scope: _Scope) -> ast.ForwardStmt:
        match stmt:
            case ast.Assign(value=value) | ast.Return(value=value):
                resolved = self.tensor_expr(value, scope)
                return stmt if resolved is value else replace(stmt, value=resolved)
            case ast.ChainStmt(chain=chain):
                resolved = self.tensor_expr(chain, scope)
                assert isinstance(resolved, ast.Chain)
                return stmt if resolved is chain else replace(stmt, chain=resolved)
        return stmt

    def fields(
        self,
        fields: tuple[ast.Field, ...],
        table: dict[str, config.FieldSpec],
        scope: _Scope,
        *,
        resolve_unknown: bool,
    ) -> tuple[ast.Field, ...]:
        out: list[ast.Field] = []
        for item in fields:
            spec = table.get(item.name)
            if spec is None and not resolve_unknown:
                out.append(item)
            elif spec is not None and spec.kind.takes_catalog_names:
                out.append(replace(item, value=self.catalog_expr(item.value, scope)))
            elif isinstance(item.value, ast.Call):
                out.append(replace(item, value=self.config_call(item.value, scope)))
            elif self.bare_label(item, spec, scope):
                out.append(item)
            else:
                self.allow_symbols = item.name == "input_shape" and table is config.MODEL_TABLE
                try:
                    out.append(replace(item, value=self.value_expr(item.value, scope)))
                finally:
                    self.allow_symbols = False
        return tuple(out)

    def bare_label(self, item: ast.Field, spec: config.FieldSpec | None, scope: _Scope) -> bool:
        """A bare word for a string field (precision = fp16): say to quote it."""
        value = item.value
        if not (
            spec is not None
            and spec.kind is config.FieldKind.STR
            and isinstance(value, ast.Name)
            and scope.find(value.id) is None
        ):
            return False
        self.diagnostics.append(
            diag(
                "R001",
                f"undefined name '{value.id}': field '{item.name}' takes a string",
                value.span,
                hint=f'quote it: {item.name} = "{value.id}"',
            )
        )
        self.failed_spans.add(value.span)
        return True

    # -------------------------------------------------------------- program

    def run(self) -> ast.AuraneProgram:
        globals_ = self.make_scope(list(self.program.constants), None)
        statements: list[ast.Statement] = []
        for stmt in self.program.statements:
            match stmt:
                case ast.Constant():
                    statements.append(replace(stmt, value=self.value_expr(stmt.value, globals_)))
                case ast.Model():
                    statements.append(self.model(stmt, globals_))
                case ast.Experiment() | ast.Dataset() | ast.Train() | ast.TrainGan():
                    table, allows_unknown = config.BLOCK_TABLES[type(stmt)]
                    fields = self.fields(
                        stmt.fields, table, globals_, resolve_unknown=allows_unknown
                    )
                    statements.append(replace(stmt, fields=fields))
                case _:
                    statements.append(stmt)
        return replace(self.program, statements=tuple(statements))

    def model(
        self, model: ast.Model, globals_: _Scope, params: dict[str, Any] | None = None
    ) -> ast.Model:
        """Resolve a model; a parameterised block resolves only per call (``params`` given)."""
        if model.params and params is None:  # resolved per call by ``resolve_block``
            fields = self.fields(model.fields, config.MODEL_TABLE, globals_, resolve_unknown=False)
            return replace(model, fields=fields)
        local: list[ast.Constant | ast.Field] = [
            f for f in model.fields if f.name not in MODEL_FIELD_NAMES
        ]
        if params is not None:
            local += [
                ast.Constant(p.name, p.name_span, ast.NoneLit(p.span), p.span) for p in model.params
            ]
        scope = self.make_scope(list(local), globals_)
        if params is not None:
            scope.values.update(params)
        fields = tuple(
            replace(f, value=self.value_expr(f.value, scope))
            if f.name not in MODEL_FIELD_NAMES
            else f
            for f in model.fields
        )
        fields = self.fields(fields, config.MODEL_TABLE, scope, resolve_unknown=False)
        forward = self.forward(model.forward, scope) if model.forward else None
        return replace(model, fields=fields, forward=forward)


_LITERALS = (ast.Number, ast.String, ast.Bool, ast.NoneLit)


def value_call(expr: ast.Expr, is_constant: Callable[[str], bool]) -> bool:
    """``max(8, c // 4)``: a call of a function constants compute (``FUNCTIONS``) whose
    first argument is a value, not the reduction ``max(x, 1)`` of a tensor ``x``."""
    if not (
        isinstance(expr, ast.Call)
        and expr.func in FUNCTIONS
        and expr.args
        and not (expr.keywords or expr.suffixes or expr.layer)
    ):
        return False
    first = expr.args[0]
    match first:
        case ast.Number() | ast.UnaryOp() | ast.BinOp():
            return True
        case ast.Name(id=name):
            return is_constant(name)
    return value_call(first, is_constant)


def _same(old: tuple[Any, ...], new: tuple[Any, ...] | list[Any]) -> bool:
    """Whether rewriting changed nothing, so the original node can be shared."""
    return len(old) == len(new) and all(map(is_, old, new))


def _def_name(item: ast.Constant | ast.Field) -> tuple[str, Span]:
    return item.name, item.name_span


def _def_value(item: ast.Constant | ast.Field) -> ast.Expr:
    return item.value


def evaluate_constant(program: ast.AuraneProgram, expr: ast.Expr) -> tuple[Any, list[Diagnostic]]:
    """The value of a constant expression in the program's global scope (None on error)."""
    resolver = _Resolver(program)
    scope = resolver.make_scope(list(program.constants), None)
    try:
        return resolver.evaluate(expr, scope), resolver.diagnostics
    except _Failed:
        return None, resolver.diagnostics


def resolve_block(
    program: ast.AuraneProgram, model: ast.Model, params: dict[str, Any]
) -> tuple[ast.Model, list[Diagnostic]]:
    """One call's instance of a parameterised block: ``params`` bound as constants."""
    resolver = _Resolver(program)
    globals_ = resolver.make_scope(list(program.constants), None)
    return resolver.model(model, globals_, params), resolver.diagnostics


def resolve_program(program: ast.AuraneProgram) -> tuple[ast.AuraneProgram, list[Diagnostic]]:
    resolved, diagnostics, _ = resolve_with_failures(program)
    return resolved, diagnostics


def resolve_with_failures(
    program: ast.AuraneProgram,
) -> tuple[ast.AuraneProgram, list[Diagnostic], frozenset[Span]]:
    """``resolve_program`` plus the spans of the value expressions that stayed unresolved."""
    resolver = _Resolver(program)
    resolved = resolver.run()
    return resolved, resolver.diagnostics, frozenset(resolver.failed_spans)

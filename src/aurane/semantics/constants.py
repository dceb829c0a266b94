"""Constant resolution: global and model scopes, forward references, cycles, arithmetic.

The result is a new program in which every value position holds a literal node located at
the span of the expression it replaced. Positions that take tensors (graph inputs, chain
sources), catalog names (losses, metrics, dtypes, ...) or model names keep their names.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from operator import is_
from typing import Any, TypeVar

from aurane import ops
from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ops.rules import is_int, is_number
from aurane.ops.spec import ArgKind
from aurane.records import field, record, replace
from aurane.semantics import config
from aurane.semantics.dims import dim_declaration, is_dim_call
from aurane.semantics.functions import (
    FUNCTION_NAMES,
    MAX_SEQUENCE,
    FunctionError,
    call_function,
    is_function,
)
from aurane.semantics.inits import INIT
from aurane.semantics.suggest import did_you_mean
from aurane.semantics.symbolic import FUNCTIONS, PRINTED, is_symbolic, plain
from aurane.semantics.symbolic import item as table_item
from aurane.semantics.tying import TIE
from aurane.semantics.unroll import (
    ControlFlow,
    Failed,
    Unrolling,
    origin_text,
    reads_input_shape,
    tensor_names,
)
from aurane.semantics.values import OpValue, show, to_node, type_name
from aurane.source import Span
from aurane.syntax import ast
from aurane.syntax.layer_names import QUOTED_PART, layer_parts
from aurane.syntax.printer import expr_text
from aurane.syntax.tokens import MAX_NUMBER

MODEL_FIELD_NAMES = frozenset(config.MODEL_TABLE)
# No result past the largest float64 (MAX_NUMBER, as for literals): an integer beyond it
# is infinite wherever torch reads it as a float. ``**`` is refused before computing.
MAX_INT_BITS = 1024


_Failed = Failed  # evaluation failed; the diagnostic (if any) was already recorded


# the initialiser names parameter(init=...) takes in call form (zeros, normal(0.02), ...)
_PARAMETER_INITS = frozenset({"zeros", "ones", "normal", "constant", "full"})


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


class _Resolver(ControlFlow):
    def __init__(self, program: ast.AuraneProgram) -> None:
        self.program = program
        self.unrolling: Unrolling | None = None  # the forward body being unrolled
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
            return self.not_constant(name, span, scope)
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

    def not_constant(self, name: str, span: Span, scope: _Scope) -> Any:
        """A name that is no constant: an operation or model as a value, a tensor, or R001."""
        if name in self.model_names:
            return OpValue(name, True)
        if ops.lookup(name) is not None:
            return OpValue(name, False)
        if isinstance(self.tensors.get(name), ast.BinOp | ast.UnaryOp | ast.Number):
            raise _Failed  # a constant computed inside forward: the semantic pass says S017
        state = self.unrolling
        if state is not None and name.split(".")[0] in state.tensors:
            spec = self.argument_of
            takes_tensor = spec is not None and (spec.max_inputs or 2) > 1
            if not (state.context is None and takes_tensor and name in self.tensors):
                self.tensor_read(name, span, state)
        self.undefined(name, span, scope)
        raise _Failed

    def tensor_read(self, name: str, span: Span, state: Unrolling) -> Any:
        """A tensor where a constant is needed: S120 in a condition, S121 in a loop."""
        head = name.split(".")[0]
        if name.endswith(".shape"):
            problem = f"'{name}' needs an index: {name}[1] is the size of axis 1"
        else:
            problem = f"'{head}' is a tensor, whose values exist only when the model runs"
        if state.context == "if":
            self.diagnostics.append(
                diag(
                    "S120",
                    f"an 'if' is decided at compile time, on constants: {problem}",
                    span,
                    hint="test a constant, a block parameter, a loop variable or an input "
                    "size such as x.shape[1]",
                )
            )
        elif state.context == "for":
            self.diagnostics.append(
                diag(
                    "S121",
                    "a 'for' loop is unrolled at compile time and runs over a constant: " + problem,
                    span,
                    hint="loop over range(n) or a list constant",
                )
            )
        else:
            self.diagnostics.append(
                diag(
                    "S125",
                    f"a constant is needed here, but {problem}",
                    span,
                    hint="use a constant, a block parameter or an input size (x.shape[1])",
                )
            )
        raise _Failed

    def child_scope(self, scope: _Scope, values: dict[str, tuple[Any, Span]]) -> _Scope:
        definitions: dict[str, ast.Constant | ast.Field] = {
            name: ast.Constant(name, span, ast.NoneLit(span), span)
            for name, (_, span) in values.items()
        }
        child = _Scope(definitions, scope)
        child.values.update({name: value for name, (value, _) in values.items()})
        return child

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
            case ast.Compare() | ast.BoolOp() | ast.Not() | ast.IfExp():
                return self.condition(expr, scope)
            case ast.Subscript(value=value, index=index, span=span):
                return self.subscript(value, index, span, scope)
            case ast.Call() if is_function(expr.func) and not expr.suffixes:
                return self.function(expr, scope)
            case ast.OpRef(name=name, is_model=is_model):
                return OpValue(name, is_model)
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
        self.diagnostics.append(self.not_literal(expr))
        raise _Failed

    def condition(self, expr: ast.Expr, scope: _Scope) -> Any:
        """``==``, ``in``, ``and``, ``not``, ``a if c else b``: Python's results; ``and``,
        ``or`` and the conditional evaluate only the side they need."""
        match expr:
            case ast.Not(operand=operand):
                return not self.evaluate(operand, scope)
            case ast.BoolOp(op=op, left=left, right=right):
                first = self.evaluate(left, scope)
                if bool(first) == (op == "or"):
                    return first
                return self.evaluate(right, scope)
            case ast.IfExp(body=body, test=test, orelse=orelse):
                chosen = body if self.evaluate(test, scope) else orelse
                return self.evaluate(chosen, scope)
            case ast.Compare(op=op, left=left, right=right, span=span):
                lhs = self.evaluate(left, scope)
                rhs = self.evaluate(right, scope)
                return self.compare(op, lhs, rhs, span)
        raise _Failed

    def compare(self, op: str, lhs: Any, rhs: Any, span: Span) -> bool:
        if op in ("in", "not in"):
            if not isinstance(rhs, list | tuple | range | str):
                self._arith_error(
                    f"'{op}' needs a list, tuple or range, got {type_name(rhs)}", span
                )
            if isinstance(rhs, str) and not isinstance(lhs, str):
                self._arith_error(f"'{op}' a string needs a string, got {type_name(lhs)}", span)
            found = lhs in rhs
            return found if op == "in" else not found
        if op in ("==", "!="):
            same = type_name(lhs) == type_name(rhs) or (is_number(lhs) and is_number(rhs))
            equal = same and plain(lhs) == plain(rhs)
            return equal if op == "==" else not equal
        ordered = (is_number(lhs) and is_number(rhs)) or (
            isinstance(lhs, str) and isinstance(rhs, str)
        )
        if not ordered:
            self._arith_error(
                f"'{op}' needs two numbers or two strings, got {type_name(lhs)} and "
                f"{type_name(rhs)}",
                span,
            )
        match op:
            case "<":
                return bool(lhs < rhs)
            case "<=":
                return bool(lhs <= rhs)
            case ">":
                return bool(lhs > rhs)
        return bool(lhs >= rhs)

    def subscript(self, value: ast.Expr, index: ast.Expr, span: Span, scope: _Scope) -> Any:
        if (
            isinstance(value, ast.Name)
            and value.id.endswith(".shape")
            and scope.find(value.id) is None
        ):
            position = self.evaluate(index, scope)
            return self.input_size(value, position, index.span, span)
        container = self.evaluate(value, scope)
        position = self.evaluate(index, scope)
        if not isinstance(container, list | tuple | range | str):
            self._arith_error(
                f"only a list, tuple, range or string has items; this is {type_name(container)}",
                value.span,
            )
        if not is_int(position):
            self._arith_error(
                f"an index must be an integer, got {type_name(position)} {show(plain(position))}",
                index.span,
            )
        if not -len(container) <= position < len(container):
            shown = show(plain(container)) if len(container) <= 16 else type_name(container)
            self._arith_error(
                f"index {int(position)} is outside the {len(container)} items of {shown}",
                index.span,
            )
        if self.written_table(value, scope):
            return table_item(container, position)
        return container[int(position)]

    def written_table(self, value: ast.Expr, scope: _Scope) -> bool:
        """Whether ``value`` (the subscripted expression) is a list or tuple the source
        writes out, or an item of one (``cfg[k]`` of ``cfg[k][1]``): an item of it at a
        parameter's index keeps its tree (``symbolic.item``), the table a constant of the
        program. Not a list a parameter gives, which differs between calls."""
        while isinstance(value, ast.Subscript):
            value = value.value
        if isinstance(value, ast.Name) and (owner := scope.find(value.id)) is not None:
            value = _def_value(owner.definitions[value.id])
        return isinstance(value, ast.ListExpr | ast.TupleExpr)

    def input_size(self, value: ast.Name, position: Any, index_span: Span, span: Span) -> Any:
        """``x.shape[k]``: axis k of the forward input (k = 0 is the batch axis)."""
        state = self.unrolling
        head = value.id.removesuffix(".shape")
        if state is None or head != state.param:
            inside = state is not None and head in state.tensors
            self.diagnostics.append(
                diag(
                    "S126",
                    f"'{head}.shape' cannot be read here: only the forward input's sizes are "
                    "known at compile time"
                    + (f" ('{head}' is a tensor of this forward body)" if inside else ""),
                    value.span,
                    hint=f"read {state.param}.shape[k], the input's sizes"
                    if state is not None
                    else "read x.shape[k] inside a forward body",
                )
            )
            raise _Failed
        if state.rebound is not None:
            self.diagnostics.append(
                diag(
                    "S126",
                    f"{head}.shape reads the sizes of the forward's input, but '{head}' holds "
                    f"another value since {state.rebound}",
                    value.span,
                    labels=(Label(state.rebound, f"'{head}' is rebound here"),),
                    hint=f"read {head}.shape before that statement, or bind the new value to "
                    "another name and pass its size to a block",
                )
            )
            raise _Failed
        if state.input_shape is None:
            self.diagnostics.append(
                diag(
                    "S126",
                    f"the sizes of '{head}' are not known here",
                    value.span,
                    hint="give the model an input_shape, or call it as a block",
                )
            )
            raise _Failed
        rank = len(state.input_shape) + 1  # with the batch axis
        if not is_int(position) or not -rank <= position < rank:
            self.diagnostics.append(
                diag(
                    "S126",
                    f"{head}.shape has {rank} axes (the batch axis is 0), so index "
                    f"{show(plain(position))} is outside it",
                    index_span,
                    hint=f"use 1 to {rank - 1}, or -1 for the last axis",
                )
            )
            raise _Failed
        axis = int(position) % rank
        if axis == 0:
            self.diagnostics.append(
                diag(
                    "S126",
                    f"{head}.shape[{int(position)}] is the batch size, which is known only "
                    "when the model runs",
                    span,
                    hint="read a sample axis, e.g. x.shape[1] for the channels",
                )
            )
            raise _Failed
        size = state.input_shape[axis - 1]
        if not isinstance(size, int):
            self.diagnostics.append(
                diag(
                    "S126",
                    f"{head}.shape[{int(position)}] is the symbolic size '{size}', known only "
                    "when the model runs",
                    span,
                    hint="make that axis a number in input_shape to decide on it",
                )
            )
            raise _Failed
        return size

    def function(self, call: ast.Call, scope: _Scope) -> Any:
        """A constant function (``FUNCTION_NAMES``); ``max(8, c // 4)``, ``int(...)``,
        ``make_divisible(...)`` and the other number functions of a block's symbolic
        parameters stay expressions (``FUNCTIONS``), so the class writes ``max(8, c // 4)``."""
        args = self.evaluate_all(call.args, scope)
        keywords: dict[str, Any] = {}
        for keyword in call.keywords:
            keywords[keyword.name] = self.evaluate(keyword.value, scope)
        try:
            result = call_function(call.func, args, keywords)
        except FunctionError as error:
            self._arith_error(str(error), call.span)
        printed = PRINTED.get(call.func)
        if printed is not None and isinstance(result, int | float):
            many = call.func in ("min", "max") and len(args) == 1
            items = list(args[0]) if many else list(args)
            if call.func == "make_divisible":  # (value, divisor, min_value) in order
                items += [keywords[k] for k in ("divisor", "min_value") if k in keywords]
            elif "ndigits" in keywords:
                items.append(keywords["ndigits"])
            if any(is_symbolic(item) for item in items):
                result = FUNCTIONS[printed](*items)
        if isinstance(result, float) and not math.isfinite(result):
            self._arith_error("result is not a finite number", call.span)
        return result

    def not_literal(self, expr: ast.Expr) -> Diagnostic:
        """R005 with the fix for what the expression is."""
        if not isinstance(expr, ast.Call):
            return diag(
                "R005",
                "a constant value must be a literal, not an operation or call",
                expr.span,
                hint="write the call where it is used",
            )
        known = ", ".join(FUNCTION_NAMES)
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
            f"'{expr.func}' is not a constant function: a constant value cannot call "
            f"'{expr.func}'; only {known} are computed at compile time",
            expr.func_span,
            hint=f"compute it with numbers, + - * / // % ** and {known}; a configuration "
            "call (adam(...), ToTensor()) goes in the field that takes it",
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
        if isinstance(expr, ast.DictExpr):  # input_shape = {ids: (seq,), mask: (seq,)}
            values = tuple(self.value_expr(value, scope) for value in expr.values)
            if any(value.span in self.failed_spans for value in values):
                self.failed_spans.add(expr.span)
            return expr if _same(expr.values, values) else replace(expr, values=values)
        if isinstance(expr, ast.TupleExpr | ast.ListExpr):
            # item by item, so each element keeps its own span: stride=(1, 0) points at the 0
            items = tuple(self.value_expr(item, scope) for item in expr.items)
            if any(item.span in self.failed_spans for item in items):
                self.failed_spans.add(expr.span)  # the tuple is incomplete: skip it too
            return expr if _same(expr.items, items) else type(expr)(items, expr.span)
        try:
            value = self.evaluate(expr, scope)
            if isinstance(value, range):
                if len(value) > MAX_SEQUENCE:
                    self._arith_error(f"a range of {len(value):,} numbers is too long", expr.span)
                value = list(value)
            return to_node(value, expr.span)
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

    def keywords(
        self,
        keywords: tuple[ast.Keyword, ...],
        scope: _Scope,
        *,
        initialised: bool = False,
        spec: ops.OpSpec | None = None,
    ) -> tuple[ast.Keyword, ...]:
        """``initialised``: ``init=`` is an initialiser (``normal(0.02)``), not an argument;
        a tensor keyword of ``spec`` (``attn_mask=pad``) names a tensor and stays a name."""
        if not keywords:
            return keywords
        resolved = tuple(
            k if _names_tensor(spec, k, scope) else self.keyword(k, scope, initialised)
            for k in keywords
        )
        return keywords if _same(keywords, resolved) else resolved

    def keyword(
        self, keyword: ast.Keyword, scope: _Scope, initialised: bool = False
    ) -> ast.Keyword:
        if keyword.name == TIE:
            return keyword  # tie=transformer.wte names a layer, not a constant
        if keyword.name == INIT and initialised:
            return replace(keyword, value=self.init_spec(keyword.value, scope))
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
        named = [self.suffix_operation(s, scope) for s in suffixes]
        resolved = tuple(self.suffix(s, scope) for s in named if s is not None)
        return suffixes if _same(suffixes, resolved) else resolved

    def suffix_operation(self, suffix: ast.Suffix, scope: _Scope) -> ast.Suffix | None:
        """``.act`` with ``act`` an operation constant: that operation (None for none)."""
        if suffix.name == "residual" or ops.lookup(suffix.name) is not None:
            return suffix
        if scope.find(suffix.name) is None:
            return suffix  # an unknown suffix (S016)
        try:
            value = self.evaluate(ast.Name(suffix.name, suffix.name_span), scope)
        except _Symbolic:
            return suffix
        except _Failed:
            self.failed_spans.add(suffix.span)
            return suffix
        if value is None:
            return None
        if not isinstance(value, OpValue) or value.is_model:
            what = f"{type_name(value)} {show(plain(value))}"
            self.diagnostics.append(
                diag(
                    "S125",
                    f"'.{suffix.name}' is {what}: a suffix applies an activation",
                    suffix.name_span,
                    hint=f"give '{suffix.name}' an activation such as relu, or none",
                )
            )
            self.failed_spans.add(suffix.span)
            return suffix
        return replace(suffix, name=value.name)

    def applied(self, call: ast.Call, scope: _Scope) -> ast.Call | None:
        """``act()``/``block(64)`` where ``act``/``block`` is a constant naming an operation
        or model: the call of that operation (None for ``none``: nothing is applied)."""
        if "." in call.func or scope.find(call.func) is None:
            return call
        try:
            value = self.evaluate(ast.Name(call.func, call.func_span), scope)
        except _Symbolic:
            return call
        except _Failed:
            self.failed_spans.add(call.span)
            raise
        if value is None:
            return None
        if not isinstance(value, OpValue):
            self.diagnostics.append(
                diag(
                    "S125",
                    f"'{call.func}' is {type_name(value)} {show(plain(value))}, not an "
                    "operation or model, so it cannot be applied",
                    call.func_span,
                    hint=f"give '{call.func}' an operation (relu) or a model, or none",
                )
            )
            self.failed_spans.add(call.span)
            raise _Failed
        return replace(call, func=value.name)

    def layer_name(self, node: _Named, scope: _Scope) -> _Named:
        """Fill the name's template holes and drop the quotes of quoted parts."""
        layer = node.layer
        if layer is None or not ("{" in layer or '"' in layer or "'" in layer):
            return node
        span = node.layer_span or node.span
        pieces = layer.split("{}")
        text = pieces[0]
        for hole, piece in zip(node.layer_holes, pieces[1:], strict=True):
            value = self.evaluate(hole, scope)
            if isinstance(value, bool) or not (is_int(value) or isinstance(value, str)):
                self.template_error(
                    f"a name template takes integers and strings, got {type_name(value)} "
                    f"{show(plain(value))}",
                    hole.span,
                )
            shown = str(int(value)) if is_int(value) else str(value)
            if not QUOTED_PART.match(shown):
                self.template_error(
                    f"{show(plain(value))} cannot be part of a layer name: names hold letters, "
                    "digits, '_' and '-'",
                    hole.span,
                )
            text += shown + piece
        path = ".".join(part.strip("\"'") for part in layer_parts(text))
        self.record_name(path, span)
        return replace(node, layer=path, layer_holes=())

    def template_error(self, message: str, span: Span) -> None:
        self.diagnostics.append(diag("S124", message, span, hint="write as layer{i + 1}"))
        raise _Failed

    def record_name(self, path: str, span: Span) -> None:
        """A name a template gave in one iteration; the same name twice is S124."""
        state = self.unrolling
        if state is None or not state.origin or path.endswith(".*"):
            return
        here = origin_text(state.origin)
        given = state.names.setdefault(span, {})
        first = given.get(path)
        if first is not None and first != here:
            self.diagnostics.append(
                diag(
                    "S124",
                    f"the layer name '{path}' is given twice by this name: {first}, and {here}",
                    span,
                    hint="make the name depend on the loop variable, e.g. layer{i + 1}",
                )
            )
            raise _Failed
        given[path] = here

    def op_call(self, call: ast.Call, scope: _Scope, tensor_inputs: bool) -> ast.Call:
        """An operation application; in graph form its leading positionals are tensors."""
        spec = ops.lookup(call.func)
        if spec is None and call.func not in self.model_names:
            applied = self.applied(call, scope)
            if applied is None:
                return _DROP_CALL
            call = applied
            spec = ops.lookup(call.func)
        call = self.layer_name(call, scope)
        if spec is None and call.func not in self.model_names:
            return call  # an unknown operation (S001): its arguments mean nothing yet
        if spec is not None and spec.variadic:
            n_inputs = len(call.args)  # in a chain too, so the semantic pass can explain
        elif not tensor_inputs:
            n_inputs = 0
        else:  # a name that is no constant here is a tensor: multihead_attention(x, memory)

            def is_tensor(arg: ast.Expr) -> bool:
                return (
                    isinstance(arg, ast.Call | ast.Chain)
                    and not value_call(arg, lambda name: scope.find(name) is not None)
                ) or (isinstance(arg, ast.Name) and scope.find(arg.id) is None)

            if spec is None:  # a block: one tensor per input of its forward, leading
                n_inputs = block_tensor_count(self.program.model(call.func), call.args, is_tensor)
            else:
                n_inputs = spec.graph_inputs(call.args, is_tensor)
        positional = spec.positional_params if spec else ()
        args: list[ast.Expr] = []
        for index, arg in enumerate(call.args):
            param_index = index - n_inputs
            if index < n_inputs:
                args.append(self.tensor_expr(arg, scope))
            elif (
                0 <= param_index < len(positional) and positional[param_index].kind is ArgKind.MODEL
            ):
                args.append(self.model_arg(arg, scope))
            elif (
                0 <= param_index < len(positional)
                and positional[param_index].kind is ArgKind.TENSOR
                and _tensor_like(arg, scope)
            ):
                args.append(arg)  # masked_fill(x, pad, 0.0): a tensor of the body
            else:
                outer, self.argument_of = self.argument_of, spec
                try:
                    args.append(self.value_expr(arg, scope))
                finally:
                    self.argument_of = outer
        # parameter and buffer have an init= argument of their own
        initialised = spec is not None and spec.name not in ("parameter", "buffer")
        if spec is not None and spec.name == "parameter":
            call = self.parameter_init(self.named_init(call, scope), scope)
        keywords = self.keywords(call.keywords, scope, initialised=initialised, spec=spec)
        suffixes = self.suffixes(call.suffixes, scope)
        if _same(call.args, args) and keywords is call.keywords and suffixes is call.suffixes:
            return call
        return replace(call, args=tuple(args), keywords=keywords, suffixes=suffixes)

    def named_init(self, call: ast.Call, scope: _Scope) -> ast.Call:
        """``parameter(..., init=p0)`` with ``p0`` a string constant (a block's parameter
        ``p0 = "normal"``): the string itself."""
        found = next((k for k in call.keywords if k.name == INIT), None)
        if found is None or not isinstance(found.value, ast.Name):
            return call
        if scope.find(found.value.id) is None:
            return call
        try:
            value = self.evaluate(found.value, scope)
        except (_Failed, _Symbolic):
            return call
        if not isinstance(value, str):
            return call
        text = ast.String(value, found.value.span)
        kept = tuple(replace(k, value=text) if k is found else k for k in call.keywords)
        return replace(call, keywords=kept)

    def parameter_init(self, call: ast.Call, scope: _Scope) -> ast.Call:
        """``parameter(shape, init=normal(0.02))``: the initialiser form of every layer, as
        the parameter's own arguments (``init="normal", std=0.02``)."""
        found = next((k for k in call.keywords if k.name == INIT), None)
        if found is None or isinstance(found.value, ast.String):
            return call
        value = found.value
        name = value.id if isinstance(value, ast.Name) else getattr(value, "func", None)
        if isinstance(value, ast.Name) and name not in _PARAMETER_INITS and scope.find(value.id):
            return call  # a constant or block parameter holding the mode ("normal", ...)
        args = value.args if isinstance(value, ast.Call) else ()
        given = value.keywords if isinstance(value, ast.Call) else ()
        extra: list[ast.Keyword] = []
        if name in ("zeros", "ones") and not args and not given:
            mode = name
        elif name == "normal" and len(args) <= 1 and all(k.name == "std" for k in given):
            mode = "normal"
            extra = [ast.Keyword("std", a.span, a, a.span) for a in args] + list(given)
        elif name in ("constant", "full") and len(args) == 1 and not given:
            mode = "full"
            extra = [ast.Keyword("value", args[0].span, args[0], args[0].span)]
        else:
            self.diagnostics.append(
                diag(
                    "S127",
                    "parameter's init= is zeros, ones, normal(std) or constant(v)",
                    value.span,
                    hint='e.g. parameter((1, 768), init=normal(0.02)) or init="zeros"',
                )
            )
            self.failed_spans.add(call.span)
            raise _Failed
        mode_node = ast.String(mode, value.span)
        kept = [k for k in call.keywords if k is not found]
        return replace(call, keywords=(*kept, replace(found, value=mode_node), *extra))

    def model_arg(self, arg: ast.Expr, scope: _Scope) -> ast.Expr:
        """``repeat(block(64), 2)`` / ``repeat(block, 2)`` with ``block`` a model constant."""
        if isinstance(arg, ast.Call):
            resolved = self.op_call(arg, scope, False)
            if resolved is _DROP_CALL:
                self.diagnostics.append(
                    diag("S125", "none cannot be repeated: it is no model", arg.span)
                )
                self.failed_spans.add(arg.span)
                return arg
            return resolved
        if isinstance(arg, ast.Name) and "." not in arg.id and scope.find(arg.id) is not None:
            try:
                value = self.evaluate(arg, scope)
            except (_Failed, _Symbolic):
                self.failed_spans.add(arg.span)
                return arg
            if isinstance(value, OpValue):
                return ast.Name(value.name, arg.span)
        return arg

    def tensor_expr(self, expr: ast.Expr, scope: _Scope) -> ast.Expr:
        match expr:
            case ast.Call():
                resolved = self.op_call(expr, scope, tensor_inputs=True)
                if resolved is _DROP_CALL:  # h = act(x) with act = none: h is x
                    return self.tensor_expr(expr.args[0], scope) if expr.args else expr
                return resolved
            case ast.Chain(source=source, steps=steps, span=span):
                new_source = self.tensor_expr(source, scope)
                applied = [self.op_call(step, scope, tensor_inputs=False) for step in steps]
                new_steps = tuple(step for step in applied if step is not _DROP_CALL)
                if not new_steps:
                    return new_source
                named = self.layer_name(expr, scope)
                if new_source is source and _same(steps, new_steps) and named is expr:
                    return expr
                return replace(named, source=new_source, steps=new_steps, span=span)
            case ast.TupleExpr(items=items):  # return a, b
                resolved_items = tuple(self.tensor_expr(item, scope) for item in items)
                return expr if _same(items, resolved_items) else replace(expr, items=resolved_items)
        return expr  # names are tensors; anything else is reported by the semantic pass

    def forward(
        self,
        forward: ast.Forward,
        scope: _Scope,
        input_shape: tuple[Any, ...] | None = None,
    ) -> ast.Forward:
        """The body with its ``if``/``for`` unrolled and every value resolved."""
        self.unrolling = Unrolling(forward.param, input_shape, tensor_names(forward))
        self.tensors = _bound_tensors(forward)
        try:
            body = tuple(self.unroll(forward.body, scope, ()))
        except _Symbolic as symbolic:
            self.diagnostics.append(
                diag(
                    "S120",
                    f"this depends on the symbolic size '{symbolic}', whose value is known "
                    "only when the model runs",
                    forward.span,
                    hint="compare a concrete size, or make that axis a number",
                )
            )
            self.failed_spans.add(forward.span)
            return forward
        except _Failed:
            self.failed_spans.add(forward.span)  # what follows would only add noise
            return forward
        finally:
            self.unrolling = None
            self.tensors = {}
        return forward if _same(forward.body, body) else replace(forward, body=body)

    def simple_statement(self, stmt: ast.SimpleStmt, scope: _Scope) -> ast.SimpleStmt | None:
        match stmt:
            case ast.Assign(value=value) | ast.Return(value=value):
                resolved = self.tensor_expr(value, scope)
                return stmt if resolved is value else replace(stmt, value=resolved)
            case ast.ChainStmt(chain=chain):
                resolved = self.tensor_expr(chain, scope)
                if not isinstance(resolved, ast.Chain):
                    return None  # every step applied none: x -> act() does nothing
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
            elif isinstance(item.value, ast.DictExpr) and spec is not None:
                # input_shape = {ids: (seq,), ...}: each value as the field alone would be
                parts = [ast.Field(item.name, item.name_span, v, v.span) for v in item.value.values]
                resolved = self.fields(tuple(parts), table, scope, resolve_unknown=resolve_unknown)
                values = tuple(part.value for part in resolved)
                out.append(replace(item, value=replace(item.value, values=values)))
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
        self,
        model: ast.Model,
        globals_: _Scope,
        params: dict[str, Any] | None = None,
        input_shape: tuple[Any, ...] | None = None,
    ) -> ast.Model:
        """Resolve a model; a block resolved per call (``params`` given, ``{}`` for one that
        reads its input's sizes) unrolls its forward at that call's ``input_shape``."""
        if per_call(model) and params is None:  # resolved per call by ``resolve_block``
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
        param = model.forward.param if model.forward is not None else None
        shape = input_shape if input_shape is not None else _declared_shape(fields, param)
        forward = self.forward(model.forward, scope, shape) if model.forward else None
        inits = tuple(replace(r, spec=self.init_spec(r.spec, scope)) for r in model.inits)
        base = self.config_call(model.base, scope) if model.base is not None else None
        return replace(model, fields=fields, forward=forward, inits=inits, base=base)

    def init_spec(self, spec: ast.Expr, scope: _Scope) -> ast.Expr:
        """``normal(0.02 / sqrt(2 * n_layer))``: the initialiser stays, its arguments resolve."""
        if isinstance(spec, ast.Call):
            return self.config_call(spec, scope)
        return spec


_LITERALS = (ast.Number, ast.String, ast.Bool, ast.NoneLit, ast.OpRef)
_NOWHERE = Span(0, 0, 0, 1)
_DROP_CALL = ast.Call("none", _NOWHERE, (), (), (), _NOWHERE)  # applies nothing
_Named = TypeVar("_Named", ast.Call, ast.Chain)


def per_call(model: ast.Model) -> bool:
    """Whether ``model`` is resolved at each call: it has parameters, or its forward reads
    its input's sizes (``x.shape[1]``) and no input_shape fixes them."""
    if model.params:
        return True
    declared = any(f.name == "input_shape" for f in model.fields)
    return not declared and reads_input_shape(model)


def block_tensor_count(
    model: ast.Model | None, args: tuple[ast.Expr, ...], is_tensor: Callable[[ast.Expr], bool]
) -> int:
    """How many leading arguments of a graph-form block call are its input tensors: the
    first always, then each further tensor up to the count of the block's inputs."""
    inputs = len(model.forward.inputs) if model is not None and model.forward else 1
    count = 1
    while count < min(inputs, len(args)) and is_tensor(args[count]):
        count += 1
    return min(count, len(args)) if args else 1


def _bound_tensors(forward: ast.Forward) -> dict[str, ast.Expr]:
    """The forward input and each name a statement of the body binds, with its value."""
    bound: dict[str, ast.Expr] = {p.name: ast.Name(p.name, p.name_span) for p in forward.inputs}
    for stmt in ast.simple_statements(forward.body):
        if isinstance(stmt, ast.Assign):
            bound[stmt.target] = stmt.value
            bound.update((name, stmt.value) for name, _ in stmt.targets)
    return bound


def _declared_shape(fields: tuple[ast.Field, ...], param: str | None) -> tuple[Any, ...] | None:
    """A resolved input_shape as values (a symbolic axis as its text), for x.shape[k]; of
    several inputs (``{x: (...), y: (...)}``), the forward's first input's, ``param``."""
    found = next((f.value for f in fields if f.name == "input_shape"), None)
    if isinstance(found, ast.DictExpr):
        pairs = zip(found.keys, found.values, strict=True)
        found = next((v for k, v in pairs if k.id == param), None)
    if not isinstance(found, ast.TupleExpr):
        return None
    out: list[Any] = []
    for item in found.items:
        value = item.value if isinstance(item, ast.Number) else None
        whole = isinstance(value, int) and not isinstance(value, bool)
        out.append(value if whole else expr_text(item))
    return tuple(out)


def value_call(expr: ast.Expr, is_constant: Callable[[str], bool]) -> bool:
    """``max(8, c // 4)``, ``make_divisible(c * 2, 8)``: a call of a constant function
    (``FUNCTION_NAMES``) that computes a value. A function that is also an operation
    (``max``) is a value only when its first argument is one, not the reduction
    ``max(x, 1)`` of a tensor ``x``."""
    if not (isinstance(expr, ast.Call) and is_function(expr.func)):
        return False
    if expr.suffixes or expr.layer:
        return False
    if ops.lookup(expr.func) is None:
        return True
    if not expr.args or expr.keywords:
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
    program: ast.AuraneProgram,
    model: ast.Model,
    params: dict[str, Any],
    input_shape: tuple[Any, ...] | None = None,
) -> tuple[ast.Model, list[Diagnostic]]:
    """One call's instance of a block: ``params`` bound as constants, its forward unrolled
    at the call's per-sample ``input_shape`` (for ``x.shape[k]``)."""
    resolver = _Resolver(program)
    globals_ = resolver.make_scope(list(program.constants), None)
    return resolver.model(model, globals_, params, input_shape), resolver.diagnostics


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


def _names_tensor(spec: ops.OpSpec | None, keyword: ast.Keyword, scope: _Scope) -> bool:
    """``attn_mask=pad``: a tensor keyword whose value is a name that is no constant."""
    param = spec.param(keyword.name) if spec is not None else None
    return param is not None and param.kind is ArgKind.TENSOR and _tensor_like(keyword.value, scope)


def _tensor_like(expr: ast.Expr, scope: _Scope) -> bool:
    """A name that is no constant, or an operation call (binding asks to name it)."""
    if isinstance(expr, ast.Name):
        return scope.find(expr.id) is None
    return isinstance(expr, ast.Call | ast.Chain)

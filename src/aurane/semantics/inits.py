"""Weight initialisation: ``init=`` on a layer and ``init TARGET: SPEC`` rules in a model.

An initialiser is one of PyTorch's ``nn.init`` functions, written as a call or a bare name:

==================  ====================================================================
``normal(std)``      ``nn.init.normal_(w, mean=0.0, std=std)`` (``mean=`` by keyword)
``trunc_normal(std)`` ``nn.init.trunc_normal_`` (``mean=``, ``a=``, ``b=``: the cut-offs)
``uniform(a, b)``    ``nn.init.uniform_``
``zeros``/``ones``   ``nn.init.zeros_`` / ``nn.init.ones_``
``constant(v)``      ``nn.init.constant_``
``xavier_uniform``   ``nn.init.xavier_uniform_`` / ``xavier_normal_`` (``gain=``)
``kaiming_normal``   ``nn.init.kaiming_normal_`` / ``kaiming_uniform_`` (``a=``, ``mode=``,
                     ``nonlinearity=``)
==================  ====================================================================

``init=`` sets the layer's weight (layers with a ``weight``: ``INIT_OPS``). A rule's target is
an operation name (its layers' weights; ``dense.bias`` for their biases) or a pattern over
the model's parameter names (``*.c_proj.weight``: ``*`` matches any text, dots included,
as ``fnmatch``). Order (docs/language.md): a class first applies its rules in the order
written, then its layers' own ``init=``; a model's rules reach the layers of the blocks it
calls too, which were initialised when they were built, so the model's rules come last.
"""

from __future__ import annotations

import math
import re
from typing import Any

from aurane import ops
from aurane.codes import diag
from aurane.diagnostics import Diagnostic
from aurane.ops.rules import CONVOLUTION, is_number
from aurane.records import record
from aurane.semantics.symbolic import plain
from aurane.semantics.values import NotLiteral, literal_value, show
from aurane.source import Span
from aurane.syntax import ast

INIT = "init"
# operations whose module has a ``weight`` that ``init=`` sets
INIT_OPS = frozenset(
    {
        "dense",
        "embedding",
        *ops.family(CONVOLUTION),
        "batchnorm",
        "layer_norm",
        "group_norm",
        "instance_norm",
        "rms_norm",
    }
)
_CONVOLUTIONS = frozenset(ops.family(CONVOLUTION))
# torch.nn.init.calculate_gain's nonlinearity names (its own list, not the catalog's)
_NONLINEARITIES = frozenset(
    {
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "sigmoid",
        "tanh",
        "relu",
        "leaky_relu",
        "selu",
    }
)


@record(frozen=True)
class _Initialiser:
    function: str  # the nn.init function
    positional: tuple[str, ...]  # argument names in positional order
    required: tuple[str, ...] = ()
    choices: tuple[tuple[str, frozenset[str]], ...] = ()  # string arguments


_TABLE: dict[str, _Initialiser] = {
    "normal": _Initialiser("normal_", ("std", "mean")),
    "trunc_normal": _Initialiser("trunc_normal_", ("std", "mean", "a", "b")),
    "uniform": _Initialiser("uniform_", ("a", "b")),
    "zeros": _Initialiser("zeros_", ()),
    "ones": _Initialiser("ones_", ()),
    "constant": _Initialiser("constant_", ("val",), required=("val",)),
    "xavier_uniform": _Initialiser("xavier_uniform_", ("gain",)),
    "xavier_normal": _Initialiser("xavier_normal_", ("gain",)),
    "kaiming_normal": _Initialiser(
        "kaiming_normal_",
        ("a", "mode", "nonlinearity"),
        choices=(("mode", frozenset({"fan_in", "fan_out"})), ("nonlinearity", _NONLINEARITIES)),
    ),
    "kaiming_uniform": _Initialiser(
        "kaiming_uniform_",
        ("a", "mode", "nonlinearity"),
        choices=(("mode", frozenset({"fan_in", "fan_out"})), ("nonlinearity", _NONLINEARITIES)),
    ),
}
INITIALISERS: tuple[str, ...] = tuple(_TABLE)
_KEYWORD_ORDER = ("mean", "std", "a", "b", "val", "gain", "mode", "nonlinearity")


@record(frozen=True)
class InitSpec:
    """One initialiser with its arguments (keyword form, in ``nn.init``'s order)."""

    name: str
    args: tuple[tuple[str, Any], ...] = ()

    def text(self) -> str:
        """``normal(std=0.02)``: how ``ir`` and ``profile`` show it."""
        if not self.args:
            return self.name
        return f"{self.name}({', '.join(f'{k}={_shown(v)}' for k, v in self.args)})"

    def python(self, target: str) -> str:
        """``nn.init.normal_(target, std=0.02)``."""
        function = _TABLE[self.name].function
        extra = "".join(f", {k}={_python(v)}" for k, v in self.args)
        return f"nn.init.{function}({target}{extra})"


@record(frozen=True)
class InitTarget:
    """What a rule reaches: an operation's ``param`` (weight/bias), or a name pattern."""

    op: str | None
    param: str | None
    pattern: str | None

    def matches(self, op: str, name: str) -> bool:
        """Whether the parameter ``name`` (``layer.weight``) of an ``op`` layer is reached."""
        if self.pattern is not None:
            return re.fullmatch(_regex(self.pattern), name) is not None
        return op == self.op and name.rsplit(".", 1)[-1] == self.param


def _regex(pattern: str) -> str:
    return ".*".join(re.escape(piece) for piece in pattern.split("*"))


def _shown(value: Any) -> str:
    return show(plain(value)).replace("'", '"') if isinstance(value, str) else show(plain(value))


def _python(value: Any) -> str:
    value = plain(value)
    if isinstance(value, str):
        return repr(value)
    return repr(float(value)) if isinstance(value, float) else repr(value)


def read_init(expr: ast.Expr) -> tuple[InitSpec | None, list[Diagnostic]]:
    """The initialiser ``expr`` names (resolved arguments), or None with S127."""
    if isinstance(expr, ast.Name | ast.OpRef):
        name = expr.id if isinstance(expr, ast.Name) else expr.name
        call = ast.Call(name, expr.span, (), (), (), expr.span)
    elif isinstance(expr, ast.Call) and not expr.suffixes:
        call = expr
    else:
        return None, [_error("an initialiser is a name or a call, such as normal(0.02)", expr.span)]
    entry = _TABLE.get(call.func)
    if entry is None:
        return None, [
            _error(
                f"unknown initialiser '{call.func}'; the initialisers are "
                + ", ".join(INITIALISERS),
                call.func_span,
            )
        ]
    given: dict[str, tuple[Any, Span]] = {}
    if len(call.args) > len(entry.positional):
        return None, [
            _error(
                f"{call.func} takes at most {len(entry.positional)} positional argument"
                f"{'s' if len(entry.positional) != 1 else ''}",
                call.args[len(entry.positional)].span,
            )
        ]
    pairs = [(entry.positional[i], a) for i, a in enumerate(call.args)]
    pairs += [(k.name, k.value) for k in call.keywords]
    for key, value_expr in pairs:
        if key not in entry.positional or key in given:
            why = "is given twice" if key in given else "is not an argument"
            return None, [_error(f"'{key}' {why} of {call.func}", value_expr.span)]
        try:
            value = literal_value(value_expr)
        except NotLiteral:
            return None, [
                _error(f"argument '{key}' of {call.func} must be a constant", value_expr.span)
            ]
        problem = _check(call.func, key, value, dict(entry.choices))
        if problem is not None:
            return None, [_error(problem, value_expr.span)]
        given[key] = (value, value_expr.span)
    for key in entry.required:
        if key not in given:
            return None, [_error(f"{call.func} needs its argument '{key}'", call.span)]
    ordered = tuple((k, given[k][0]) for k in _KEYWORD_ORDER if k in given)
    return InitSpec(call.func, ordered), []


def _check(name: str, key: str, value: Any, choices: dict[str, frozenset[str]]) -> str | None:
    if key in choices:
        if value not in choices[key]:
            options = ", ".join(sorted(choices[key]))
            return f"argument '{key}' of {name} must be one of {options}, got {show(value)}"
        return None
    if not is_number(value):
        return f"argument '{key}' of {name} must be a number, got {show(plain(value))}"
    if not math.isfinite(float(value)):
        return f"argument '{key}' of {name} must be finite"
    if key == "std" and value < 0:
        return f"argument 'std' of {name} must not be negative, got {show(plain(value))}"
    return None


def read_target(rule: ast.InitRule) -> tuple[InitTarget | None, list[Diagnostic]]:
    """``dense``, ``dense.bias`` or a name pattern such as ``*.c_proj.weight``."""
    text = rule.target
    head, _, rest = text.partition(".")
    canonical = ops.canonical(head) if "*" not in head else None
    if canonical is not None and canonical in INIT_OPS:
        if rest in ("", "weight", "bias"):
            param: str = rest or "weight"
            return InitTarget(canonical, param, None), []
        return None, [
            _error(
                f"'init {text}': a rule for {canonical} layers names their weight or bias",
                rule.target_span,
                hint=f"init {head}: ... (the weight) or init {head}.bias: ...",
            )
        ]
    if canonical is not None:
        return None, [
            _error(
                f"'{head}' layers have no weight for an init rule",
                rule.target_span,
                hint="rules name dense, embedding, convolution and norm layers, or a pattern",
            )
        ]
    if not re.fullmatch(r"[A-Za-z0-9_.*\-]+", text) or ".." in text:
        return None, [
            _error(
                f"invalid parameter name pattern '{text}'",
                rule.target_span,
                hint="parts of letters, digits, '_' and '-', joined by '.', with '*' for any text",
            )
        ]
    return InitTarget(None, None, text), []


def split_init(
    keywords: tuple[ast.Keyword, ...], op: str
) -> tuple[tuple[ast.Keyword, ...], ast.Keyword | None]:
    """The keywords without ``init=`` (except ``parameter``'s and ``buffer``'s own), and the
    ``init=``."""
    if op in ("parameter", "buffer"):
        return keywords, None
    found = next((k for k in reversed(keywords) if k.name == INIT), None)
    if found is None:
        return keywords, None
    return tuple(k for k in keywords if k.name != INIT), found


def check_layer_init(op: str, keyword: ast.Keyword) -> tuple[InitSpec | None, list[Diagnostic]]:
    if op not in INIT_OPS:
        return None, [
            _error(
                f"'{op}' has no weight for init=",
                keyword.name_span,
                hint="init= is for dense, embedding, convolution and norm layers; a model "
                "rule such as 'init *.in_proj_weight: ...' reaches any parameter by name",
            )
        ]
    return read_init(keyword.value)


def parameter_names(op: str, args: Any) -> tuple[str, ...]:
    """The parameters a layer of ``op`` holds (for showing inits; empty when unknown)."""
    if op == "dense" or op in _CONVOLUTIONS:
        return ("weight", "bias") if args.get("bias", True) else ("weight",)
    if op == "embedding":
        return ("weight",)
    if op in ("batchnorm", "group_norm", "instance_norm"):
        return ("weight", "bias") if args.get("affine", op != "instance_norm") else ()
    if op in ("layer_norm",):
        return ("weight", "bias") if args.get("bias", True) else ("weight",)
    if op == "rms_norm":
        return ("weight",)
    return ()


@record(frozen=True)
class Rule:
    """A resolved ``init TARGET: SPEC`` line of a model."""

    text: str  # the target as written
    target: InitTarget
    spec: InitSpec
    span: Span


def read_rules(model: ast.Model) -> tuple[tuple[Rule, ...], list[Diagnostic]]:
    """The model's init rules (resolved arguments), in the order written."""
    rules: list[Rule] = []
    found: list[Diagnostic] = []
    for line in model.inits:
        target, problems = read_target(line)
        spec, more = read_init(line.spec)
        found += problems + more
        if target is not None and spec is not None:
            rules.append(Rule(line.target, target, spec, line.span))
    return tuple(rules), found


def _error(message: str, span: Span, hint: str | None = None) -> Diagnostic:
    return diag("S127", message, span, hint=hint or "e.g. init=normal(0.02) or init dense: zeros")

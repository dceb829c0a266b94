"""Semantic analysis: names, references, catalogs, fields, argument kinds, recursion.

Runs on a resolved program. Shapes and dtypes are the type checker's job (ir/lower.py).
"""

from __future__ import annotations

import keyword

from aurane import ops
from aurane.codes import diag
from aurane.diagnostics import Diagnostic, Label
from aurane.ops.spec import BoundArgs
from aurane.records import field, record
from aurane.semantics import config, feeding, sources, uses
from aurane.semantics.block_args import check_block_params
from aurane.semantics.constants import per_call
from aurane.semantics.fields import FieldChecker
from aurane.semantics.forward import ForwardChecker
from aurane.semantics.inputs import check_input_fields, not_yet, several_inputs, several_outputs
from aurane.semantics.suggest import did_you_mean
from aurane.semantics.train_rules import check_train_fields
from aurane.semantics.uncalled import check_uncalled
from aurane.source import Span
from aurane.syntax import ast

RESERVED_ALIASES = frozenset({"torch", "nn", "F", "self", "math", "os", "sys"})


@record
class SemanticResult:
    diagnostics: list[Diagnostic]
    # models with semantic errors or in a recursion cycle: the type checker skips them
    broken_models: set[str] = field(default_factory=set)
    calls: dict[str, list[tuple[str, Span]]] = field(default_factory=dict)
    # arguments bound per Call/Suffix node (by identity), reused by lowering
    bound: dict[int, BoundArgs] = field(default_factory=dict)
    parameterised: set[str] = field(default_factory=set)  # models declaring parameters


def reserved_identifier(name: str) -> bool:
    return (
        keyword.iskeyword(name)
        or keyword.issoftkeyword(name)
        or name.startswith("__")
        or name in RESERVED_ALIASES
    )


def analyze(program: ast.AuraneProgram) -> SemanticResult:
    diagnostics: list[Diagnostic] = []
    result = SemanticResult(diagnostics)
    models = _unique_definitions(program, diagnostics)
    result.parameterised = {name for name, m in models.items() if m.params}
    dataset_names = {d.name for d in program.datasets}
    fields = FieldChecker(dataset_names, diagnostics)
    experiments = [s for s in program.statements if isinstance(s, ast.Experiment)]
    for extra in experiments[1:]:
        diagnostics.append(
            diag(
                "S008",
                "only one experiment block is allowed",
                extra.name_span,
                labels=(Label(experiments[0].name_span, "first experiment here"),),
            )
        )
    standalone: dict[str, Span] = {}
    constants = frozenset(c.name for c in program.constants)
    modules = sources.declared_modules(program)
    block_inputs = {
        name: m.forward.inputs for name, m in models.items() if m.forward and m.forward.params
    }
    diagnostics.extend(uses.check_uses(program))
    for stmt in program.statements:
        match stmt:
            case ast.Experiment():
                _check_fields(stmt, "experiment", fields)
            case ast.Dataset():
                _check_dataset(stmt, fields, diagnostics, modules)
            case ast.Model():
                before = len(diagnostics)
                _check_model(
                    stmt, set(models), fields, diagnostics, result, constants, block_inputs
                )
                if any(d.is_error for d in diagnostics[before:]):
                    result.broken_models.add(stmt.name)
            case ast.Train():
                _check_train(stmt, models, fields, standalone)
                check_train_fields(stmt, models, diagnostics)
            case ast.TrainGan():
                _check_gan(stmt, models, fields, standalone)
    for name, span in standalone.items():
        model = models.get(name)
        if model is not None and not any(f.name == "input_shape" for f in model.fields):
            diagnostics.append(
                diag(
                    "S014",
                    f"model '{name}' is trained, so it needs input_shape",
                    model.name_span,
                    labels=(Label(span, "trained here"),),
                    hint="add input_shape = (...) to the model",
                )
            )
            result.broken_models.add(name)
    called = _reached(models, result.calls)
    for block, found in check_uncalled(program, models, called, set(models), diagnostics).items():
        diagnostics.extend(found)
        if any(d.is_error for d in found):
            result.broken_models.add(block)
    _check_recursion(result)
    return result


def _reached(models: dict[str, ast.Model], calls: dict[str, list[tuple[str, Span]]]) -> set[str]:
    """The models lowered: those with an input_shape and every block they call, in turn."""
    todo = [n for n, m in models.items() if any(f.name == "input_shape" for f in m.fields)]
    reached: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(block for block, _ in calls.get(name, ()))
    return reached


def _unique_definitions(
    program: ast.AuraneProgram, diagnostics: list[Diagnostic]
) -> dict[str, ast.Model]:
    models: dict[str, ast.Model] = {}
    # by kind, then by name; a dataset's as Python reads it (NFKC), since it is spelled
    # into its loader factory, `_make_<dataset>_loader` (a model's class name comes from
    # the backend's namespace allocator, which keeps `ﬁle` and `file` apart)
    seen: dict[str, dict[str, ast.Model | ast.Dataset]] = {"model": {}, "dataset": {}}
    for stmt in program.statements:
        if isinstance(stmt, ast.Model | ast.Dataset):
            kind = "model" if isinstance(stmt, ast.Model) else "dataset"
            key = uses.nfkc(stmt.name) if kind == "dataset" else stmt.name
            first = seen[kind].get(key)
            if first is not None:
                same = "" if first.name == stmt.name else f": Python reads both as '{key}'"
                diagnostics.append(
                    diag(
                        "S008",
                        f"duplicate {kind} '{stmt.name}'{same}",
                        stmt.name_span,
                        labels=(Label(first.name_span, "first defined here"),),
                        hint=f"rename one of the {kind}s",
                    )
                )
                continue
            seen[kind][key] = stmt
            if isinstance(stmt, ast.Model):
                models[stmt.name] = stmt
                _check_model_name(stmt, diagnostics)
    return models


def _check_model_name(model: ast.Model, diagnostics: list[Diagnostic]) -> None:
    if reserved_identifier(model.name):
        diagnostics.append(
            diag(
                "S015",
                f"'{model.name}' cannot be a model name: the generated program needs it",
                model.name_span,
                hint="choose another name",
            )
        )
    elif ops.lookup(model.name) is not None:
        diagnostics.append(
            diag(
                "S015",
                f"model name '{model.name}' hides the catalog operation of that name",
                model.name_span,
                hint="choose another name, e.g. in CamelCase",
            )
        )


def _check_dataset(
    stmt: ast.Dataset,
    fields: FieldChecker,
    diagnostics: list[Diagnostic],
    modules: frozenset[str],
) -> None:
    _check_fields(stmt, f"dataset '{stmt.name}'", fields)
    names = {f.name: f for f in stmt.fields}
    if "transform" in names and "transforms" in names:
        diagnostics.append(
            diag(
                "S008",
                "give either 'transform' or 'transforms', not both",
                names["transforms"].name_span,
                labels=(Label(names["transform"].name_span, "transform given here"),),
            )
        )
    if stmt.source is not None:
        refused = sources.check_source(stmt.source, modules)
        if refused is not None:
            diagnostics.append(refused)
    for item in stmt.fields:
        read = uses.nfkc(item.name)
        if read != item.name:
            # a field becomes a keyword argument, which Python compares after NFKC: `ﬁle` and
            # `file` would be one argument given twice, `ｉmport` the keyword `import`
            diagnostics.append(
                diag(
                    "S015",
                    f"field {uses.shown(item.name)} must be written as Python reads it",
                    item.name_span,
                    hint="choose another name"
                    if reserved_identifier(read) and read not in config.DATASET_TABLE
                    else f"write '{read}'",
                )
            )
        elif reserved_identifier(item.name) and item.name not in config.DATASET_TABLE:
            diagnostics.append(
                diag("S015", f"'{item.name}' cannot be a constructor argument name", item.name_span)
            )


def _check_model(
    model: ast.Model,
    model_names: set[str],
    fields: FieldChecker,
    diagnostics: list[Diagnostic],
    result: SemanticResult,
    constants: frozenset[str] = frozenset(),
    block_inputs: dict[str, tuple[ast.ForwardParam, ...]] | None = None,
) -> None:
    table = config.MODEL_TABLE
    fields.check_block(
        tuple(f for f in model.fields if f.name in table), table, f"model '{model.name}'"
    )
    if model.base is not None:
        _check_variant(model, model_names, diagnostics, result)
        return
    if model.forward is None:
        diagnostics.append(
            diag(
                "S017",
                f"model '{model.name}' has no forward body",
                model.name_span,
                hint="add 'def forward(x):' with the layers",
            )
        )
        return
    diagnostics.extend(check_input_fields(model))
    checker = ForwardChecker(model_names, diagnostics, result.bound)
    checker.parameterised = frozenset(result.parameterised)
    checker.block_inputs = block_inputs or {}
    if model.params:
        check_block_params(model, model_names, diagnostics)
    if per_call(model):
        checker.deferred = True  # the body is checked again for each call, with its values
        checker.constant_names = _constant_names(model, constants)
        checker.constants = frozenset(
            [p.name for p in model.params]
            + [f.name for f in model.fields if f.name not in config.MODEL_TABLE]
            + list(constants)
        )
    checker.run(model.forward)
    result.calls[model.name] = checker.calls


def _check_variant(
    model: ast.Model, model_names: set[str], diagnostics: list[Diagnostic], result: SemanticResult
) -> None:
    """``model resnet50 = ResNet(Bottleneck, [3, 4, 6, 3])``: the base is a model here; its
    arguments are bound (and checked) when the variant is lowered."""
    base = model.base
    assert base is not None
    if model.params:
        diagnostics.append(
            diag(
                "S128",
                f"the variant '{model.name}' cannot take parameters: its block's are given",
                model.params[0].name_span,
                hint=f"write model {model.name} = {base.func}(...) without parameters",
            )
        )
    if base.func not in model_names:
        diagnostics.append(
            diag(
                "S128",
                f"'{base.func}' is no model of this program, so '{model.name}' cannot be a "
                "variant of it",
                base.func_span,
                hint=did_you_mean(base.func, model_names) or "define the block with 'model'",
            )
        )
        return
    calls = [(base.func, base.func_span)]
    calls += [(a.id, a.span) for a in base.args if isinstance(a, ast.Name) and a.id in model_names]
    result.calls[model.name] = calls


def _constant_names(model: ast.Model, constants: frozenset[str]) -> frozenset[str]:
    """What a deferred body's names may be besides tensors: parameters, model constants,
    global constants and loop variables."""
    names = set(constants) | {p.name for p in model.params} | {f.name for f in model.fields}
    pending = list(model.forward.body) if model.forward is not None else []
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, ast.If):
            pending.extend(s for branch in stmt.branches for s in branch.body)
        elif isinstance(stmt, ast.For):
            pending.extend(stmt.body)
            names.update(name for name, _ in stmt.target.names())
    return frozenset(names)


def _check_fields(stmt: config.ConfigBlock, block: str, fields: FieldChecker) -> None:
    table, allows_unknown = config.BLOCK_TABLES[type(stmt)]
    fields.check_block(stmt.fields, table, block, allow_unknown=allows_unknown)


def _check_model_ref(ref: ast.Name, role: str, model_names: set[str], fields: FieldChecker) -> bool:
    if ref.id in model_names:
        return True
    hint = did_you_mean(ref.id, model_names) or "define it with 'model NAME:'"
    fields.error("S012", f"undefined {role} model '{ref.id}'", ref.span, hint=hint)
    return False


def _check_train(
    stmt: ast.Train, models: dict[str, ast.Model], fields: FieldChecker, standalone: dict[str, Span]
) -> None:
    if _check_model_ref(stmt.model, "trained", set(models), fields):
        standalone.setdefault(stmt.model.id, stmt.model.span)
        fields.diagnostics.extend(feeding.check_output(models[stmt.model.id], stmt))
    fields.dataset_ref(stmt.dataset, "on")
    _check_fields(stmt, "train", fields)


def _check_gan(
    stmt: ast.TrainGan,
    models: dict[str, ast.Model],
    fields: FieldChecker,
    standalone: dict[str, Span],
) -> None:
    for ref, role in ((stmt.generator, "generator"), (stmt.discriminator, "discriminator")):
        if _check_model_ref(ref, role, set(models), fields):
            standalone.setdefault(ref.id, ref.span)
            if several_inputs(models[ref.id]) or several_outputs(models[ref.id]):
                fields.diagnostics.append(not_yet("GAN training", ref.id, ref.span))
    fields.dataset_ref(stmt.dataset, "on")
    _check_fields(stmt, "train_gan", fields)
    for item in stmt.fields:
        if item.name in ("generator_loss", "discriminator_loss"):
            name = config.option_name(item.value)
            loss = config.canonical_loss(name)
            if loss is not None and loss not in config.GAN_LOSSES:
                fields.error(
                    "S013",
                    f"{item.name} must be bce, bce_with_logits or mse, got '{name}'",
                    item.value.span,
                )


def _check_recursion(result: SemanticResult) -> None:
    # iterative depth-first search: a program may nest thousands of blocks
    state: dict[str, int] = {}  # 1 visiting, 2 done
    for root in result.calls:
        if root in state:
            continue
        state[root] = 1
        path = [root]
        todo = [iter(result.calls.get(root, []))]
        while todo:
            step = next(todo[-1], None)
            if step is None:
                state[path.pop()] = 2
                todo.pop()
                continue
            callee, span = step
            if state.get(callee) == 1:
                cycle = path[path.index(callee) :] + [callee]
                result.diagnostics.append(
                    diag(
                        "S009",
                        "models use each other recursively: " + " -> ".join(cycle),
                        span,
                        hint="a model cannot contain itself; break the cycle",
                    )
                )
                result.broken_models.update(cycle)
            elif callee not in state and callee in result.calls:
                state[callee] = 1
                path.append(callee)
                todo.append(iter(result.calls.get(callee, [])))
    _check_nesting(result)
    # a model calling a broken one cannot be type checked either
    changed = True
    while changed:
        changed = False
        for name, calls in result.calls.items():
            if name not in result.broken_models and any(
                c in result.broken_models for c, _ in calls
            ):
                result.broken_models.add(name)
                changed = True


# Blocks inside blocks, counted from a model to its deepest block (docs/limits.md). Real
# models nest a few levels; lowering, code generation and the tools walk the levels.
MAX_BLOCK_NESTING = 32


def _check_nesting(result: SemanticResult) -> None:
    """S113 at the call where a chain of block calls passes ``MAX_BLOCK_NESTING`` levels.

    Depths are computed bottom-up without recursion.
    """
    depth: dict[str, int] = {}
    for root in result.calls:
        todo = [root]
        while todo:
            name = todo[-1]
            if name in depth:
                todo.pop()
                continue
            callees = [c for c, _ in result.calls.get(name, []) if c in result.calls]
            # cycles are broken models by now (S009): they count as leaves here
            pending = [c for c in callees if c not in depth and c not in result.broken_models]
            if pending:
                todo.extend(pending)
                continue
            depth[name] = 1 + max((depth.get(c, 0) for c in callees), default=0)
            todo.pop()
    for name, calls in result.calls.items():
        if depth.get(name, 0) <= MAX_BLOCK_NESTING:
            continue
        result.broken_models.add(name)
        deepest, span = max(calls, key=lambda call: depth.get(call[0], 0))
        if depth.get(deepest, 0) <= MAX_BLOCK_NESTING:  # report where the limit is passed
            result.diagnostics.append(
                diag(
                    "S113",
                    f"blocks nested {depth[name]} levels deep here, over the limit of "
                    f"{MAX_BLOCK_NESTING}",
                    span,
                    hint="flatten the nesting: call the inner blocks one after another",
                )
            )

"""Configuration checked as torch checks it (issue 11 item 3, RELIABILITY K-DIFF).

A property test draws argument sets for every optimizer and scheduler of the catalog and
requires ``check``'s verdict to equal torch's: building the object and stepping it once
succeeds exactly when ``check`` accepts, except where ``check`` refuses on purpose
(``DELIBERATE``: values torch runs but that cannot mean anything, each with its reason).
The issue's examples are named regression tests below.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aurane.ops.spec import ArgKind, Param
from aurane.semantics import config
from tests.helpers import errors

torch = pytest.importorskip("torch")

PROGRAM = """\
model Net:
    input_shape = (8,)
    def forward(x):
        return dense(x, 1)
dataset d:
    from aurane.data.SyntheticRegression
    size = 4
train Net on d:
    epochs = 2
    loss = mse
    {line}
"""

FLOATS = [-0.5, 0.0, 1e-8, 0.01, 0.5, 0.9, 1.0, 2.0]
INTS = [-1, 0, 1, 2, 3, 5]


def literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "(" + ", ".join(literal(v) for v in value) + ")"
    if isinstance(value, str):
        return f'"{value}"'
    return "none" if value is None else repr(value)


def values(param: Param) -> st.SearchStrategy[Any]:
    if param.choices is not None:
        return st.sampled_from([*param.choices, "bogus"])
    if param.name == "betas":
        return st.tuples(st.sampled_from(FLOATS), st.sampled_from(FLOATS))
    match param.kind:
        case ArgKind.FLOAT:
            return st.sampled_from(FLOATS)
        case ArgKind.INT:
            return st.sampled_from(INTS)
        case ArgKind.OPTIONAL_INT:
            return st.sampled_from([None, *INTS])
        case ArgKind.BOOL:
            return st.booleans()
    raise AssertionError(f"no strategy for {param}")


def arguments(spec: config.OptionSpec) -> st.SearchStrategy[dict[str, Any]]:
    """A subset of the entry's arguments (required ones usually present), drawn values."""
    return st.fixed_dictionaries(
        {},
        optional={p.name: values(p) for p in spec.params},
    )


def check_accepts(field: str, name: str, kwargs: dict[str, Any]) -> bool:
    call = f"{name}(" + ", ".join(f"{k}={literal(v)}" for k, v in kwargs.items()) + ")"
    return not errors(PROGRAM.format(line=f"{field} = {call}"))


def parameter() -> Any:
    return torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))


def step(optimizer: Any, weight: Any) -> None:
    optimizer.zero_grad()
    (weight**2).sum().backward()
    optimizer.step()


def torch_optimizer(spec: config.OptionSpec, kwargs: dict[str, Any]) -> None:
    weight = parameter()
    given = {k: v for k, v in kwargs.items() if v is not None}  # lr=None: torch's default
    step(getattr(torch.optim, spec.torch_name)([weight], **given), weight)


def torch_scheduler(spec: config.OptionSpec, kwargs: dict[str, Any]) -> None:
    from aurane.runtime.schedule import warmup_cosine

    weight = parameter()
    optimizer = torch.optim.SGD([weight], lr=0.1)
    given = dict(kwargs)
    if spec.name == "cosine_annealing" and given.get("T_max") is None:
        given["T_max"] = 2  # SPEC: the job's epochs
    if spec.name == "warmup_cosine":
        if given.get("max_steps") is None:
            given["max_steps"] = 10  # the run's optimizer steps (rt.Budget)
        scheduler = warmup_cosine(optimizer, **given)
    else:
        scheduler = getattr(torch.optim.lr_scheduler, spec.torch_name)(optimizer, **given)
    step(optimizer, weight)
    if spec.name == "reduce_lr_on_plateau":
        scheduler.step(1.0)  # type: ignore[arg-type]  # ReduceLROnPlateau takes the metric
    else:
        scheduler.step()
    if not all(math.isfinite(g["lr"]) for g in optimizer.param_groups):
        raise ValueError("non-finite learning rate")


def torch_accepts(kind: str, spec: config.OptionSpec, kwargs: dict[str, Any]) -> bool:
    required = [p.name for p in spec.params if p.required]
    if any(name not in kwargs for name in required):
        return False  # a TypeError in Python; the generated code would not even call it
    try:
        (torch_optimizer if kind == "optimizer" else torch_scheduler)(spec, kwargs)
    except (ValueError, TypeError, ZeroDivisionError, RuntimeError):
        return False
    return True


def deliberate(name: str, kwargs: dict[str, Any]) -> str | None:
    """Why ``check`` refuses arguments torch runs, or None. Each is a value with no use."""
    v = kwargs.get
    if v("eps") == 0.0:
        return "eps = 0 divides by zero where a gradient is zero (NaN parameters)"
    if name == "sgd" and (v("dampening") or 0) < 0:
        return "negative dampening amplifies instead of damping"
    if name == "rmsprop" and (v("alpha") or 0) >= 1:
        return "alpha >= 1: the squared-gradient average never moves from 0"
    if name == "adadelta" and v("rho") == 1.0:
        return "rho = 1: the accumulators never move from 0"
    gamma, factor = v("gamma"), v("factor")
    if name in ("step_lr", "exponential_lr") and gamma is not None and gamma <= 0:
        return "gamma <= 0 sets a zero or negative learning rate"
    if name == "step_lr" and (v("step_size") or 1) < 0:
        return "a negative step_size has no meaning"
    if name == "cosine_annealing" and ((v("T_max") or 1) < 0 or (v("eta_min") or 0) < 0):
        return "a negative period or floor has no meaning"
    if name == "reduce_lr_on_plateau" and (
        (factor is not None and factor <= 0)
        or any((v(k) or 0) < 0 for k in ("patience", "threshold", "cooldown", "min_lr"))
    ):
        return "a factor <= 0 or a negative patience, threshold, cooldown or min_lr"
    if name == "warmup_cosine" and (v("min_lr") or 0) < 0:
        return "a negative floor has no meaning"
    return None


def agree(kind: str, spec: config.OptionSpec, kwargs: dict[str, Any]) -> None:
    ours = check_accepts(kind, spec.name, kwargs)
    theirs = torch_accepts(kind, spec, kwargs)
    if ours:
        assert theirs, f"check accepts {spec.name}({kwargs}) but torch refuses it"
    elif theirs:
        assert deliberate(spec.name, kwargs), f"check refuses {spec.name}({kwargs}); torch runs it"


SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(data=st.data())
def test_optimizers_as_torch_checks_them(data: st.DataObject) -> None:
    spec = data.draw(st.sampled_from(config.OPTIMIZERS), label="optimizer")
    agree("optimizer", spec, data.draw(arguments(spec), label="arguments"))


@SETTINGS
@given(data=st.data())
def test_schedulers_as_torch_checks_them(data: st.DataObject) -> None:
    spec = data.draw(st.sampled_from(config.SCHEDULERS), label="scheduler")
    agree("scheduler", spec, data.draw(arguments(spec), label="arguments"))


# ------------------------------------------------------------------ the examples

OPTIMIZER = {spec.name: spec for spec in config.OPTIMIZERS}
SCHEDULER = {spec.name: spec for spec in config.SCHEDULERS}


def only(line: str) -> tuple[str, int, int]:
    found = errors(PROGRAM.format(line=line))
    assert len(found) == 1, found
    d = found[0]
    assert d.span is not None and d.span.line == 11
    return d.code, d.span.column, d.span.end_column


def test_sgd_nesterov_without_momentum() -> None:
    assert only("optimizer = sgd(lr=0.1, nesterov=true)") == ("S081", 29, 42)
    assert not torch_accepts("optimizer", OPTIMIZER["sgd"], {"lr": 0.1, "nesterov": True})


def test_sgd_nesterov_with_dampening() -> None:
    line = "optimizer = sgd(lr=0.1, momentum=0.9, dampening=0.5, nesterov=true)"
    assert only(line)[0] == "S081"
    assert check_accepts("optimizer", "sgd", {"momentum": 0.9, "nesterov": True})


def test_bare_step_lr_needs_step_size() -> None:
    assert only("scheduler = step_lr")[0] == "S005"
    assert not torch_accepts("scheduler", SCHEDULER["step_lr"], {})


def test_cosine_annealing_t_max_zero() -> None:
    assert only("scheduler = cosine_annealing(T_max=0)")[0] == "S004"
    assert not torch_accepts("scheduler", SCHEDULER["cosine_annealing"], {"T_max": 0})


def test_warmup_longer_than_max_steps() -> None:
    assert only("scheduler = warmup_cosine(warmup_steps=4, max_steps=2)")[0] == "S081"
    spec = SCHEDULER["warmup_cosine"]
    assert not torch_accepts("scheduler", spec, {"warmup_steps": 4, "max_steps": 2})
    assert torch_accepts("scheduler", spec, {"warmup_steps": 2, "max_steps": 2})

"""Loss options checked as torch checks them (issue 11 item 3, the part beyond optimizers).

Argument sets for every loss of the catalog are drawn (hypothesis) and ``check``'s verdict
is compared with torch's: building the loss and computing it, with backward, on outputs and
targets of the program's shapes succeeds exactly when ``check`` accepts, except for the
refusals listed in ``deliberate`` (values torch runs that cannot mean anything). Layer
options are covered by the differential fuzzer (``test_differential.py``): every drawn
operation call is compiled and, accepted or refused, compared with torch.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aurane.semantics import config
from tests.helpers import errors
from tests.semantics.test_config_torch import literal

torch = pytest.importorskip("torch")

CLASSES = 3
CLASSIFY = """\
model Net:
    input_shape = (8,)
    def forward(x):
        return dense(x, {classes}){suffix}
dataset d:
    from aurane.data.SyntheticImages
    size = 4
    image_size = (8,)
    num_classes = {classes}
train Net on d:
    epochs = 1
    loss = {loss}
"""
REGRESS = """\
model Net:
    input_shape = (8,)
    def forward(x):
        return dense(x, 1)
dataset d:
    from aurane.data.SyntheticRegression
    size = 4
train Net on d:
    epochs = 1
    loss = {loss}
"""
FAMILY = {
    "cross_entropy": "classify",
    "cross_entropy_with_label_smoothing": "classify",
    "nll": "classify",
    "mse": "regress",
    "mae": "regress",
    "huber": "regress",
}
VALUES: dict[str, list[Any]] = {
    "weight": [(1.0, 2.0, 3.0), (1.0, 2.0), (0.0, 1.0, 1.0), (-1.0, 1.0, 1.0), (1, 1, 2)],
    "ignore_index": [-100, -1, 0, 2, 7],
    "label_smoothing": [-0.1, 0.0, 0.2, 0.99, 1.0, 1.5],
    "smoothing": [-0.1, 0.0, 0.2, 1.0],
    "delta": [-1.0, 0.0, 0.5, 2.0],
}
LOSSES = [spec for spec in config.LOSSES if spec.name in FAMILY]


def program(spec: config.OptionSpec, kwargs: dict[str, Any]) -> str:
    call = spec.name
    if kwargs:
        call += "(" + ", ".join(f"{k}={literal(v)}" for k, v in kwargs.items()) + ")"
    if FAMILY[spec.name] == "regress":
        return REGRESS.format(loss=call)
    suffix = ".log_softmax" if spec.name == "nll" else ""
    return CLASSIFY.format(classes=CLASSES, suffix=suffix, loss=call)


def torch_accepts(spec: config.OptionSpec, kwargs: dict[str, Any]) -> bool:
    given = dict(kwargs)
    if "weight" in given:
        given["weight"] = torch.tensor(given["weight"], dtype=torch.float32)
    if spec.name == "cross_entropy_with_label_smoothing":
        given["label_smoothing"] = given.pop("smoothing", 0.1)
    torch.manual_seed(0)
    try:
        loss = getattr(torch.nn, spec.torch_name)(**given)
        if FAMILY[spec.name] == "regress":
            out = torch.randn(4, 1, requires_grad=True)
            value = loss(out, torch.randn(4, 1))
        else:
            out = torch.randn(4, CLASSES, requires_grad=True)
            logits = out.log_softmax(-1) if spec.name == "nll" else out
            value = loss(logits, torch.tensor([0, 1, 2, 1]))
        value.backward()
        if not torch.isfinite(value):
            raise ValueError("non-finite loss")
    except (ValueError, TypeError, RuntimeError, IndexError):
        return False
    return True


def deliberate(name: str, kwargs: dict[str, Any]) -> str | None:
    """Why ``check`` refuses loss arguments torch runs, or None."""
    smoothing = kwargs.get("label_smoothing", kwargs.get("smoothing"))
    if smoothing == 1.0:
        return "label smoothing 1 ignores the labels entirely (uniform targets)"
    if smoothing is not None and smoothing < 0:
        return "negative label smoothing has no meaning (torch 2.x does not check the low end)"
    return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_losses_as_torch_checks_them(data: st.DataObject) -> None:
    spec = data.draw(st.sampled_from(LOSSES), label="loss")
    kwargs = data.draw(
        st.fixed_dictionaries(
            {}, optional={p.name: st.sampled_from(VALUES[p.name]) for p in spec.params}
        ),
        label="arguments",
    )
    ours = not errors(program(spec, kwargs))
    theirs = torch_accepts(spec, kwargs)
    if ours:
        assert theirs, f"check accepts {spec.name}({kwargs}) but torch refuses it"
    elif theirs:
        found = [d.message for d in errors(program(spec, kwargs))]
        assert deliberate(spec.name, kwargs), f"check refuses {spec.name}({kwargs}): {found}"


@pytest.mark.parametrize("spec", LOSSES, ids=lambda s: s.name)
def test_every_loss_family_program_is_accepted_bare(spec: config.OptionSpec) -> None:
    assert not errors(program(spec, {})), [d.message for d in errors(program(spec, {}))]
    assert torch_accepts(spec, {})

"""``SPEC``: the model to import, as ``module:callable`` or ``module:callable(args...)``.

The callable is called with the literal arguments given (numbers, strings, booleans,
``None``, tuples, lists, dicts: ``ast.literal_eval``; nothing else is evaluated), e.g.
``torchvision.models:resnet50``, ``torchvision.models:vit_b_16(image_size=64)``. A Hugging
Face model class given keyword arguments only is built from its own configuration class
(``transformers:BertModel(hidden_size=64, num_hidden_layers=2)`` is
``BertModel(BertConfig(hidden_size=64, num_hidden_layers=2))``): from a config, never from
downloaded weights.

While the model is built, the arguments of every module's constructor are recorded
(``sys.setprofile`` sees each ``__init__`` call), so that block parameters can take the
names the model's author gave them (``planes``, ``expand_ratio``).
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
import types
from collections.abc import Callable
from typing import Any

from aurane.records import field, record


class SpecError(Exception):
    """A SPEC that is not ``module:callable[(literal args)]``, or names nothing callable."""


@record(frozen=True)
class ModelSpec:
    module: str
    attribute: str  # dotted within the module
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()
    text: str = ""


def parse_spec(text: str) -> ModelSpec:
    module, sep, rest = text.partition(":")
    module, rest = module.strip(), rest.strip()
    if not sep or not module or not rest:
        raise SpecError(f"expected module:callable, e.g. torchvision.models:resnet50, got {text!r}")
    if not all(part.isidentifier() for part in module.split(".")):
        raise SpecError(f"{module!r} is not a module name")
    try:
        tree = ast.parse(rest, mode="eval").body
    except SyntaxError:
        raise SpecError(
            f"{rest!r} is not a callable name or a call with literal arguments"
        ) from None
    args: tuple[Any, ...] = ()
    kwargs: list[tuple[str, Any]] = []
    if isinstance(tree, ast.Call):
        try:
            args = tuple(ast.literal_eval(a) for a in tree.args)
            for keyword in tree.keywords:
                if keyword.arg is None:
                    raise SpecError("**arguments are not literal")
                kwargs.append((keyword.arg, ast.literal_eval(keyword.value)))
        except ValueError:
            raise SpecError(
                f"the arguments of {rest!r} must be literals (numbers, strings, tuples, ...)"
            ) from None
        tree = tree.func
    parts: list[str] = []
    while isinstance(tree, ast.Attribute):
        parts.append(tree.attr)
        tree = tree.value
    if not isinstance(tree, ast.Name):
        raise SpecError(f"{rest!r} does not name a callable")
    parts.append(tree.id)
    return ModelSpec(module, ".".join(reversed(parts)), args, tuple(kwargs), text)


def resolve(spec: ModelSpec) -> Callable[..., Any]:
    """The callable SPEC names; modules of the current folder import as ``python -m`` would."""
    here = os.getcwd()
    added = here not in sys.path
    if added:
        sys.path.insert(0, here)
    try:
        target: Any = importlib.import_module(spec.module)
    except ImportError as error:
        raise SpecError(f"cannot import {spec.module}: {error}") from None
    finally:
        if added:
            sys.path.remove(here)
    for part in spec.attribute.split("."):
        if not hasattr(target, part):
            raise SpecError(f"{spec.module} has no {spec.attribute}")
        target = getattr(target, part)
    if not callable(target):
        raise SpecError(f"{spec.module}:{spec.attribute} is not callable")
    return target  # type: ignore[no-any-return]


def _simple(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    return isinstance(value, tuple | list) and all(
        isinstance(v, bool | int | float | str) for v in value
    )


@record
class Recorder:
    """Constructor arguments by module identity (the modules are kept alive meanwhile)."""

    arguments: dict[int, dict[str, Any]] = field(default_factory=dict)
    keep: list[Any] = field(default_factory=list)

    def hook(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code.co_name != "__init__":
            return
        code = frame.f_code
        if code.co_argcount == 0:
            return
        names = code.co_varnames
        me = frame.f_locals.get(names[0])
        import torch

        if not isinstance(me, torch.nn.Module) or id(me) in self.arguments:
            return
        found: dict[str, Any] = {}
        for name in names[1 : code.co_argcount + code.co_kwonlyargcount]:
            value = frame.f_locals.get(name)
            if _simple(value):
                found[name] = value
        extra = frame.f_locals.get("kwargs")
        if isinstance(extra, dict):
            found.update({k: v for k, v in extra.items() if isinstance(k, str) and _simple(v)})
        self.arguments[id(me)] = found
        self.keep.append(me)


def call_recording(target: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Recorder]:
    """``target(*args, **kwargs)`` with every module constructor's arguments recorded."""
    recorder = Recorder()
    previous = sys.getprofile()
    sys.setprofile(recorder.hook)
    try:
        result = target(*args, **kwargs)
    finally:
        sys.setprofile(previous)
    return result, recorder


def build(spec: ModelSpec) -> tuple[Any, Recorder]:
    """The module SPEC names, built, and the constructor arguments seen meanwhile."""
    target = resolve(spec)
    kwargs = dict(spec.kwargs)
    config_class = getattr(target, "config_class", None)
    if isinstance(target, type) and isinstance(config_class, type) and not spec.args:
        config = config_class(**kwargs)
        return call_recording(target, config)
    return call_recording(target, *spec.args, **kwargs)

"""The first batch of a dataset the compiler could not know, checked against the model.

``aurane check`` compares a dataset's samples with the model's input and the loss's targets
wherever the dataset is known statically (``aurane.semantics.data_contracts``). For the
rest (a module the program imports with ``use``, an injected loader, a folder of images of
unknown sizes) the generated training function builds a ``BatchCheck`` and calls it on each
batch before the model sees it; it looks at the first batch of each dataset only. A batch
that does not fit raises ``DataMismatch``, one line naming the dataset, the model and both
sides, which ``main`` prints without a traceback (exit status 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.utils.data import Dataset

_INTEGER = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


class DataMismatch(ValueError):
    """A batch that does not fit the model or the loss; ``str()`` is the one-line report."""


def _shape(shape: Sequence[int | None]) -> str:
    shown = ["?" if size is None else str(size) for size in shape]
    return "(" + ", ".join(shown) + ("," if len(shape) == 1 else "") + ")"


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


class BatchCheck:
    """What model ``model`` takes and what its loss needs, checked once per dataset.

    ``shape`` and ``dtype`` are the model's per-sample input (batch excluded; None: any
    size, or any dtype where the job casts the batch itself); ``task`` is
    the loss's ("class", "binary", "regression", or None to skip targets); ``outputs`` the
    model's per-sample output shape, from which class losses read the number of classes.
    """

    def __init__(
        self,
        model: str,
        shape: Sequence[int | None],
        dtype: str | None,
        *,
        task: str | None = None,
        outputs: Sequence[int | None] | None = None,
        ignore_index: int = -100,
    ) -> None:
        self.model, self.shape, self.dtype = model, tuple(shape), dtype
        self.task, self.ignore_index = task, ignore_index
        self.outputs = tuple(outputs) if outputs is not None else None
        self.checked: set[str] = set()

    def __call__(self, what: str, inputs: torch.Tensor, targets: torch.Tensor | None) -> None:
        """Check the first batch of ``what`` (e.g. "training data 'images'")."""
        if what in self.checked:
            return
        self.checked.add(what)
        self.check_inputs(what, inputs)
        # symbolic output sizes (None) leave the targets to the loss
        outputs = self.outputs
        if targets is not None and self.task is not None and outputs and None not in outputs:
            self.check_targets(what, targets)

    def _wanted(self) -> str:
        return _shape(self.shape) + (f" {self.dtype}" if self.dtype else "")

    def check_inputs(self, what: str, inputs: object) -> None:
        if not isinstance(inputs, torch.Tensor):
            raise DataMismatch(
                f"{what} gives {type(inputs).__name__} inputs, but model '{self.model}' takes "
                f"tensors of shape {self._wanted()}"
            )
        sample = tuple(inputs.shape[1:])
        fits = len(sample) == len(self.shape) and all(
            want is None or want == size for want, size in zip(self.shape, sample, strict=True)
        )
        dtype = _dtype(inputs.dtype)
        if self.dtype is not None:
            integer = inputs.dtype in _INTEGER
            fits = fits and ((integer and self.dtype.startswith("int")) or dtype == self.dtype)
        if not fits:
            raise DataMismatch(
                f"{what} gives inputs of shape {_shape(sample)} {dtype}, but model "
                f"'{self.model}' takes {self._wanted()}"
            )

    def check_targets(self, what: str, targets: torch.Tensor) -> None:
        outputs = tuple(int(size or 0) for size in self.outputs or ())
        target = tuple(targets.shape[1:])
        if self.task == "class":
            if targets.is_floating_point() or targets.dtype == torch.bool:
                raise DataMismatch(
                    f"{what} gives {_dtype(targets.dtype)} targets, but the loss of model "
                    f"'{self.model}' needs integer class labels"
                )
            if len(outputs) != len(target) + 1 or target not in (outputs[:-1], outputs[1:]):
                raise DataMismatch(
                    f"{what} gives targets of shape {_shape(target)}, but model "
                    f"'{self.model}' outputs {_shape(outputs)}: a class loss needs one "
                    "class index per output row"
                )
            classes = outputs[-1] if len(outputs) > 1 and outputs[:-1] == target else outputs[0]
            outside = self._labels_outside(targets, classes)
            if outside is not None:
                low, high = outside
                raise DataMismatch(
                    f"{what} gives labels from {low} to {high}, but model '{self.model}' "
                    f"outputs {classes} class scores (labels 0 to {classes - 1})"
                )
            return
        single = outputs == (1,) and target == ()
        if target != outputs and not (self.task == "binary" and single):
            raise DataMismatch(
                f"{what} gives targets of shape {_shape(target)}, but model '{self.model}' "
                f"outputs {_shape(outputs)}: a {self.task} loss needs the same shape "
                "(shapes are never broadcast)"
            )

    def _labels_outside(self, targets: torch.Tensor, classes: int) -> tuple[int, int] | None:
        """(lowest, highest) label kept for the loss when one lies outside 0..classes-1."""
        if not targets.numel():
            return None
        # One reduction over every target first: when they all fit, no mask is built. An
        # ignored target (ignore_index, usually -100) lies outside, so then the kept ones
        # are judged alone.
        low, high = _range(targets)
        if low >= 0 and high < classes:
            return None
        labels = targets[targets != self.ignore_index]
        if not labels.numel():
            return None
        low, high = _range(labels)
        return None if low >= 0 and high < classes else (low, high)


def _range(labels: torch.Tensor) -> tuple[int, int]:
    """The lowest and highest of non-empty integer labels, in one reduction."""
    low, high = torch.aminmax(labels)
    return int(low), int(high)


def dataset_class(source: object, name: str) -> type:
    """``source`` itself when it is a dataset class; a one-line ``DataMismatch`` otherwise.

    A dataset's ``from`` line may name a class of a module the program imports with ``use``
    (docs/security.md). The compiler cannot know what that object is without importing the
    module, which compiling never does, so the loader factory calls this before calling the
    object: only a subclass of ``torch.utils.data.Dataset`` or ``IterableDataset`` is ever
    called, never a function such as ``torch.load`` or ``os.system``.
    """
    # type(source), not isinstance(): an object cannot fake its own type, and a real class
    # is checked against Dataset by its MRO (IterableDataset is a Dataset subclass)
    is_class = isinstance(source, type) and issubclass(type(source), type)
    if is_class and isinstance(source, type) and issubclass(source, Dataset):
        return source
    if is_class:
        what = "a class that is not a torch dataset"
    else:
        what = f"a {type(source).__name__}, not a class"
    raise DataMismatch(
        f"dataset source {name} is {what}: a 'from' line must name a dataset class "
        "(a subclass of torch.utils.data.Dataset or IterableDataset), so it is not called"
    )


Key = str | int


class Feed:
    """A batch of samples with several fields, as the model's inputs and the targets.

    ``inputs`` maps each model input, in the forward's order, to the field that feeds it:
    a dict sample's key (``"input_ids"``), a tuple sample's position, or None (the input's
    default: the model builds it). A list of names instead leaves the fields to the batch:
    each input the field of its name (dicts) or its position (tuples and lists), an input
    in ``optional`` none when the batch has no such field, and ``fields`` names the field
    of some inputs. ``target``: the target's field;
    None: the field no input takes (dicts), the last one (tuples). A missing field raises
    ``DataMismatch`` naming the data, the input and the fields there are.
    """

    def __init__(
        self,
        inputs: dict[str, Key | None] | Sequence[str],
        target: Key | None = None,
        optional: Sequence[str] = (),
        fields: dict[str, Key] | None = None,
    ) -> None:
        self.by_field = dict(inputs) if isinstance(inputs, dict) else None
        self.names = list(inputs)
        self.target = target
        self.optional = frozenset(optional)
        self.fields = dict(fields or {})  # with a list: the inputs whose field is named

    def keys(self, batch: Any, what: str) -> tuple[list[Key | None], Key]:
        """The field of each input and of the target in ``batch``."""
        keyed = isinstance(batch, dict)
        fields: list[Key] = list(batch) if keyed else list(range(len(batch)))
        keys: list[Key | None]
        if self.by_field is not None:
            keys = list(self.by_field.values())
        elif keyed:
            keys = [n if n in fields or n not in self.optional else None for n in self.names]
        else:
            last = len(fields) - 1  # the target's position
            keys = [
                i if i < last or n not in self.optional else None for i, n in enumerate(self.names)
            ]
        if self.by_field is None:
            keys = [self.fields.get(n, key) for n, key in zip(self.names, keys, strict=True)]
        shown = ", ".join(repr(f) for f in fields)
        for name, key in zip(self.names, keys, strict=True):
            if key is not None and key not in fields:
                raise DataMismatch(
                    f"{what} has no field {key!r} for the model's input {name!r} "
                    f"(its samples have {shown})"
                )
        target = self.target
        if target is None:
            left = [key for key in fields if key not in keys]
            target = left[-1] if not keyed and left else left[0] if len(left) == 1 else None
            if target is None:
                raise DataMismatch(
                    f"{what}: cannot tell the target among the fields that feed no input "
                    f"({', '.join(repr(f) for f in left)}): name it with target = FIELD"
                )
        elif target not in fields:
            raise DataMismatch(f"{what} has no field {target!r} for the target ({shown})")
        return keys, target

    def __call__(
        self, batch: Any, device: torch.device, what: str
    ) -> tuple[list[torch.Tensor | None], torch.Tensor]:
        keys, target = self.keys(batch, what)

        def read(key: Key) -> torch.Tensor:
            value = batch[key]
            if not isinstance(value, torch.Tensor):
                value = torch.as_tensor(value)
            return value.to(device, non_blocking=True)

        return [None if key is None else read(key) for key in keys], read(target)

"""``aurane.records`` behaves as ``dataclasses`` does for every option the compiler uses.

Each test declares the same class twice, once with ``dataclasses.dataclass`` and once with
``records.record``, and requires the same observable behaviour.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from aurane import records
from aurane.records import field, record

OPTIONS = [
    {},
    {"frozen": True},
    {"frozen": True, "slots": True},
    {"slots": True},
    {"frozen": True, "order": True},
    {"frozen": True, "slots": True, "repr": False, "eq": False},
]


def _point_classes(options: dict[str, Any]) -> tuple[type, type]:
    def declare(make: Any, make_field: Any) -> type:
        namespace = {
            "__annotations__": {"x": "int", "label": "str", "tags": "list[str]"},
            "__module__": __name__,
            "__qualname__": "Point",
            "label": "p",
            "tags": make_field(default_factory=list),
        }
        return make(**options)(type("Point", (), namespace))  # type: ignore[no-any-return]

    return declare(dataclasses.dataclass, dataclasses.field), declare(record, field)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_a_record_behaves_as_the_same_dataclass(options: dict[str, Any]) -> None:
    classic, ours = _point_classes(options)
    for cls in (classic, ours):
        a, b, c = cls(1), cls(1, "p", []), cls(2, label="q", tags=["t"])
        assert (a.x, a.label, a.tags, b.tags, c.label, c.tags) == (1, "p", [], [], "q", ["t"])
        assert cls(1).tags is not cls(1).tags  # a fresh default per instance
    pairs = [(classic(1), ours(1)), (classic(2, "q", ["t"]), ours(2, "q", ["t"]))]
    for left, right in pairs:
        assert repr(left) == repr(right) or not options.get("repr", True)
        if options.get("eq", True):
            assert (left == copy.copy(left)) and (right == copy.copy(right))
        assert (classic(1) == classic(2)) == (ours(1) == ours(2))
        assert (ours(1).__eq__(3)) is NotImplemented or not options.get("eq", True)
    hashable = options.get("frozen") or not options.get("eq", True)
    assert (classic.__hash__ is None) == (ours.__hash__ is None) == (not hashable)
    if options.get("frozen") and options.get("eq", True):
        assert hash(ours(1, "p", ())) == hash(classic(1, "p", ()))  # type: ignore[arg-type]
    if options.get("order"):
        assert sorted([ours(3), ours(1), ours(2)]) == [ours(1), ours(2), ours(3)]
        assert (ours(1) < ours(2)) and not (ours(2) <= ours(1))
    if options.get("frozen"):
        with pytest.raises(records.FrozenInstanceError):
            ours(1).x = 5
        with pytest.raises(records.FrozenInstanceError):
            del ours(1).x
    else:
        point = ours(1)
        point.x = 5
        assert point.x == 5
    assert ("__slots__" in vars(ours)) == bool(options.get("slots"))
    assert ours.__match_args__ == classic.__match_args__ == ("x", "label", "tags")  # type: ignore[attr-defined]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_records_copy_pickle_and_replace(options: dict[str, Any]) -> None:
    _, ours = _point_classes(options)
    globals()["Point"] = ours  # pickle finds the class by its module and name
    try:
        point = ours(1, "q", ["t"])
        for clone in (copy.copy(point), copy.deepcopy(point), pickle.loads(pickle.dumps(point))):
            assert (clone.x, clone.label, clone.tags) == (1, "q", ["t"])
    finally:
        del globals()["Point"]
    changed = records.replace(point, label="r")
    assert (changed.x, changed.label, point.label) == (1, "r", "q")
    assert [f.name for f in records.fields(point)] == ["x", "label", "tags"]
    assert records.fields(ours) == records.fields(point)
    assert records.is_record(point) and records.is_record(ours) and not records.is_record(3)
    with pytest.raises(TypeError, match="not a record"):
        records.fields(3)


def test_post_init_and_fields_left_out_of_init() -> None:
    @record(frozen=True, slots=True)
    class Text:
        body: str
        lines: tuple[str, ...] = field(init=False, repr=False, compare=False)
        kind: str = field(default="plain", init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "lines", tuple(self.body.split("\n")))

    text = Text("a\nb")
    assert text.lines == ("a", "b") and text.kind == "plain"
    assert repr(text).endswith(".Text(body='a\\nb', kind='plain')")  # the qualified name
    assert Text("a") == Text("a") and hash(Text("a")) == hash(("a", "plain"))
    assert records.replace(text, body="c").lines == ("c",)
    with pytest.raises(ValueError, match="not an __init__ argument"):
        records.replace(text, lines=())
    with pytest.raises(TypeError):
        Text()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Text("a", "b")  # type: ignore[call-arg]


def test_inherited_fields_come_first_and_can_be_redeclared() -> None:
    @record(frozen=True)
    class Base:
        name: str
        size: int = 1

    @record(frozen=True)
    class Child(Base):
        size: int = 2
        extra: bool = False

    assert [f.name for f in records.fields(Child)] == ["name", "size", "extra"]
    assert Child("c") == Child("c", 2, False) and Child("c") != Base("c", 2)
    assert repr(Child("c")).endswith("Child(name='c', size=2, extra=False)")
    with pytest.raises(TypeError, match="frozen and a mutable"):

        @record
        class Mutable(Base):
            other: int = 0


def test_declaration_errors_match_dataclasses() -> None:
    with pytest.raises(ValueError, match="mutable default"):

        @record
        class Bad:
            items: list[int] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="without a default follows"):

        @record
        class Order:
            first: int = 0
            second: str  # type: ignore[misc]

    with pytest.raises(ValueError, match="not both"):
        field(default=1, default_factory=list)


def test_init_is_compiled_after_the_first_instances() -> None:
    @record(frozen=True, slots=True)
    class Lazy:
        value: int
        extra: list[int] = field(default_factory=list)

    assert Lazy.__init__ is records._record_init
    interpreted = [Lazy(n) for n in range(records.COMPILE_AFTER)]
    assert Lazy.__init__ is records._record_init  # the shared, interpreted __init__ so far
    compiled = [Lazy(n) for n in range(records.COMPILE_AFTER)]
    init = Lazy.__init__
    assert init is not records._record_init and init.__qualname__.endswith("Lazy.__init__")
    assert interpreted == compiled and Lazy(4, [1]).extra == [1] and Lazy.__init__ is init


@pytest.mark.parametrize("compiled", [False, True])
def test_both_inits_bind_arguments_as_python_does(compiled: bool) -> None:
    @record(frozen=True)
    class Pair:
        left: int
        right: str = "r"

    if compiled:
        for _ in range(records.COMPILE_AFTER + 1):
            Pair(0)
        assert Pair.__init__ is not records._record_init
    assert Pair(1) == Pair(left=1) == Pair(1, "r") == Pair(right="r", left=1)
    for args, kwargs, message in [
        ((), {}, "missing"),
        ((1, "a", 3), {}, "positional arguments"),
        ((1,), {"left": 2}, "multiple values"),
        ((1,), {"other": 2}, "unexpected keyword"),
    ]:
        with pytest.raises(TypeError, match=message):
            Pair(*args, **kwargs)

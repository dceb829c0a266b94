"""Records: the compiler's value classes (AST, IR, catalog entries, diagnostics, reports).

A record is declared and behaves like a dataclass: ``@record(frozen=True, slots=True)`` over
annotated fields, ``field(default_factory=list)``, a field-wise ``__init__`` (then
``__post_init__``), ``==``, ``hash`` (frozen and compared), ``repr`` and ordering over the
fields, :class:`FrozenInstanceError` on assignment to a frozen record, and the module
functions :func:`fields`, :func:`replace` and :func:`is_record`. The decorator takes the
same options, with the same defaults, as ``dataclasses.dataclass`` (``frozen``, ``eq``,
``repr``, ``order``, ``slots``), and type checkers read it as one (PEP 681).

Why not ``dataclasses`` itself: the standard decorator compiles every class's methods from
source text when the module is imported, about 1 ms a class, and the module imports
``inspect``. That was 90 ms of the 150 ms that ``aurane check`` spent importing the compiler
(issue 14). Here the shared methods are ordinary functions written once; only ``__init__``
is compiled per class, once the class has built ``COMPILE_AFTER`` instances (one shared
interpreted ``__init__`` builds the first ones), so a short command compiles nothing and a
long one runs at compiled speed.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_options: object) -> Callable[[Any], Any]:
        return lambda decorator: decorator


__all__ = ["MISSING", "Field", "FrozenInstanceError", "field", "fields", "record", "replace"]

_T = TypeVar("_T")
_C = TypeVar("_C", bound=type)


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """An assignment to (or deletion of) a field of a frozen record."""


class Field:
    """One field of a record: its name, default or default factory, and whether it is an
    ``__init__`` argument, shown in ``repr`` and compared by ``==``/``hash``/ordering."""

    __slots__ = ("name", "default", "default_factory", "init", "repr", "compare")

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        init: bool = True,
        repr: bool = True,  # noqa: A002 (the dataclasses name)
        compare: bool = True,
    ) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, init={self.init})"


@overload
def field(*, default: _T, init: bool = True, repr: bool = True, compare: bool = True) -> _T: ...
@overload
def field(
    *,
    default_factory: Callable[[], _T],
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
) -> _T: ...
@overload
def field(*, init: bool = True, repr: bool = True, compare: bool = True) -> Any: ...
def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,  # noqa: A002
    compare: bool = True,
) -> Any:
    """A field's options, as ``dataclasses.field`` takes them."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("a field takes a default or a default_factory, not both")
    return Field(default, default_factory, init, repr, compare)


# -- the shared methods ----------------------------------------------------------------------


def _record_eq(self: Any, other: object) -> Any:
    cls: Any = self.__class__
    values: Callable[[object], tuple[Any, ...]] = cls.__record_values__
    if other.__class__ is cls:
        return values(self) == values(other)
    return NotImplemented


def _record_hash(self: Any) -> int:
    return hash(self.__class__.__record_values__(self))


def _record_repr(self: Any) -> str:
    cls = self.__class__
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in cls.__record_shown__)
    return f"{cls.__qualname__}({shown})"


def _order(compare: Callable[[tuple[Any, ...], tuple[Any, ...]], bool]) -> Callable[..., Any]:
    def method(self: Any, other: object) -> Any:
        cls: Any = self.__class__
        values: Callable[[object], tuple[Any, ...]] = cls.__record_values__
        if other.__class__ is cls:
            return compare(values(self), values(other))
        return NotImplemented

    return method


_ORDER = {
    "__lt__": _order(lambda a, b: a < b),
    "__le__": _order(lambda a, b: a <= b),
    "__gt__": _order(lambda a, b: a > b),
    "__ge__": _order(lambda a, b: a >= b),
}


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _frozen_getstate(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in self.__class__.__record_fields__)


def _frozen_setstate(self: Any, state: tuple[Any, ...]) -> None:
    # pickle and copy restore slots through setattr, which a frozen record refuses
    for name, value in zip(self.__class__.__record_fields__, state, strict=True):
        object.__setattr__(self, name, value)


# A record's first instances are built by one shared, interpreted __init__; the class
# compiles its own (what dataclasses compile for every class at import) once it has made this
# many, so a short command compiles nothing and a long one runs at compiled speed.
COMPILE_AFTER = 24


def _record_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """``__init__`` of every record until its class compiles its own (``COMPILE_AFTER``)."""
    cls = type(self)
    owner = cls if cls.__dict__.get("__init__") is _record_init else _init_owner(cls)
    made = owner.__dict__.get("__record_made__", 0) + 1
    if made > COMPILE_AFTER:
        init = _compile_init(owner)
        setattr(owner, "__init__", init)  # noqa: B010 (the class, not this instance)
        init(self, *args, **kwargs)
        return
    type.__setattr__(owner, "__record_made__", made)
    _bind(owner, self, args, kwargs)


def _init_owner(cls: type) -> type:
    return next(k for k in cls.__mro__ if k.__dict__.get("__init__") is _record_init)


def _bind(cls: Any, self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Python's argument binding for the record's fields, then ``__post_init__``."""
    record_fields: dict[str, Field] = cls.__record_fields__
    names: tuple[str, ...] = cls.__match_args__
    if len(args) > len(names):
        raise TypeError(
            f"{cls.__qualname__}.__init__() takes {len(names) + 1} positional arguments but "
            f"{len(args) + 1} were given"
        )
    values = dict(zip(names, args, strict=False))  # args may stop short: defaults follow
    if kwargs:
        for key, value in kwargs.items():
            if key not in names or key in values:
                problem = (
                    "multiple values for argument"
                    if key in values
                    else "an unexpected keyword argument"
                )
                raise TypeError(f"{cls.__qualname__}.__init__() got {problem} {key!r}")
            values[key] = value
    if len(values) < len(record_fields):
        for key, spec in record_fields.items():
            if key in values:
                continue
            if spec.default_factory is not MISSING:
                values[key] = spec.default_factory()
            elif spec.default is not MISSING:
                values[key] = spec.default
            elif spec.init:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() missing 1 required positional argument: {key!r}"
                )
    assign = object.__setattr__ if cls.__record_frozen__ else setattr
    for key, value in values.items():
        assign(self, key, value)
    if hasattr(cls, "__post_init__"):
        self.__post_init__()


def _compile_init(cls: type) -> Callable[..., None]:
    record_fields: dict[str, Field] = cls.__record_fields__  # type: ignore[attr-defined]
    frozen: bool = cls.__record_frozen__  # type: ignore[attr-defined]
    namespace: dict[str, Any] = {"_MISSING": MISSING, "_set": object.__setattr__}
    params: list[str] = []
    body: list[str] = []
    for name, spec in record_fields.items():
        if spec.default_factory is not MISSING:
            namespace[f"_factory_{name}"] = spec.default_factory
            value = f"_factory_{name}()"
            if spec.init:
                params.append(f"{name}=_MISSING")
                value = f"{value} if {name} is _MISSING else {name}"
        elif spec.init:
            if spec.default is MISSING:
                params.append(name)
            else:
                namespace[f"_default_{name}"] = spec.default
                params.append(f"{name}=_default_{name}")
            value = name
        elif spec.default is not MISSING:
            namespace[f"_default_{name}"] = spec.default
            value = f"_default_{name}"
        else:
            continue  # set by __post_init__
        body.append(f"_set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    text = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body or ["pass"])
    exec(text, namespace)  # the one method compiled per class, as dataclasses compile all
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


# -- the decorator ---------------------------------------------------------------------------


@overload
def record(cls: _C, /) -> _C: ...
@overload
def record(
    *,
    frozen: bool = False,
    eq: bool = True,
    repr: bool = True,
    order: bool = False,
    slots: bool = False,
) -> Callable[[_C], _C]: ...
@dataclass_transform(field_specifiers=(field, Field))
def record(
    cls: Any = None,
    /,
    *,
    frozen: bool = False,
    eq: bool = True,
    repr: bool = True,  # noqa: A002
    order: bool = False,
    slots: bool = False,
) -> Any:
    """Make ``cls`` a record (see the module docstring); options as ``dataclasses.dataclass``."""

    def wrap(cls: type) -> type:
        return _make_record(cls, frozen=frozen, eq=eq, shown=repr, order=order, slots=slots)

    return wrap if cls is None else wrap(cls)


def _make_record(
    cls: type, *, frozen: bool, eq: bool, shown: bool, order: bool, slots: bool
) -> type:
    record_fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        record_fields.update(base.__dict__.get("__record_fields__", {}))
        if "__record_fields__" in base.__dict__ and base.__dict__["__record_frozen__"] != frozen:
            raise TypeError(f"{cls.__name__}: a frozen and a mutable record cannot inherit")
    own = list(cls.__dict__.get("__annotations__", {}))
    for name in own:
        declared = cls.__dict__.get(name, MISSING)
        spec = declared if isinstance(declared, Field) else Field(declared)
        spec.name = name
        if isinstance(spec.default, (list, dict, set)):
            raise ValueError(f"mutable default for field {name!r}: use default_factory")
        record_fields[name] = spec
        if isinstance(declared, Field):  # the class attribute is the plain default, as dataclasses
            if spec.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
    _check_order(cls, record_fields)
    if slots:
        cls = _with_slots(cls, own)
    explicit_hash = "__hash__" in cls.__dict__ and not (
        cls.__dict__["__hash__"] is None and "__eq__" in cls.__dict__
    )
    methods: dict[str, Any] = {"__init__": _record_init}
    if shown:
        methods["__repr__"] = _record_repr
    if eq:
        methods["__eq__"] = _record_eq
    if order:
        methods.update(_ORDER)
    if frozen:
        methods.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
        if slots:
            methods.update(__getstate__=_frozen_getstate, __setstate__=_frozen_setstate)
    for name, method in methods.items():
        if name not in cls.__dict__:
            setattr(cls, name, method)
    if eq and not explicit_hash:
        # dataclasses' rule: a frozen record hashes its compared fields, a mutable one is
        # unhashable
        type.__setattr__(cls, "__hash__", _record_hash if frozen else None)
    compared = tuple(name for name, spec in record_fields.items() if spec.compare)
    attributes = {
        "__record_fields__": record_fields,
        "__record_frozen__": frozen,
        "__record_values__": _values_getter(compared),
        "__record_shown__": tuple(name for name, spec in record_fields.items() if spec.repr),
        "__match_args__": tuple(name for name, spec in record_fields.items() if spec.init),
    }
    for name, value in attributes.items():
        type.__setattr__(cls, name, value)
    return cls


def _values_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if len(names) == 1:  # attrgetter of one name returns the value, not a 1-tuple
        one = attrgetter(names[0])
        return lambda item: (one(item),)
    if not names:
        return lambda item: ()
    return attrgetter(*names)  # type: ignore[return-value]


def _check_order(cls: type, record_fields: dict[str, Field]) -> None:
    with_default = False
    for spec in record_fields.values():
        if not spec.init:
            continue
        if spec.default is MISSING and spec.default_factory is MISSING:
            if with_default:
                raise TypeError(
                    f"{cls.__name__}: field {spec.name!r} without a default follows one with a "
                    "default"
                )
        else:
            with_default = True


def _with_slots(cls: type, own: list[str]) -> type:
    """``cls`` rebuilt with ``__slots__`` for its own fields (slots exist only from class
    creation on, as ``dataclass(slots=True)`` does)."""
    namespace = dict(cls.__dict__)
    namespace["__slots__"] = tuple(own)
    for name in own:
        namespace.pop(name, None)  # a slot cannot also be a class attribute
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    rebuilt = type(cls)(cls.__name__, cls.__bases__, namespace)
    rebuilt.__qualname__ = cls.__qualname__
    return rebuilt


# -- module functions ------------------------------------------------------------------------


def is_record(obj: object) -> bool:
    """True for a record class or instance."""
    cls = obj if isinstance(obj, type) else type(obj)
    return hasattr(cls, "__record_fields__")


def fields(obj: object) -> tuple[Field, ...]:
    """A record's (or record class's) fields, in declaration order."""
    cls = obj if isinstance(obj, type) else type(obj)
    try:
        return tuple(cls.__record_fields__.values())  # type: ignore[attr-defined]
    except AttributeError:
        raise TypeError(f"{cls.__name__} is not a record") from None


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of the record ``obj`` with ``changes`` applied (``dataclasses.replace``)."""
    for spec in fields(obj):
        if not spec.init:
            if spec.name in changes:
                raise ValueError(f"field {spec.name!r} is not an __init__ argument")
        elif spec.name not in changes:
            changes[spec.name] = getattr(obj, spec.name)
    return obj.__class__(**changes)

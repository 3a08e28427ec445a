"""Frozen records: frozen dataclasses made at import without compiling any code.

``@dataclass(frozen=True)`` writes the source of six methods per class and compiles each one when
the module is imported: about 0.55 ms a class in Python 3.11, so that the classes a plain count
reads and writes cost more to define than to use (docs/benchmarks.md). ``@record`` gives the same
class from closures shared by every record, in about 20 us a class: a constructor taking the
fields by position or keyword, defaults and ``field(default_factory=..., compare=..., repr=...)``,
``repr``, equality and hashing over the compared fields, assignment refused, and the dataclass
fields ``dataclasses.fields``, ``replace`` and ``asdict`` read. Construction takes about a
microsecond more than a dataclass's, which the few records a part makes never notice.

A class that uses what records leave out (``__post_init__``, fields outside ``__init__`` or
keyword-only ones) is made a dataclass; ordering, slots and ``InitVar`` are not offered. Type
checkers read a record as a frozen dataclass (``typing.dataclass_transform``). Where
``dataclasses`` names its fields' kind otherwise than Python 3.10 to 3.13 do, a record is a
plain frozen dataclass.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, field
from typing import Any, TypeVar

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10: the marker is for type checkers only

    def dataclass_transform(**_: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return lambda f: f


T = TypeVar("T")
_FIELD_KIND = getattr(dataclasses, "_FIELD", None)  # what ``dataclasses.fields`` lists


@dataclasses.dataclass(frozen=True, init=False, repr=False, eq=False)  # the fewest methods to compile
class _Frozen:
    """Its parameters stand for every record's: a dataclass that extends a record reads ``frozen``."""


_PARAMS = _Frozen.__dataclass_params__  # type: ignore[attr-defined]


def _fields(cls: type) -> dict[str, Field[Any]]:
    """The fields of ``cls`` in order (a base record's first), as ``dataclasses`` describes them."""
    found: dict[str, Field[Any]] = {}
    for base in reversed(cls.__mro__[1:]):
        found.update(base.__dict__.get("__dataclass_fields__", {}))
    # The class's own annotations (strings under postponed evaluation), as dataclasses read them.
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        if text.startswith(("ClassVar", "typing.ClassVar", "InitVar", "dataclasses.InitVar")):
            continue
        value = cls.__dict__.get(name, MISSING)
        f = value if isinstance(value, Field) else field(default=value)
        f.name, f.type = name, annotation
        f.kw_only = False  # as dataclasses settle it: a dataclass extending the record reads it
        setattr(f, "_field_type", _FIELD_KIND)  # noqa: B010 (a private slot: no attribute to type)
        found.pop(name, None)
        found[name] = f
        if isinstance(value, Field):  # as dataclasses do: the class keeps the default, not the Field
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
    seen_default = False
    for name, f in found.items():
        if f.default is not MISSING or f.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default field {name!r} follows a default field in {cls.__qualname__}")
    return found


def _replace(self: Any, /, **changes: Any) -> Any:
    return dataclasses.replace(self, **changes)


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen record of its annotated fields (see the module's docstring)."""
    if _FIELD_KIND is None or "__post_init__" in cls.__dict__ or any(
        isinstance(v, Field) and (not v.init or v.kw_only is True) for v in cls.__dict__.values()
    ):
        return dataclasses.dataclass(frozen=True)(cls)
    fields = _fields(cls)
    names = tuple(fields)
    n = len(names)
    defaults = {k: f.default for k, f in fields.items() if f.default is not MISSING}
    factories = {k: f.default_factory for k, f in fields.items() if f.default_factory is not MISSING}
    compared = tuple(k for k, f in fields.items() if f.compare)
    shown = tuple(k for k, f in fields.items() if f.repr)
    qualname = cls.__qualname__

    name_set = frozenset(names)

    def slow_init(self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Every field in turn: defaults, factories, and the errors a dataclass raises."""
        d = self.__dict__
        d.clear()
        d.update(zip(names, args, strict=False))
        for name in names[len(args) :]:
            if name in kwargs:
                d[name] = kwargs.pop(name)
            elif name in defaults:
                d[name] = defaults[name]
            elif name in factories:
                d[name] = factories[name]()
            else:
                missing = [m for m in names[len(args) :] if m not in d]
                raise TypeError(f"{qualname}() missing required arguments: {', '.join(map(repr, missing))}")
        if kwargs:
            name = next(iter(kwargs))
            given = "got multiple values for" if name in names else "got an unexpected keyword"
            raise TypeError(f"{qualname}() {given} argument {name!r}")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > n:
            raise TypeError(f"{qualname}() takes {n} positional arguments but {len(args)} were given")
        # The instance's dictionary filled at once (defaults, then the arguments), about as quick as
        # a dataclass's own __init__; anything amiss, or a factory to call, takes the slow path.
        d = self.__dict__
        if defaults:
            d.update(defaults)
        if args:
            d.update(zip(names, args, strict=False))
        if kwargs:
            d.update(kwargs)
            if not (kwargs.keys() <= name_set and (not args or kwargs.keys().isdisjoint(names[: len(args)]))):
                slow_init(self, args, dict(kwargs))  # raises: a name unknown or given twice
        if len(d) != n:
            slow_init(self, args, dict(kwargs))

    def values(self: Any) -> tuple[Any, ...]:
        d = self.__dict__
        return tuple([d[name] for name in compared])

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(values(self) == values(other))
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(values(self))

    def __repr__(self: Any) -> str:
        d = self.__dict__
        return f"{self.__class__.__qualname__}({', '.join(f'{name}={d[name]!r}' for name in shown)})"

    __init__.__qualname__ = f"{qualname}.__init__"
    methods: dict[str, Any] = {"__init__": __init__, "__setattr__": _frozen_setattr, "__delattr__": _frozen_delattr}
    # As dataclasses do: the methods a class writes itself are kept.
    if "__eq__" not in cls.__dict__:
        methods["__eq__"] = __eq__
    if cls.__dict__.get("__hash__") is None:
        methods["__hash__"] = __hash__
    if "__repr__" not in cls.__dict__:
        methods["__repr__"] = __repr__
    methods.update(__dataclass_fields__=fields, __dataclass_params__=_PARAMS, __match_args__=names)
    methods["__replace__"] = _replace  # ``copy.replace`` (Python 3.13), as on a dataclass
    for name, value in methods.items():
        setattr(cls, name, value)
    return cls

"""Frozen records: classes of named fields, made at import without compiling any code.

``@dataclass(frozen=True)`` writes the source of six methods per class and compiles each one when
the module is imported: about 0.55 ms a class in Python 3.11, so that the classes a plain count
reads and writes cost more to define than to use (docs/benchmarks.md). ``@record`` gives the same
class for the uses spanscore makes of the internal ones - a constructor taking the fields by
position or keyword, defaults, ``repr``, equality and hashing over the fields, and assignment
refused - from closures shared by every record, in about 10 us a class.

It leaves out what these classes never need: ``dataclasses.fields``, ``replace`` and ``asdict``
(they are no dataclasses), ``field(...)`` specifiers, ``__post_init__``, ordering and slots.
Option and result objects that callers may take apart with ``dataclasses`` stay dataclasses.
Type checkers read a record as a frozen dataclass (``typing.dataclass_transform``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from typing import Any, TypeVar

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10: the marker is for type checkers only

    def dataclass_transform(**_: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return lambda f: f


T = TypeVar("T")
_MISSING = object()


def _names(cls: type) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The fields of ``cls`` in order (a base record's first) and their defaults."""
    names: list[str] = []
    defaults: dict[str, Any] = {}
    for base in reversed(cls.__mro__[1:]):
        fields = base.__dict__.get("__record_fields__")
        if fields is not None:
            names.extend(n for n in fields if n not in names)
            defaults.update(base.__dict__["__record_defaults__"])
    # The class's own annotations (strings under postponed evaluation), as dataclasses read them.
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        if text.startswith(("ClassVar", "typing.ClassVar")):
            continue
        if name not in names:
            names.append(name)
        if name in cls.__dict__:
            defaults[name] = cls.__dict__[name]
        elif name in defaults:
            del defaults[name]
    seen_default = False
    for name in names:
        if name in defaults:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default field {name!r} follows a default field in {cls.__qualname__}")
    return tuple(names), defaults


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen record of its annotated fields (see the module's docstring)."""
    names, defaults = _names(cls)
    n = len(names)
    required = tuple(name for name in names if name not in defaults)
    set_field = object.__setattr__
    qualname = cls.__qualname__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > n:
            raise TypeError(f"{qualname}() takes {n} positional arguments but {len(args)} were given")
        for name, value in zip(names, args, strict=False):
            set_field(self, name, value)
        if kwargs or len(args) < n:
            for name in names[len(args) :]:
                if name in kwargs:
                    set_field(self, name, kwargs.pop(name))
                elif name in defaults:
                    set_field(self, name, defaults[name])
                else:
                    missing = [m for m in required[len(args) :] if m not in self.__dict__]
                    raise TypeError(f"{qualname}() missing required arguments: {', '.join(map(repr, missing))}")
            if kwargs:
                name = next(iter(kwargs))
                given = "got multiple values for" if name in names else "got an unexpected keyword"
                raise TypeError(f"{qualname}() {given} argument {name!r}")

    def values(self: Any) -> tuple[Any, ...]:
        d = self.__dict__
        return tuple([d[name] for name in names])

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(values(self) == values(other))
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(values(self))

    def __repr__(self: Any) -> str:
        d = self.__dict__
        return f"{self.__class__.__qualname__}({', '.join(f'{name}={d[name]!r}' for name in names)})"

    __init__.__qualname__ = f"{qualname}.__init__"
    methods: dict[str, Any] = {"__init__": __init__, "__setattr__": _frozen_setattr, "__delattr__": _frozen_delattr}
    # As dataclasses do: the methods a class writes itself are kept.
    if "__eq__" not in cls.__dict__:
        methods["__eq__"] = __eq__
    if cls.__dict__.get("__hash__") is None:
        methods["__hash__"] = __hash__
    if "__repr__" not in cls.__dict__:
        methods["__repr__"] = __repr__
    methods.update(__record_fields__=names, __record_defaults__=defaults, __match_args__=names)
    for name, value in methods.items():
        setattr(cls, name, value)
    return cls

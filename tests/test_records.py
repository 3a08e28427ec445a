"""Records (spanscore.runtime.records) behave as the frozen dataclasses they replace on the count's path."""

from __future__ import annotations

import dataclasses
import pickle
from typing import ClassVar

import numpy as np
import pytest

from spanscore.io.conll import Column, ConllTable
from spanscore.io.conll_plan import Chunk, plan_chunks
from spanscore.runtime.records import record
from spanscore.stages.criteria import STRICT, Criterion
from spanscore.stages.scores import PRF, prf
from spanscore.stages.text import Repaired


@record
class Point:
    """A record."""

    x: int
    y: str
    z: float = 1.0
    w: tuple[int, ...] = ()
    kind: ClassVar[str] = "point"


@dataclasses.dataclass(frozen=True)
class DataPoint:
    """The same fields as a frozen dataclass."""

    x: int
    y: str
    z: float = 1.0
    w: tuple[int, ...] = ()
    kind: ClassVar[str] = "point"


@record
class Labelled(Point):
    """A record that extends another: its fields come after the base's."""

    label: str = ""


CALLS: list[tuple[tuple[object, ...], dict[str, object]]] = [
    ((1, "a"), {}),
    ((1,), {"y": "a"}),
    ((), {"x": 1, "y": "a", "w": (2,)}),
    ((1, "a", 2.5, (3,)), {}),
    ((1, "a"), {"z": 0.5}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_a_record_is_made_read_shown_and_compared_as_a_frozen_dataclass(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    r, d = Point(*args, **kwargs), DataPoint(*args, **kwargs)  # type: ignore[arg-type]
    assert (r.x, r.y, r.z, r.w) == (d.x, d.y, d.z, d.w)
    assert repr(r).replace("Point", "DataPoint", 1) == repr(d)
    assert r == Point(*args, **kwargs)  # type: ignore[arg-type]
    assert hash(r) == hash(Point(*args, **kwargs)) == hash(d)  # type: ignore[arg-type]
    assert r != Point(2, "b") and r != d  # another class is never equal, as for dataclasses
    assert Point.__match_args__ == ("x", "y", "z", "w")  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(r)) == r


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((1,), {}), ((1, "a", 1.0, (), 5), {}), ((1, "a"), {"x": 2}), ((1, "a"), {"v": 2})],
)
def test_a_record_refuses_the_calls_a_dataclass_refuses(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    with pytest.raises(TypeError):
        DataPoint(*args, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Point(*args, **kwargs)  # type: ignore[arg-type]


def test_a_record_is_frozen() -> None:
    r = Point(1, "a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del r.y  # type: ignore[misc]
    assert (r.x, r.y) == (1, "a")


def test_a_record_extends_another_and_keeps_class_variables_out() -> None:
    r = Labelled(1, "a", label="x")
    assert (r.x, r.y, r.z, r.w, r.label) == (1, "a", 1.0, (), "x")
    assert Labelled.kind == "point" and "kind" not in r.__dict__
    assert r != Point(1, "a")
    with pytest.raises(TypeError):

        @record
        class Bad:
            a: int = 0
            b: int


def test_dataclasses_read_a_record_as_the_dataclass_it_stands_for() -> None:
    r, d = Labelled(1, "a", label="x"), DataPoint(1, "a")
    assert dataclasses.is_dataclass(r) and dataclasses.is_dataclass(Labelled)
    assert [f.name for f in dataclasses.fields(r)] == ["x", "y", "z", "w", "label"]
    assert [(f.name, f.default) for f in dataclasses.fields(Point)] == [
        (f.name, f.default) for f in dataclasses.fields(DataPoint)
    ]
    assert dataclasses.asdict(r) == {**dataclasses.asdict(d), "label": "x"}
    changed = dataclasses.replace(r, z=3.0)
    assert type(changed) is Labelled and (changed.z, changed.label, r.z) == (3.0, "x", 1.0)
    with pytest.raises(TypeError):
        dataclasses.replace(r, v=1)  # type: ignore[call-arg]
    assert r.__replace__(y="b") == Labelled(1, "b", label="x")  # type: ignore[attr-defined]  # copy.replace


def test_a_dataclass_extends_a_record() -> None:
    @dataclasses.dataclass(frozen=True)
    class Extended(Point):
        extra: int = 0

    e = Extended(1, "a", extra=2)
    assert (e.x, e.y, e.z, e.extra) == (1, "a", 1.0, 2)
    assert [f.name for f in dataclasses.fields(e)] == ["x", "y", "z", "w", "extra"]
    assert dataclasses.replace(e, x=5).x == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.x = 2  # type: ignore[misc]


def test_field_specifiers_give_defaults_and_leave_fields_out_of_comparison_and_repr() -> None:
    @record
    class Holder:
        name: str
        items: list[int] = dataclasses.field(default_factory=list)
        note: str = dataclasses.field(default="", compare=False, repr=False)

    a, b = Holder("a"), Holder("a", note="other")
    assert a.items == [] and a.items is not Holder("a").items  # a new list each time
    assert a == b and repr(a).endswith(".Holder(name='a', items=[])")
    with pytest.raises(TypeError):
        hash(a)  # a list field, as for a dataclass
    assert Holder.note == "" and "items" not in Holder.__dict__  # as a dataclass leaves its class


def test_what_records_leave_out_makes_a_dataclass() -> None:
    @record
    class Checked:
        a: int

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("negative")

    with pytest.raises(ValueError, match="negative"):
        Checked(-1)
    assert "__dataclass_params__" in Checked.__dict__  # a real dataclass


def test_methods_a_record_writes_itself_are_kept() -> None:
    @record
    class Shown:
        a: int

        def __repr__(self) -> str:
            return f"<{self.a}>"

    assert repr(Shown(3)) == "<3>"


def test_the_counts_records_keep_their_behaviour() -> None:
    assert repr(prf(3.5, 3.5, 4, 5)) == "PRF(precision=0.875, recall=0.7, f1=0.7777777777777777)"
    assert PRF(1.0, 0.5, 2 / 3) == PRF(1.0, 0.5, 2 / 3) and hash(PRF(1.0, 0.5, 0.5)) == hash(PRF(1.0, 0.5, 0.5))
    assert Criterion("strict", STRICT.table) == STRICT and {STRICT: 1}[Criterion("strict", STRICT.table)] == 1
    assert Repaired("f").then(Repaired("f", 2, 7)) == Repaired("f", 2, 7)
    ids = np.array([0, 1], dtype=np.int64)
    col = Column(ids=ids, vocab=("O", "B-X"))
    assert col.ids is ids and col.vocab == ("O", "B-X")
    with pytest.raises(TypeError):
        ConllTable("p")  # type: ignore[call-arg]


def test_a_chunk_extended_at_the_end_of_the_files(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    gold, pred = folder / "g", folder / "p"
    gold.write_text("a O\nb B-X\n\nc O\n\n\n")
    pred.write_text("a O\nb B-X\n\nc O\n\n \n\n")  # trailing white space belongs to the last chunk
    chunks = plan_chunks(gold, pred, chunk_bytes=4)
    assert chunks[-1].ref_end == gold.stat().st_size and chunks[-1].pred_end == pred.stat().st_size
    assert chunks[0] == Chunk(0, chunks[0].ref_end, 0, chunks[0].pred_end, 0, 0)
    assert Chunk(0, 1, 2, 3, 4, 5).ending(7, 8) == Chunk(0, 7, 2, 8, 4, 5)

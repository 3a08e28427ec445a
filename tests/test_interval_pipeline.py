"""The intervals' work as a pipeline (``significance._Blocks``): a histogram's blocks of resamples
are drawn by whichever thread takes them, while later histograms' tables are still being made
and earlier ones are scored. The numbers never depend on the order the blocks are drawn in,
on which thread draws them, or on how many threads there are."""

from __future__ import annotations

import functools
import json
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spanscore
from spanscore.analysis import significance
from spanscore.analysis.significance import Resampling, intervals
from spanscore.stages.documents import DocState

DATA = Path(__file__).parent / "data"


def _state() -> tuple[DocState, str]:
    report = spanscore.evaluate(
        reference=str(DATA / "small.gold.conll"), predicted=str(DATA / "small.pred.conll"), ci=0.95, chunk_bytes=300
    )
    assert report.document_state is not None
    return report.document_state, report.counts.credit


class _Backwards(significance._Blocks):
    """Draws every block as soon as a result is asked for, the last added first: the opposite of
    the order the blocks are added in (and scored in)."""

    def result(self, block: significance._Block) -> Any:
        with self._ready:
            waiting = [b for b in self._queue if not b.taken]
            for b in waiting:
                b.taken = True
        for b in reversed(waiting):
            b.run()
        return super().result(block)


class _Late(significance._Blocks):
    """Lets no block be drawn until every table is made and asked for: the helpers wait, then
    take the blocks in the order added, and this thread takes none of them itself."""

    def __init__(self, helpers: int) -> None:
        super().__init__(max(helpers, 2))
        self.gate = threading.Event()

    def _serve(self) -> None:
        self.gate.wait()
        super()._serve()

    def result(self, block: significance._Block) -> Any:
        self.gate.set()
        block.done.wait()
        assert block.result is not None
        return block.result


@pytest.mark.filterwarnings("ignore:intervals over")
@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_the_order_blocks_are_drawn_in_changes_no_number(monkeypatch: pytest.MonkeyPatch, beta: float) -> None:
    state, credit = _state()
    resampling = Resampling(resamples=700, seed=11)
    monkeypatch.setattr(significance, "_threads", lambda: 1)
    alone = intervals(state, zero_division=0.0, credit=credit, resampling=resampling, beta=beta)
    assert alone["per_type"]  # the per-type tables were drawn too
    monkeypatch.setattr(significance, "_threads", lambda: 4)
    monkeypatch.setattr(significance, "SHARED_DRAWS", 1)  # helpers wherever there are blocks
    shared = intervals(state, zero_division=0.0, credit=credit, resampling=resampling, beta=beta)
    monkeypatch.setattr(significance, "_Blocks", _Backwards)
    backwards = intervals(state, zero_division=0.0, credit=credit, resampling=resampling, beta=beta)
    monkeypatch.setattr(significance, "_Blocks", _Late)
    late = intervals(state, zero_division=0.0, credit=credit, resampling=resampling, beta=beta)
    want = json.dumps(alone, sort_keys=True)
    assert json.dumps(shared, sort_keys=True) == want
    assert json.dumps(backwards, sort_keys=True) == want
    assert json.dumps(late, sort_keys=True) == want


@pytest.mark.parametrize("helpers", [0, 1, 3])
def test_blocks_give_each_result_to_its_block(helpers: int) -> None:
    def slow(i: int) -> np.ndarray:
        time.sleep(0.001 * (i % 3))
        return np.full(2, float(i))

    with significance._Blocks(helpers) as blocks:
        added = [blocks.add(functools.partial(slow, i)) for i in range(40)]
        got = [blocks.result(b)[0] for b in added]
    assert got == [float(i) for i in range(40)]


def test_this_thread_draws_other_blocks_while_a_helper_draws_the_one_it_waits_for() -> None:
    # The helpers take the blocks in the order their results are asked for: this thread, asking
    # for the block a helper has just taken, used to wait, and the helper drew every block.
    taken, main_drew = threading.Event(), threading.Event()
    drawn_by: dict[int, str] = {}

    def first() -> np.ndarray:
        drawn_by[0] = threading.current_thread().name
        taken.set()
        assert main_drew.wait(10), "this thread never drew while the helper drew the first block"
        return np.zeros(1)

    def later(i: int) -> np.ndarray:
        drawn_by[i] = threading.current_thread().name
        if threading.current_thread() is threading.main_thread():
            main_drew.set()
        return np.full(1, float(i))

    with significance._Blocks(1) as blocks:
        added = [blocks.add(first)]
        assert taken.wait(10)  # the helper draws the first block
        added += [blocks.add(functools.partial(later, i)) for i in range(1, 6)]
        got = [blocks.result(b)[0] for b in added]
    assert got == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert drawn_by[0] != threading.main_thread().name and drawn_by[1] == threading.main_thread().name


@pytest.mark.parametrize("helpers", [0, 2])
def test_a_blocks_error_is_raised_where_its_result_is_asked_for(helpers: int) -> None:
    def fails() -> np.ndarray:
        raise ValueError("drawn badly")

    with significance._Blocks(helpers) as blocks:
        good = blocks.add(lambda: np.zeros(1))
        bad = blocks.add(fails)
        assert blocks.result(good).tolist() == [0.0]
        with pytest.raises(ValueError, match="drawn badly"):
            blocks.result(bad)


def test_blocks_left_undrawn_on_an_error_stop_the_helpers() -> None:
    started = threading.Event()

    def first() -> np.ndarray:
        started.set()
        return np.zeros(1)

    with pytest.raises(RuntimeError, match="scoring failed"), significance._Blocks(2) as blocks:
        blocks.add(first)
        for _ in range(50):
            blocks.add(lambda: np.zeros(1))
        started.wait(5)
        raise RuntimeError("scoring failed")
    assert not any(t.is_alive() for t in blocks._threads)


LOAD_PROBE = """
import sys
import spanscore
from spanscore.engines import local
seen = []
count = local.PartCounter.count
def counted(self, item, data):
    seen.append("spanscore.analysis.significance" in sys.modules)
    return count(self, item, data)
local.PartCounter.count = counted
report = spanscore.evaluate(reference=sys.argv[1], predicted=sys.argv[2], ci=0.9, resamples=20, jobs=1)
assert report.intervals is not None and seen, seen
print(seen[0], "spanscore.analysis.significance" in sys.modules)
"""


def test_the_intervals_module_loads_after_the_first_chunk_is_counted() -> None:
    """Its import (about 3 ms) is no part of the serial start of a run: the command line loads it
    on a thread while the chunks are counted, and the library once they are."""
    import subprocess
    import sys

    gold, pred = str(DATA / "small.gold.conll"), str(DATA / "small.pred.conll")
    done = subprocess.run([sys.executable, "-c", LOAD_PROBE, gold, pred], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("level", [0.0, 1.5, "0.9"])
def test_a_bad_level_is_refused_before_counting(level: Any) -> None:
    from spanscore.errors import OptionError

    with pytest.raises(OptionError, match="ci is a confidence level"):
        spanscore.evaluate(reference=str(DATA / "small.gold.conll"), predicted=str(DATA / "small.pred.conll"), ci=level)


def test_compare_draws_a_familys_blocks_while_the_later_families_are_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """compare's families (each family's narrowing of the joint histogram, its swaps) are made one
    by one, and the blocks of the first are drawn by a helper before the second is made (they
    waited for every family: tens of milliseconds of serial work on 100,000 sentences). The same
    numbers as one thread's."""
    options: dict[str, Any] = {
        "reference": str(DATA / "small.gold.conll"),
        "systems": [str(DATA / "small.pred.conll"), str(DATA / "small.gold.conll")],
        "resamples": 60,
        "trials": 70,
        "seed": 3,
    }
    with pytest.warns(Warning):
        alone = spanscore.compare(**options).to_dict()
    monkeypatch.setattr(significance, "PARALLEL_WORK", 0)  # a helper as soon as a block is queued
    monkeypatch.setattr(significance, "_threads", lambda: 2)
    events: list[tuple[str, bool]] = []
    first_drawn = threading.Event()
    made, resampled = significance._Family.__init__, significance._Family.resampled
    main = threading.current_thread()

    def make(self: Any, *args: Any) -> None:
        if sum(kind == "made" for kind, _ in events) == 1:  # the second: the first's draw begun beside it, or never
            first_drawn.wait(5)
        made(self, *args)
        events.append(("made", threading.current_thread() is main))

    def draw(self: Any, *args: Any) -> Any:
        events.append(("drawn", threading.current_thread() is main))
        first_drawn.set()
        return resampled(self, *args)

    monkeypatch.setattr(significance._Family, "__init__", make)
    monkeypatch.setattr(significance._Family, "resampled", draw)
    with pytest.warns(Warning):
        assert spanscore.compare(**options).to_dict() == alone
    made_at = [i for i, (kind, _) in enumerate(events) if kind == "made"]
    assert len(made_at) > 1
    assert events.index(("drawn", False)) < made_at[1], events


def test_compare_queues_the_next_batchs_blocks_before_it_scores_this_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """compare tests a few histograms (the corpus's, each type's) at a time; the next batch's
    families are made and their blocks queued before this batch is scored, so the helpers draw
    them meanwhile (they waited for the scoring of every batch). The same numbers."""
    options: dict[str, Any] = {
        "reference": str(DATA / "small.gold.conll"),
        "systems": [str(DATA / "small.pred.conll"), str(DATA / "small.gold.conll")],
        "per_type": True,
        "resamples": 40,
        "trials": 30,
        "seed": 5,
    }
    with pytest.warns(Warning):
        alone = spanscore.compare(**options).to_dict()
    monkeypatch.setattr(significance, "_threads", lambda: 1)  # one histogram a batch
    events: list[tuple[str, int]] = []
    made, scored = significance._Family.__init__, significance._scored_rows

    def make(self: Any, name: str, joint: Any, *args: Any) -> None:
        made(self, name, joint, *args)
        events.append(("made", id(joint)))

    def score(*args: Any) -> Any:
        events.append(("scored", 0))
        return scored(*args)

    monkeypatch.setattr(significance._Family, "__init__", make)
    monkeypatch.setattr(significance, "_scored_rows", score)
    with pytest.warns(Warning):
        assert spanscore.compare(**options).to_dict() == alone
    first_scored = events.index(("scored", 0))
    assert len({joint for kind, joint in events[:first_scored] if kind == "made"}) == 2, events

"""``compare``'s floor lowered without changing a byte: each system's per-document state is made
out of the systems' joint histogram only when something asks for it (its report's macro over
documents, ``Report.document_state``), since the comparison's own results never read it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore import api
from spanscore.io.conll_plan import iter_chunks, iter_chunks_beside
from spanscore.stages.documents import DocState


@pytest.fixture(scope="module")
def runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("floor")
    gold = sentences(btc / "test.txt")
    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": write_conll(folder / "b.conll", perturb(gold, 2, 0.35)),
    }


@pytest.mark.parametrize("grouped", [False, True])
def test_each_systems_state_is_made_only_when_asked_for(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, grouped: bool
) -> None:
    made: list[int] = []
    real = api._system_state

    def spy(joint: Any, k: int, unit: str) -> DocState:
        made.append(k)
        return real(joint, k, unit)

    monkeypatch.setattr(api, "_system_state", spy)
    options: dict[str, Any] = {"per_type": True, "buckets": ["length"]} if grouped else {}
    c = spanscore.compare(
        reference=str(runs["gold"]), systems=[str(runs["a"]), str(runs["b"])], format="conll",
        resamples=30, trials=30, **options,
    )
    json.dumps(c.to_dict())
    assert made == []  # neither the comparison nor its JSON asked
    for k, system in enumerate(("a", "b")):
        alone = spanscore.evaluate(
            reference=str(runs["gold"]), predicted=str(runs[system]), format="conll", ci=0.95, resamples=10
        )
        assert alone.document_state is not None
        macro = c.reports[k].to_dict()["macro_documents"]
        assert made == list(range(k + 1))  # made now, once
        assert macro == alone.to_dict()["macro_documents"]
        state = c.reports[k].document_state
        assert isinstance(state, DocState) and made == list(range(k + 1))  # kept, not made again
        assert state.closed.documents == alone.document_state.closed.documents


def _conll(sentences: list[list[tuple[str, str]]], *, docstart: bool = False, comments: bool = False,
           tail: str = "\n") -> str:
    out = ["-DOCSTART- O\n\n"] if docstart else []
    for k, sentence in enumerate(sentences):
        if comments and k % 7 == 0:
            out.append(f"# sentence {k}\n")
        out.append("".join(f"{w} {t}\n" for w, t in sentence))
        out.append("\n")
    text = "".join(out)
    return text[:-1] + tail  # the file's end: one newline, blank lines, or none


def _corpus(seed: int, n: int) -> list[list[tuple[str, str]]]:
    rng = np.random.default_rng(seed)
    tags = ["O", "B-PER", "I-PER", "B-LOC"]
    return [
        [(f"w{rng.integers(1000)}", tags[rng.integers(4)]) for _ in range(int(rng.integers(1, 30)))]
        for _ in range(n)
    ]


def _sentences(data: bytes) -> int:
    """Sentences in CoNLL bytes: runs of token lines (not -DOCSTART- or comment lines)."""
    n, inside = 0, False
    for line in data.decode().split("\n"):
        token = bool(line.strip()) and not line.startswith(("-DOCSTART-", "#"))
        n += token and not inside
        inside = token if line.strip() else False
    return n


@pytest.mark.parametrize("chunk", [300, 2000, 50000])
@pytest.mark.parametrize("shape", ["plain", "docstart", "comments", "blank tail", "no newline"])
def test_the_reference_cut_once_for_every_prediction_gives_each_its_own_chunks(
    tmp_path: Path, chunk: int, shape: str
) -> None:
    options: dict[str, Any] = {
        "docstart": shape == "docstart", "comments": shape == "comments",
        "tail": {"blank tail": "\n\n\n", "no newline": ""}.get(shape, "\n"),
    }
    gold = _corpus(0, 400)
    paths = [tmp_path / "gold.conll", tmp_path / "a.conll", tmp_path / "b.conll"]
    paths[0].write_text(_conll(gold, **options))
    # The predictions' own tags (other lengths of line), one with comments where the others have none.
    paths[1].write_text(_conll([[(w, "O") for w, _ in s] for s in gold], **{**options, "comments": True}))
    paths[2].write_text(_conll([[(w, t + "-X" if t != "O" else t) for w, t in s] for s in gold], **options))
    beside = list(iter_chunks_beside(paths[0], [paths[1], paths[2], None], chunk))
    alone = [list(iter_chunks(paths[0], p, chunk)) for p in (paths[1], paths[2], None)]
    assert [list(c) for c in zip(*beside, strict=True)] == alone
    assert len(beside) > 1 or chunk == 50000
    files = [p.read_bytes() for p in paths]
    for k in (0, 1):
        chunks = [c[k] for c in beside]
        # Whole files, cut where both hold the same sentences.
        assert chunks[0].ref_start == 0 and chunks[-1].ref_end == len(files[0])
        assert chunks[0].pred_start == 0 and chunks[-1].pred_end == len(files[k + 1])
        for before, after in itertools.pairwise(chunks):
            assert before.ref_end == after.ref_start and before.pred_end == after.pred_start
        for c in chunks:
            ref = _sentences(files[0][c.ref_start : c.ref_end])
            assert ref == _sentences(files[k + 1][c.pred_start : c.pred_end]) and ref > 0


def test_the_side_by_side_plan_numbers_parts_as_each_systems_plan(runs: dict[str, Path]) -> None:
    from spanscore.engines import paired

    counters = []
    for system in ("a", "b"):
        step = api._evaluation(
            reference=str(runs["gold"]), predicted=str(runs[system]), format=None,
            reading=spanscore.Reading(format="conll"), scoring=spanscore.Scoring(), ci=None, resamples=10, seed=0,
            by=None, buckets=[], train=None, bucket_edges=None, keep_details=False, documents=True,
            document_types=False, empty_documents="skip", rows=None, chunk_bytes=4000, jobs=1, engine=None,
            options={},
        )
        counters.append(next(step))
    together = paired.side_by_side(counters, api.LocalEngine(1))
    assert together is not None
    planned = list(together.plan())
    assert len(planned) > 5
    assert [p[0] for p in planned] == list(counters[0].plan())
    assert [p[1].part for p in planned] == list(counters[1].source.parts())
    assert all(p[1].first_unit == p[0].first_unit and p[1].units == p[0].units for p in planned)


@pytest.mark.parametrize(
    "pieces",
    [
        [np.array([[0, 3], [17, 2]]), np.zeros((0, 2), dtype=np.int64), np.array([[255, 1]])],
        [np.array([[0, 300]]), np.array([[1, 2]])],
        [np.array([[0, -1]]), np.array([[1, 2]])],
        [np.zeros((0, 2), dtype=np.int64)],
    ],
)
def test_group_rows_put_together_narrow_are_the_rows_narrowed(pieces: list[Any]) -> None:
    from spanscore.analysis import buckets

    got = buckets._concatenated_narrowest(pieces)
    whole = np.concatenate(pieces)
    assert np.array_equal(got, whole)
    assert got.dtype == buckets._narrowest(whole).dtype
    assert got.dtype == (np.int64 if not whole.size or whole.min() < 0 else np.min_scalar_type(int(whole.max())))

"""One process cuts and reads each chunk in one pass (``ConllSource.read_parts``,
``conll_plan.read_chunks``): the prediction is cut where as many lines end as in the reference's
part, and cut again at the sentence breaks, as planned, where that part does not hold the same
sentences. Checked here against the plan on files whose lines differ between the two sides (blank
lines, -DOCSTART- and comment lines only in one of them, carriage returns, lines of white space, a
byte order mark, no last newline), for every chunk size from a few sentences to the whole file: the
same report, the same rows and the same error; and the default chunk size, which depends on the
processes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import spanscore
from spanscore import api
from spanscore.engines.local import LocalEngine
from spanscore.errors import InputError
from spanscore.io import conll_plan
from spanscore.io.conll_plan import ONE_PROCESS_CHUNK, default_chunk
from spanscore.io.sources import ConllSource

TYPES = ("PER", "LOC", "ORG")


def _sentences(rng: random.Random, n: int) -> list[list[tuple[str, str, str]]]:
    """Sentences of (token, gold label, predicted label), the prediction right most of the time."""
    out = []
    for _ in range(n):
        sentence = []
        for _ in range(rng.randint(1, 9)):
            gold = rng.choice(["O", "O", f"B-{rng.choice(TYPES)}", f"I-{rng.choice(TYPES)}"])
            pred = gold if rng.random() < 0.8 else rng.choice(["O", f"B-{rng.choice(TYPES)}", f"I-{rng.choice(TYPES)}"])
            sentence.append((rng.choice(["a", "bb", "Ccc", "d-d", "#", "-x"]), gold, pred))
        out.append(sentence)
    return out


def _write(path: Path, sentences: list[list[tuple[str, str, str]]], side: int, rng: random.Random, odd: str) -> None:
    """One side's file; ``odd`` names what lines this side has that the other may not."""
    lines: list[str] = []
    for k, sentence in enumerate(sentences):
        if odd == "docstart" and k % 7 == 0:
            lines += ["-DOCSTART- O", ""]
        if odd == "comments" and k % 5 == 0:
            lines.append(f"# sent_id = {k}")
        lines += [f"{t} {labels[side]}" for t, *labels in [(w, g, p) for w, g, p in sentence]]
        blank = "" if odd != "white" or k % 4 else " \t"
        lines.append(blank)
        if odd == "blanks" and rng.random() < 0.3:
            lines += [""] * rng.randint(1, 3)
    end = "\r\n" if odd == "crlf" else "\n"
    text = end.join(lines) + end
    if odd == "no-last-newline":
        text = text.rstrip("\n")
    if odd == "trailing":
        text += "\n\n\n"
    data = text.encode()
    if odd == "bom":
        data = b"\xef\xbb\xbf" + data
    path.write_bytes(data)


# Which side has the odd lines: the reference, the prediction or both.
LAYOUTS = [
    ("plain", "plain"),
    ("plain", "blanks"),
    ("blanks", "plain"),
    ("docstart", "docstart"),
    ("docstart", "plain"),
    ("plain", "comments"),
    ("comments", "comments"),
    ("white", "plain"),
    ("crlf", "crlf"),
    ("plain", "crlf"),
    ("bom", "plain"),
    ("no-last-newline", "trailing"),
    ("trailing", "plain"),
]


def _pair(tmp_path: Path, ref_odd: str, pred_odd: str, seed: int = 0) -> tuple[Path, Path]:
    rng = random.Random(seed)
    sentences = _sentences(rng, 300)
    gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
    _write(gold, sentences, 0, rng, ref_odd)
    _write(pred, sentences, 1, rng, pred_odd)
    return gold, pred


def _planned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every part planned first and read as planned, as several processes read them."""
    monkeypatch.setattr(ConllSource, "read_parts", lambda self: None)


def _outputs(gold: Path, pred: Path, chunk: int, **kw: Any) -> tuple[Any, ...]:
    r = spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=chunk, jobs=1, **kw)
    return r.to_dict(), [list(r.pair_rows(c)) for c in ("strict", "overlap")]


@pytest.mark.parametrize(("ref_odd", "pred_odd"), LAYOUTS)
def test_read_once_gives_the_plans_report_and_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ref_odd: str, pred_odd: str
) -> None:
    gold, pred = _pair(tmp_path, ref_odd, pred_odd)
    size = gold.stat().st_size
    chunks = [60, 700, 3000, size // 3, size + 1]
    read = [_outputs(gold, pred, c, keep_details=True) for c in chunks]
    with monkeypatch.context() as m:
        _planned(m)
        planned = [_outputs(gold, pred, c, keep_details=True) for c in chunks]
    assert read == planned
    # Documents as units (per-document rows cut across chunks) and report rows numbered by sentence.
    docs = [spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=c, documents=True).to_dict() for c in chunks]
    assert all(d == docs[0] for d in docs)


@pytest.mark.parametrize("chunk", [60, 700, 5000])
def test_read_once_raises_the_plans_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    gold, pred = _pair(tmp_path, "plain", "blanks", seed=3)
    lines = pred.read_text().split("\n")
    broken = [
        ("a token changed", lambda ls: [*ls[:400], "zzz O", *ls[401:]] if ls[400] else [*ls[:401], "zzz O", *ls[402:]]),
        ("a sentence joined", lambda ls: [line for k, line in enumerate(ls) if not (k > 500 and line == "")][:-1]),
        ("a label empty", lambda ls: [*ls[:600], (ls[600] or ls[601]).split()[0] + " ", *ls[601:]]),
    ]
    for what, change in broken:
        pred.write_text("\n".join(change(lines)) + "\n")
        with pytest.raises(InputError) as read:
            spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=chunk, jobs=1)
        with monkeypatch.context() as m:
            _planned(m)
            with pytest.raises(InputError) as planned:
                spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=chunk, jobs=1)
        assert str(read.value) == str(planned.value), what


def test_the_prediction_is_cut_by_lines_where_both_files_hold_the_same_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The usual pair is cut without searching the prediction for breaks: only its last part, which
    takes what is left, is found by ``by_breaks``; a prediction with other blank lines is cut by
    its breaks where lines do not tell."""
    calls = []
    by_breaks = conll_plan._Scanner.by_breaks

    def counted(self: Any, k: int, hint: int, margin: int = 4) -> tuple[int, int, int]:
        calls.append(k)
        return by_breaks(self, k, hint, margin)

    monkeypatch.setattr(conll_plan._Scanner, "by_breaks", counted)
    gold, pred = _pair(tmp_path, "plain", "plain")
    source = ConllSource(str(gold), str(pred), spanscore.Reading(), chunk_bytes=700)
    parts = list(source.read_parts() or [])
    assert len(parts) > 10 and calls == [0]
    assert [c for c, _ in parts] == conll_plan.plan_chunks(gold, pred, 700)
    calls.clear()
    gold, pred = _pair(tmp_path, "plain", "blanks")
    parts = list(ConllSource(str(gold), str(pred), spanscore.Reading(), chunk_bytes=700).read_parts() or [])
    planned = conll_plan.plan_chunks(gold, pred, 700)
    assert len(calls) > 1 and [c.ref_end for c, _ in parts] == [c.ref_end for c in planned]


def test_the_default_chunk_depends_on_the_processes_and_the_report_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert default_chunk(1) == ONE_PROCESS_CHUNK == 1 << 20 and default_chunk(2) == default_chunk(0) == 1 << 19
    sizes = []
    opened = api.open_source

    def spy(*args: Any) -> Any:
        source = opened(*args)
        sizes.append(source.chunk_bytes)
        return source

    monkeypatch.setattr(api, "open_source", spy)
    gold, pred = _pair(tmp_path, "docstart", "plain")
    one = spanscore.evaluate(reference=gold, predicted=pred).to_dict()
    two = spanscore.evaluate(reference=gold, predicted=pred, jobs=2).to_dict()
    engine = spanscore.evaluate(reference=gold, predicted=pred, engine=LocalEngine(1)).to_dict()
    given = spanscore.evaluate(reference=gold, predicted=pred, chunk_bytes=100).to_dict()
    assert sizes == [1 << 20, 1 << 19, 1 << 20, 100]
    assert one == two == engine == given

"""``compare --buckets FIELD`` of CoNLL systems read side by side pairs the documents whole in a
chunk (all but its first and last) where the chunk is counted, their field value being known
there: only the cut documents' rows (and values) come back to the evaluating process, which
pairs those and merges histograms. The comparison must be the one made of the whole
per-document tables, in the same group order (values in order of first appearance, also where a
cut document's value comes after a later chunk's inner documents were counted), whatever the
chunks and processes; and what comes back per part must not grow with the part's documents."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from test_compare_field_buckets import OPTIONS, _whole, corpora  # noqa: F401 (a fixture)
from test_field_labels import _documents

import spanscore
from spanscore import api
from spanscore.analysis import breakdown
from spanscore.analysis import buckets as bucket_scores


def _other(pred: Path, out: Path, seed: int) -> Path:
    rng = random.Random(seed)
    lines = []
    for line in pred.read_text(encoding="utf-8").splitlines():
        cells = line.split(" ")
        if len(cells) == 2 and not line.startswith("-DOCSTART-") and rng.random() < 1 / 5:
            line = f"{cells[0]} O"
        lines.append(line)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_values_anywhere_in_cut_documents_give_the_whole_tables(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-DOCSTART- documents whose values lie in any sentence (or nowhere), some of 20 sentences cut
    by small chunks several times: every chunk size and process count gives the comparison of the
    whole tables, its groups in the whole file's order."""
    ref, pred = tmp_path / "ref.conll", tmp_path / "pred.conll"
    _documents(ref, pred, seed=seed, docs=160)
    other = _other(pred, tmp_path / "other.conll", seed)
    names = ["a", "b"]
    _, tests, groups = _whole(ref, [pred, other], names, ["source", "length"], True)
    order = list(dict.fromkeys(breakdown.conll_field_values(ref, "source").values()))
    assert [g["bucket"] for g in groups["source"]] == order and len(order) > 4
    for chunk, jobs in ((300, 1), (700, 2), (2500, 1), (1 << 19, 2)):
        monkeypatch.setattr(api, "DEFAULT_CHUNK", chunk)
        got = spanscore.compare(
            reference=ref, systems=[pred, other], names=names, buckets=["source", "length"], per_type=True,
            jobs=jobs, **OPTIONS,
        )
        assert got.groups == groups, (chunk, jobs)
        assert got.tests.intervals == tests.intervals and got.tests.comparisons == tests.comparisons


def test_a_value_known_late_keeps_its_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long document whose only value is in its last sentence, then short documents of other
    values that a chunk holds whole: the late value's group comes before theirs, as in the file."""
    ref, pred = tmp_path / "ref.conll", tmp_path / "pred.conll"
    lines = ["-DOCSTART- O", "", "# source = first", "a B-PER", ""]
    lines += ["-DOCSTART- O", ""]
    for k in range(30):
        if k == 29:
            lines.append("# source = late")
        lines += [f"w{k} B-LOC", "x O", ""]
    for k in range(12):
        lines += ["-DOCSTART- O", "", f"# source = v{k % 3}", f"c{k} B-PER", "d O", ""]
    ref.write_text("\n".join(lines), encoding="utf-8")
    pred.write_text("\n".join(line for line in lines if not line.startswith("#")), encoding="utf-8")
    other = _other(pred, tmp_path / "other.conll", 3)
    _, _, groups = _whole(ref, [pred, other], ["a", "b"], ["source"], False)
    assert [g["bucket"] for g in groups["source"]] == ["first", "late", "v0", "v1", "v2"]
    paired = []
    call = bucket_scores._JoinedGroups.__call__

    def watched(self: Any, items: Any) -> Any:
        results, inner = call(self, items)
        paired.append(inner is not None and inner.by_field is not None)
        return results, inner

    monkeypatch.setattr(bucket_scores._JoinedGroups, "__call__", watched)
    for chunk in (40, 90, 200, 400):
        monkeypatch.setattr(api, "DEFAULT_CHUNK", chunk)
        got = spanscore.compare(
            reference=ref, systems=[pred, other], names=["a", "b"], buckets=["source"], jobs=1, **OPTIONS
        )
        assert got.groups["source"] == groups["source"], chunk
    assert any(paired)  # some chunks held whole documents, paired where they were counted


def test_only_cut_documents_come_back(
    corpora: dict[str, tuple[Path, Path, Path]],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same 40 documents 2 and 40 times over, chunks of about 20 of them: each part that
    comes back to the evaluating process holds the rows and values of two documents at most (its
    first and last), so the rows received follow the parts, not the documents."""
    monkeypatch.setattr(api, "DEFAULT_CHUNK", 16000)
    gold, a, b = corpora["documents"]
    parts = [p.read_text(encoding="utf-8").split("-DOCSTART-")[1:41] for p in (gold, a, b)]
    seen: list[tuple[int, int, int]] = []  # per part and system: documents, rows per group, values
    add = bucket_scores._Stream.add

    def watched(self: Any, part: Any, *args: Any, **kw: Any) -> Any:
        if part is not None and part.docs is not None:
            docs = part.docs
            groups = 0 if docs.type_rows is None else len(set(docs.type_rows.keys.tolist()))
            values = sum(int(r.keys.shape[0]) for n, r in part.buckets.items() if n.startswith(breakdown.LABELS))
            seen.append((int(docs.keys.shape[0]), groups, values))
        return add(self, part, *args, **kw)

    monkeypatch.setattr(bucket_scores._Stream, "add", watched)
    for copies in (2, 40):
        seen.clear()
        files = []
        for name, docs in zip(("r", "a", "b"), parts, strict=True):
            path = tmp_path / f"{name}{copies}"
            path.write_text("".join("-DOCSTART-" + d for d in docs * copies), encoding="utf-8")
            files.append(path)
        got = spanscore.compare(
            reference=files[0], systems=files[1:], buckets=["source", "length"], per_type=True, jobs=1, **OPTIONS
        )
        assert got.to_dict()["documents"] == 40 * copies
        assert seen and max(d for d, _, _ in seen) <= 2, seen
        assert max(g for _, g, _ in seen) <= 2
        assert max(v for _, _, v in seen) <= 2 * 2  # a cut document's values: two fields, first found each
        received = sum(d for d, _, _ in seen)
        assert received <= 2 * len(seen)
        # Each system's rows: a few per chunk, where every document's came back before.
        assert copies == 2 or received < 2 * 40 * copies // 4, received

"""A Hugging Face dataset saved with ``save_to_disk``: a ``tokens`` column and a tag column.

The tags (``tags``, default ``ner_tags``) are a sequence of ``ClassLabel`` (their names are the
labels) or of strings, decoded as spanscore decodes any label column (``labels``: the encoding, BIO
by default; ``repair``: what happens to an invalid transition, counted in ``ReadNotes.skipped`` as
"invalid transitions"). The text is the tokens joined by single spaces, offsets counted in it; the
tokens are kept with each document (``Document.tokens``). ``split`` picks a split of a DatasetDict
(it may be left out when there is one). The id is the ``id`` column where there is one, else the row
number.

``datasets`` is an optional dependency, imported only here.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError, OptionError
from ...runtime.optional import module, require
from ...stages.encoding import check_repair, decode, get_encoding, split_labels
from ..document import Document, Span
from ._base import Ids, ReadNotes, atomic_folder, make_doc, name_list, whitespace_tokens, writable


def _datasets(what: str) -> Any:
    require("datasets", what=what, extra="datasets")
    return module("datasets")


def read(
    path: str | Path,
    *,
    tags: str = "ner_tags",
    split: str | None = None,
    labels: str = "BIO",
    repair: str = "conlleval",
) -> tuple[list[Document], ReadNotes]:
    ds = _datasets("reading a Hugging Face dataset")
    spec = get_encoding(labels)
    policy = check_repair(repair)
    name = str(path)
    data = _load(ds, Path(path), split)
    features = data.features
    for column, option in (("tokens", None), (tags, "tags")):
        if column not in features:
            hint = f"; choose the tag column with {option}=" if option else ""
            raise InputError(f"no {column!r} column (columns: {', '.join(features)}){hint}", path=name)
    words_feature = getattr(features["tokens"], "feature", None)
    if not (isinstance(words_feature, ds.Value) and words_feature.dtype in ("string", "large_string")):
        raise InputError(f"column 'tokens' must be a sequence of strings, not {features['tokens']}", path=name)
    inner = getattr(features[tags], "feature", None)
    columns = data.select_columns([c for c in ("id", "tokens", tags) if c in features]).to_dict()
    rows_tokens: list[list[str]] = columns["tokens"]
    rows_tags: list[list[Any]] = columns[tags]
    if isinstance(inner, ds.ClassLabel):
        vocab = list(inner.names)
        ids_of = [np.asarray(row, dtype=np.int64) for row in rows_tags]
    elif isinstance(inner, ds.Value) and inner.dtype in ("string", "large_string"):
        missing = next((row for row, tags_of in enumerate(rows_tags) if None in tags_of), None)
        if missing is not None:
            raise InputError(f"row {missing}: a tag is missing (null)", path=name)
        vocab = sorted({tag for row in rows_tags for tag in row})
        index = {tag: k for k, tag in enumerate(vocab)}
        ids_of = [np.array([index[t] for t in row], dtype=np.int64) for row in rows_tags]
    else:
        raise InputError(
            f"column {tags!r} must be a sequence of ClassLabel or of strings, not {features[tags]}", path=name
        )

    notes = ReadNotes()
    lengths = np.array([len(row) for row in rows_tokens], dtype=np.int64)
    for row, (words, row_tags) in enumerate(zip(rows_tokens, rows_tags, strict=True)):
        if len(words) != len(row_tags):
            raise InputError(f"row {row}: {len(words)} tokens but {len(row_tags)} tags", path=name)
    ids = np.concatenate(ids_of) if ids_of else np.zeros(0, dtype=np.int64)
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    outside = np.flatnonzero((ids < 0) | (ids >= len(vocab)))
    if outside.shape[0]:  # datasets writes -1 for a missing ClassLabel
        row = int(np.searchsorted(bounds, outside[0], side="right") - 1)
        raise InputError(
            f"row {row}: tag {int(ids[outside[0]])} names no label (the ClassLabel has {len(vocab)})", path=name
        )
    decoded = decode(ids, bounds, split_labels(vocab, spec, path=name), spec, policy)
    if decoded.n_invalid:
        if policy == "none":
            first = int(np.concatenate((decoded.invalid_into, decoded.invalid_end)).min())
            row = int(np.searchsorted(bounds, first, side="right") - 1)
            raise InputError(
                f"row {row}: {decoded.n_invalid} invalid {spec.name} transitions in all (choose a repair= policy)",
                path=name,
            )
        notes.skip("invalid transitions", decoded.n_invalid)

    # Where each token starts and ends in its row's text (tokens joined by single spaces).
    sizes = np.fromiter((len(w) for words in rows_tokens for w in words), dtype=np.int64, count=int(bounds[-1]))
    before = np.cumsum(sizes + 1) - (sizes + 1)  # characters before each token, counted over all rows
    row_of = np.repeat(np.arange(len(rows_tokens)), lengths)
    char_start = before - before[bounds[:-1][row_of]] if len(sizes) else before
    char_end = char_start + sizes

    spans = decoded.spans
    per_row: list[list[Span]] = [[] for _ in rows_tokens]
    for first, after, typ, row in zip(
        spans.start.tolist(), spans.end.tolist(), spans.type.tolist(), spans.unit.tolist(), strict=True
    ):
        start, end = int(char_start[first]), int(char_end[after - 1])
        if start >= end:
            raise InputError(f"row {row}: a mention covers only empty tokens", path=name)
        per_row[row].append((start, end, spans.types[typ]))

    seen = Ids()
    docs = []
    for row, words in enumerate(rows_tokens):
        doc_id = str(columns["id"][row]) if "id" in columns else str(row)
        seen.add(doc_id, f"row {row}", functools.partial(_row_error, name, row))
        first, after = int(bounds[row]), int(bounds[row + 1])
        own = zip(char_start[first:after].tolist(), char_end[first:after].tolist(), strict=True)
        docs.append(make_doc(doc_id, " ".join(words), per_row[row], tokens=list(own)))
    return docs, notes


def _row_error(path: str, row: int, what: str) -> InputError:
    return InputError(f"row {row}: {what}", path=path)


def _load(ds: Any, root: Path, split: str | None) -> Any:
    if not root.is_dir():
        raise InputError("not a folder: a Hugging Face dataset is read from its save_to_disk folder", path=str(root))
    try:
        loaded = ds.load_from_disk(str(root))
    except (FileNotFoundError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"not a dataset saved with save_to_disk ({reason})", path=str(root)) from None
    if isinstance(loaded, ds.DatasetDict):
        splits = list(loaded)
        if split is None and len(splits) == 1:
            split = splits[0]
        if split is None or split not in loaded:
            asked = "" if split is None else f"no split {split!r}: "
            raise OptionError(f"{root}: {asked}the dataset has splits {', '.join(splits)}: choose one with split=")
        return loaded[split]
    if split is not None:
        raise OptionError(f"{root}: the dataset has no splits: leave split out")
    return loaded


def write(
    docs: Iterable[Document],
    path: str | Path,
    *,
    tags: str = "ner_tags",
    split: str | None = None,
    drop_fragments: bool = False,
) -> None:
    """A dataset of ``id``, ``tokens`` (each text split on whitespace) and BIO ``ClassLabel`` tags,
    saved with ``save_to_disk`` (as a DatasetDict of ``split`` where one is named).

    The text's whitespace is not kept (the format has only tokens), mentions are: refused are
    mentions whose boundary is not a token boundary, and overlapping or nested ones (one tag per
    token holds one mention)."""
    ds = _datasets("writing a Hugging Face dataset")
    checked = writable(docs, "hf-datasets", drop_fragments=drop_fragments)
    cut: list[str] = []
    overlapping: list[str] = []
    rows: dict[str, list[Any]] = {"id": [], "tokens": [], tags: []}
    tagged: list[list[tuple[str, str]]] = []
    for doc in checked:
        tokens = whitespace_tokens(doc.text)
        first = {s: k for k, (s, _) in enumerate(tokens)}
        last = {e: k for k, (_, e) in enumerate(tokens)}
        row = [("O", "")] * len(tokens)
        previous_end = -1
        for start, end, label in doc.spans:  # sorted by start
            if start < previous_end:
                overlapping.append(doc.id)
            previous_end = max(previous_end, end)
            if start not in first or end not in last:
                cut.append(doc.id)
                continue
            row[first[start]] = ("B", label)
            for k in range(first[start] + 1, last[end] + 1):
                row[k] = ("I", label)
        rows["id"].append(doc.id)
        rows["tokens"].append([doc.text[s:e] for s, e in tokens])
        tagged.append(row)
    problems = []
    if cut:
        problems.append(f"a mention boundary inside a token or on whitespace (documents {name_list(cut)})")
    if overlapping:
        problems.append(f"overlapping or nested mentions (documents {name_list(overlapping)})")
    if problems:
        raise OptionError(
            f"hf-datasets has one BIO tag per whitespace token, which cannot hold {'; nor '.join(problems)}"
        )
    types = sorted({label for doc in checked for _, _, label in doc.spans})
    names = ["O", *(f"{p}-{t}" for t in types for p in "BI")]
    index = {n: k for k, n in enumerate(names)}
    rows[tags] = [[index["O" if p == "O" else f"{p}-{t}"] for p, t in row] for row in tagged]
    listing = getattr(ds, "List", None) or ds.Sequence  # datasets 4 renamed Sequence (of a feature) to List
    features = ds.Features(
        {"id": ds.Value("string"), "tokens": listing(ds.Value("string")), tags: listing(ds.ClassLabel(names=names))}
    )
    dataset = ds.Dataset.from_dict(rows, features=features)
    if split is not None:
        dataset = ds.DatasetDict({split: dataset})
    with atomic_folder(path, "hf-datasets") as staging, _quiet(ds):
        dataset.save_to_disk(str(staging))


@contextlib.contextmanager
def _quiet(ds: Any) -> Iterator[None]:
    """No progress bars from a library call (they would be spanscore's output), then as before."""
    enabled = ds.is_progress_bar_enabled()
    ds.disable_progress_bars()
    try:
        yield
    finally:
        if enabled:
            ds.enable_progress_bars()

"""nervaluate 1.2.1's ``nervaluate.utils``: tags to entity dicts, and small helpers.

``collect_named_entities`` reads tags as nervaluate's loaders do, without their check: a tag that
starts an entity need not begin with ``B-`` or ``I-`` (its type is what follows its first two
characters).

>>> collect_named_entities(["O", "B-PER", "I-PER", "B-PER"])
[{'label': 'PER', 'start': 1, 'end': 2}, {'label': 'PER', 'start': 3, 'end': 3}]
>>> split_list(["a", "b", "", "c"])
[['a', 'b'], ['c']]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any

from ._columns import decode_tags, read_tags, tag_ids

__all__ = [
    "clean_entities",
    "collect_named_entities",
    "conll_to_spans",
    "find_overlap",
    "list_to_spans",
    "split_list",
]


def split_list(token: list[str], split_chars: list[str] | None = None) -> list[list[str]]:
    """Split a list into sublists at each item of ``split_chars`` (default: the empty string); a
    separator at the end leaves no empty sublist after it, two in a row leave one between them."""
    if split_chars is None:
        split_chars = [""]
    out: list[list[str]] = []
    chunk: list[str] = []
    for item in token:
        if item in split_chars:
            out.append(chunk)
            chunk = []
        else:
            chunk.append(item)
    if chunk:
        out.append(chunk)
    return out


def conll_to_spans(doc: str) -> list[list[dict[str, Any]]]:
    """The entities of each example of a ``token TAB tag`` string (examples split at empty lines)."""
    return list_to_spans([[token.split("\t")[1] for token in example] for example in split_list(doc.split("\n"))])


def list_to_spans(doc: list[list[str]]) -> list[list[dict[str, Any]]]:
    """The entities of each tag list as ``{"label", "start", "end"}`` dicts (ends inclusive)."""
    return spans_of(doc, check_starts=False)


def spans_of(doc: Sequence[Iterable[Any]], check_starts: bool) -> list[list[dict[str, Any]]]:
    """``list_to_spans``, decoded on arrays where every tag is a string."""
    docs = [tokens if isinstance(tokens, list) else list(tokens) for tokens in doc]
    got = tag_ids(docs)
    if got is not None and all(isinstance(tag, str) for tag in got[2]):
        columns = decode_tags(*got, check_starts=check_starts)
        bounds = columns.offsets.tolist()
        flat = [
            {"label": columns.labels[k], "start": s, "end": e}
            for k, s, e in zip(columns.label.tolist(), columns.start.tolist(), columns.end.tolist(), strict=True)
        ]
        return [flat[a:b] for a, b in pairwise(bounds)]
    return [
        [{"label": label, "start": s, "end": e} for label, s, e in read_tags(tokens, check_starts)] for tokens in docs
    ]


def collect_named_entities(tokens: list[str]) -> list[dict[str, Any]]:
    """The entities of one tag list as ``{"label", "start", "end"}`` dicts (ends inclusive)."""
    return list_to_spans([tokens])[0]


def find_overlap(true_range: range, pred_range: range) -> set[int]:
    """The values two ranges share.

    >>> find_overlap(range(1, 3), range(2, 4)), find_overlap(range(1, 3), range(3, 5))
    ({2}, set())
    """
    return set(true_range) & set(pred_range)


def clean_entities(ent: dict[str, Any]) -> dict[str, Any]:
    """Only the ``start``, ``end`` and ``label`` of an entity dict (prodigy's spans, say, carry
    more)."""
    return {"start": ent["start"], "end": ent["end"], "label": ent["label"]}

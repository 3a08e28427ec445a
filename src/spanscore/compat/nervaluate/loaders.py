"""nervaluate 1.2.1's ``nervaluate.loaders``: each input format read into entity lists.

The loaders read what nervaluate's read, raise what they raise (the first error in reading
order), and return the same entities. ``ConllLoader`` and ``ListLoader`` decode the tags with
spanscore's decoder (``_columns.decode_tags`` says how nervaluate's reading maps onto it).

>>> ListLoader().load([["O", "B-PER", "I-PER", "O"], ["B-LOC"]])
[[Entity(label='PER', start=1, end=2)], [Entity(label='LOC', start=0, end=0)]]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

from ._columns import Columns, decode_tags, from_triples, no_documents, read_tags, tag_ids
from ._errors import InputValueError
from .entities import Entity

__all__ = ["ConllLoader", "DataLoader", "DictLoader", "ListLoader"]

# What a loader gives the evaluator: columns, or (positions that are no 64-bit integers) entities.
Loaded = Columns | list[list[Entity]]


class DataLoader(ABC):
    """Reads one side of the input into a list of entity lists, one per document."""

    @abstractmethod
    def load(self, data: Any) -> list[list[Entity]]:
        """The entities of each document."""


class _ColumnLoader(DataLoader):
    """A loader that reads into columns; ``load`` makes the entities of them."""

    def load(self, data: Any) -> list[list[Entity]]:
        loaded = self._columns(data)
        return loaded.documents() if isinstance(loaded, Columns) else loaded

    @abstractmethod
    def _columns(self, data: Any) -> Loaded:
        """What ``load`` returns, as columns where it can."""


def _decoded(docs: Sequence[Sequence[str]]) -> Columns:
    got = tag_ids(docs)
    assert got is not None  # strings
    ids, lengths, vocab = got
    return decode_tags(ids, lengths, vocab)


class ConllLoader(_ColumnLoader):
    """A string of ``token TAB tag`` lines, documents separated by a blank line.

    A whitespace-only line is skipped, but counted as a token: it goes on with the entity before
    it (and an entity that runs to the end of its document ends at its last line).
    """

    def _columns(self, data: Any) -> Loaded:
        if not isinstance(data, str):
            raise InputValueError("ConllLoader expects string input")
        if not data:
            return []
        docs, error = _conll_tags(data, _tag_of_line)
        columns = _decoded(docs)  # raises for a bad tag before ``error``
        if error is not None:
            raise error
        return columns


def _tag_of_line(line: str) -> str:
    parts = line.split("\t", 2)
    if len(parts) < 2:
        raise InputValueError(f"Invalid CoNLL format: line '{line}' does not contain a tab separator")
    return parts[1]


def _conll_tags(data: str, tag_of: Any) -> tuple[list[list[str]], InputValueError | None]:
    """The tag of each line of each document, blank lines read as going on; and the error of the
    first line that ``tag_of`` refuses (the documents then stop before it)."""
    out: list[list[str]] = []
    for doc in data.rstrip().split("\n\n"):
        if not doc.strip():
            out.append([])
            continue
        tags: list[str] = []
        out.append(tags)
        for line in doc.split("\n"):
            if not line.strip():
                prev = tags[-1] if tags else "O"
                tags.append("O" if prev == "O" else "I-" + prev[2:])
                continue
            try:
                tags.append(tag_of(line))
            except InputValueError as error:
                return out, error
    return out, None


class ListLoader(_ColumnLoader):
    """A list of documents, each a list of tags (``O``, ``B-X``, ``I-X``)."""

    def _columns(self, data: Any) -> Loaded:
        if not isinstance(data, list):
            raise InputValueError("ListLoader expects list input")
        if not data:
            return []
        if all(issubclass(kind, list) for kind in set(map(type, data))):
            got = tag_ids(data)
            if got is not None and all(isinstance(tag, str) for tag in got[2]):
                return decode_tags(*got)
        # Something is wrong (a document that is no list, a tag that is no string): read as
        # nervaluate does, one tag at a time, to raise its first error.
        triples = []
        for doc in data:
            if not isinstance(doc, list):
                raise InputValueError("Each document must be a list of tags")
            triples.append(read_tags(_strings(doc), check_starts=True))
        return _from_triples(triples)


def _strings(doc: list[Any]) -> Iterator[str]:
    for tag in doc:
        if not isinstance(tag, str):
            raise InputValueError(f"Invalid tag type: {type(tag)}")
        yield tag


def _from_triples(triples: list[list[tuple[Any, Any, Any]]]) -> Loaded:
    columns = from_triples(triples)
    if columns is not None:
        return columns
    return [[Entity(*x) for x in doc] for doc in triples]


_REQUIRED_KEYS = {"label", "start", "end"}


def read_dicts(data: Any, check: Any = None) -> Loaded:
    """The entities of a list of documents of ``{"label", "start", "end"}`` dicts, with
    nervaluate's checks (and ``check``, called on each entity dict after them)."""
    if not isinstance(data, list):
        raise InputValueError("DictLoader expects list input")
    if not data:
        return []
    triples = []
    for doc in data:
        if not isinstance(doc, list):
            raise InputValueError("Each document must be a list of entity dictionaries")
        found = []
        for entity in doc:
            if not isinstance(entity, dict):
                raise InputValueError(f"Invalid entity type: {type(entity)}")
            if not all(key in entity for key in _REQUIRED_KEYS):
                raise InputValueError(f"Entity missing required keys: {_REQUIRED_KEYS}")
            label, start, end = entity["label"], entity["start"], entity["end"]
            if not isinstance(label, str):
                raise InputValueError("Entity label must be a string")
            if not isinstance(start, int) or not isinstance(end, int):
                raise InputValueError("Entity start and end must be integers")
            if check is not None:
                check(entity)
            found.append((label, start, end))
        triples.append(found)
    return _from_triples(triples)


class DictLoader(_ColumnLoader):
    """A list of documents, each a list of ``{"label", "start", "end"}`` dicts (ends inclusive)."""

    def _columns(self, data: Any) -> Loaded:
        return read_dicts(data)


def as_loaded(loaded: Loaded) -> Loaded:
    """``loaded``, with columns for no documents where it is an empty list."""
    return no_documents() if isinstance(loaded, list) and not loaded else loaded

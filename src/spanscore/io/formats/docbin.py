"""spaCy's DocBin (``.spacy``): the Docs a spaCy project trains and evaluates on.

Each Doc is a document: its text, its tokens (kept as ``Document.tokens``, so a predicted boundary
inside one is reported) and its mentions, ``doc.ents`` by default or the span group named by
``spans_key`` (span groups may overlap and nest; entities may not). The id is the Doc's
``user_data["id"]`` where the DocBin kept user data (spanscore's writer does), else its position in
the file ("0", "1", ...). The mentions of what is not read (the span groups when entities are, the
entities when a group is) are counted in ``ReadNotes.skipped``.

spaCy is an optional dependency (the extra ``spacy``), imported only here, when a DocBin is read
or written.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import InputError, OptionError, shorten
from ...runtime.optional import module, require
from ..document import Document, Span, text_tokens
from ..files import atomic_output, read_bytes
from ._base import Ids, ReadNotes, check_span, make_doc, name_list, writable

ID_KEY = "id"


def _spacy(what: str) -> Any:
    require("spacy", what=what, extra="spacy")
    return module("spacy.tokens")


def read(
    path: str | Path, *, spans_key: str | None = None, span_groups: str | None = None
) -> tuple[list[Document], ReadNotes]:
    """The Docs of the DocBin file: entities, or the span group ``spans_key``, or the span groups
    ``span_groups`` names (comma-separated) together, each mention keeping its group's name as
    its nesting level (``Document.levels``)."""
    if spans_key is not None and (not isinstance(spans_key, str) or not spans_key):
        raise OptionError(f"docbin: spans_key is the name of a span group, not {spans_key!r}")
    groups_named = _group_names(span_groups)
    if groups_named and spans_key is not None:
        raise OptionError("docbin: give one span group (spans_key) or several as levels (span_groups), not both")
    tokens = _spacy("reading a spaCy DocBin")
    name = str(path)
    data = read_bytes(path)
    try:
        docbin = tokens.DocBin(store_user_data=True).from_bytes(data)
        vocab = module("spacy.vocab").Vocab()
        docs = list(docbin.get_docs(vocab))
    except Exception as exc:  # zlib, msgpack and spaCy raise many kinds on a file that is no DocBin
        raise InputError(
            f"not a spaCy DocBin (.spacy) file ({type(exc).__name__}): write one with DocBin.to_disk or spacy convert",
            path=name,
        ) from None
    if spans_key is not None and docs and not any(spans_key in doc.spans for doc in docs):
        groups = sorted({key for doc in docs for key in doc.spans})
        there = (
            f"its span groups are {name_list(groups)}"
            if groups
            else "its Docs have no span groups (read doc.ents: leave spans_key out)"
        )
        raise OptionError(f"{name}: no span group {spans_key!r}: {there}")
    notes = ReadNotes()
    seen = Ids()
    out = []
    for k, doc in enumerate(docs):
        doc_id = doc.user_data.get(ID_KEY) if isinstance(doc.user_data, dict) else None
        doc_id = doc_id if isinstance(doc_id, str) else str(k)

        def fail(what: str, k: int = k) -> InputError:
            return InputError(f"Doc {k}: {what}", path=name)

        seen.add(doc_id, f"Doc {k}", fail)
        levels: list[str] = []
        if groups_named:
            chosen = [s for key in groups_named for s in doc.spans.get(key, [])]
            levels = [key for key in groups_named for _ in doc.spans.get(key, [])]
            notes.skip("entities (doc.ents; read without span_groups)", len(doc.ents))
            others = sum(len(g) for key, g in doc.spans.items() if key not in groups_named)
            notes.skip("mentions in other span groups", others)
        elif spans_key is None:
            chosen = list(doc.ents)
            notes.skip("mentions in span groups (read one with spans_key=)", sum(len(g) for g in doc.spans.values()))
        else:
            chosen = list(doc.spans[spans_key]) if spans_key in doc.spans else []
            notes.skip("entities (doc.ents; read without spans_key)", len(doc.ents))
            others = sum(len(g) for key, g in doc.spans.items() if key != spans_key)
            notes.skip("mentions in other span groups", others)
        text = str(doc.text)
        spans: list[Span] = [
            check_span(int(s.start_char), int(s.end_char), str(s.label_), text, f"mention {j}", fail)
            for j, s in enumerate(chosen)
        ]
        own = [(int(t.idx), int(t.idx) + len(t.text)) for t in doc if t.text]
        out.append(make_doc(doc_id, text, spans, tokens=own, levels=levels))
    return out, notes


def _group_names(span_groups: object) -> tuple[str, ...]:
    """The span groups read as levels. A group that a file lacks is read as empty there (a
    prediction may have none at a level); the mentions of the groups not named are counted in
    ``ReadNotes.skipped``, and an evaluation refuses a level that neither side has."""
    if span_groups is None:
        return ()
    names = tuple(n.strip() for n in span_groups.split(",")) if isinstance(span_groups, str) else ()
    if not names or not all(names) or len(set(names)) < len(names):
        raise OptionError(f"docbin: span_groups names span groups, each once, separated by commas, not {span_groups!r}")
    return names



def write(
    docs: Iterable[Document], path: str | Path, *, spans_key: str | None = None, drop_fragments: bool = False
) -> None:
    """A DocBin file of one Doc per document, its id in ``user_data["id"]``: the mentions as
    entities (``doc.ents``, which cannot overlap: overlapping mentions are refused, naming one),
    or as the span group ``spans_key`` (which holds overlapping and nested mentions).

    The Doc's tokens are the document's own where it has them (else its words and punctuation,
    ``text_tokens``), cut where a mention starts or ends inside one, so every mention is whole
    tokens and its characters are kept exactly."""
    checked = writable(docs, "docbin", drop_fragments=drop_fragments)
    if spans_key is not None and (not isinstance(spans_key, str) or not spans_key):
        raise OptionError(f"docbin: spans_key is the name of a span group, not {spans_key!r}")
    if spans_key is None:
        for doc in checked:
            _no_overlap(doc)
    tokens = _spacy("writing a spaCy DocBin")
    vocab = module("spacy.vocab").Vocab()
    docbin = tokens.DocBin(store_user_data=True)
    for doc in checked:
        words, spaces = _words(doc)
        made = tokens.Doc(vocab, words=words, spaces=spaces)
        if made.text != doc.text:  # the cuts cover the text: a difference is a bug, never a silent change
            raise OptionError(f"docbin: document {shorten(doc.id)}: its text could not be cut into spaCy tokens")
        spans = []
        for start, end, label in doc.spans:
            span = made.char_span(start, end, label=label)
            if span is None:
                raise OptionError(
                    f"docbin: document {shorten(doc.id)}: mention {start}..{end} {label} is not whole tokens"
                )
            spans.append(span)
        if spans_key is None:
            made.ents = spans
        else:
            made.spans[spans_key] = spans
        made.user_data[ID_KEY] = doc.id
        docbin.add(made)
    payload = docbin.to_bytes()
    with atomic_output(path) as handle:
        handle.write(payload)


def _no_overlap(doc: Document) -> None:
    previous: Span | None = None
    for span in doc.spans:  # sorted by start
        if previous is not None and span[0] < previous[1]:
            raise OptionError(
                f"docbin: document {shorten(doc.id)}: mention {span[0]}..{span[1]} {span[2]} overlaps"
                f" {previous[0]}..{previous[1]} {previous[2]}, and a Doc's entities cannot overlap: write the"
                " mentions to a span group (spans_key=NAME; on the command line --to-option spans_key=NAME)"
            )
        if previous is None or span[1] > previous[1]:
            previous = span


_WHITESPACE = re.compile(r"\s+")


def _words(doc: Document) -> tuple[list[str], list[bool]]:
    """spaCy's words and their trailing spaces for the text: cut at every token, mention and
    whitespace boundary; a single space after a word is that word's trailing space, any other
    white space a token of its own (as spaCy's tokenizer makes it)."""
    text = doc.text
    base = doc.tokens if doc.tokens is not None else text_tokens(text)
    cuts = {0, len(text)}
    for start, end in base:
        cuts.update((start, end))
    for start, end, _ in doc.spans:
        cuts.update((start, end))
    for m in _WHITESPACE.finditer(text):
        cuts.update(m.span())
    points = sorted(c for c in cuts if 0 <= c <= len(text))
    starts = {s for s, _, _ in doc.spans}
    ends = {e for _, e, _ in doc.spans}
    words: list[str] = []
    spaces: list[bool] = []
    for a, b in itertools.pairwise(points):
        piece = text[a:b]
        # A lone space after a word goes as its trailing space, unless a mention starts on it or ends after it.
        if piece == " " and words and not spaces[-1] and not words[-1].isspace() and a not in starts and b not in ends:
            spaces[-1] = True
            continue
        words.append(piece)
        spaces.append(False)
    return words, spaces


__all__ = ["read", "write"]

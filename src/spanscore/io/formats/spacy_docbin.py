"""spaCy's binary corpus format: a ``.spacy`` file of ``DocBin`` (what ``spacy convert`` writes,
what ``spacy train`` reads, and how a pipeline's output is kept: ``DocBin(docs=nlp.pipe(texts))``).

Each document's mentions are its ``doc.ents``, or, with ``spans_key``, the span group
``doc.spans[spans_key]`` (a ``spancat`` pipeline's, overlapping mentions allowed); a key no
document has is refused, naming the keys present. The document's tokens are kept
(``Document.tokens``): predicted boundaries are checked against them. The id is the document's
``user_data["id"]`` where the file stored it, else its position in the file, from 1. Needs the
``spacy`` extra.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import InputError, OptionError, shorten
from ...runtime.optional import module, require
from ..document import Document
from ..files import atomic_output, read_bytes
from ._base import Ids, ReadNotes, check_span, make_doc, name_list, writable


def _spacy(what: str) -> tuple[Any, Any]:
    """spaCy and its ``tokens`` module (DocBin, Doc)."""
    require("spacy", what=what, extra="spacy")
    return module("spacy"), module("spacy.tokens")


def read(path: str | Path, *, spans_key: str | None = None) -> tuple[list[Document], ReadNotes]:
    name = str(path)
    if spans_key is not None and (not isinstance(spans_key, str) or not spans_key):
        raise OptionError(f"spacy: spans_key is the name of a span group (text), not {spans_key!r}")
    spacy, tokens_module = _spacy("reading a spaCy DocBin")
    data = read_bytes(path)
    try:
        docs = list(tokens_module.DocBin().from_bytes(data).get_docs(spacy.blank("xx").vocab))
    except Exception as exc:  # spaCy raises bare ValueErrors, zlib and msgpack errors on a file that is not one
        raise InputError(
            f"not a spaCy DocBin (.spacy) file ({type(exc).__name__}: {shorten(str(exc), 80)})", path=name
        ) from None
    if not docs:
        raise InputError("the DocBin holds no documents", path=name)
    if spans_key is not None and not any(spans_key in doc.spans for doc in docs):
        keys = sorted({k for doc in docs for k in doc.spans})
        have = f"its span groups: {name_list(keys)}" if keys else "it has no span groups (its mentions are doc.ents)"
        raise OptionError(f"{name}: spans_key={spans_key!r} names no span group of the file; {have}")
    notes = ReadNotes()
    ids = Ids()
    out = []
    for k, doc in enumerate(docs):
        doc_id = doc.user_data.get("id", k + 1) if isinstance(doc.user_data, dict) else k + 1
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
            doc_id = k + 1
        where = f"document {k + 1}"

        def fail(what: str, where: str = where) -> InputError:
            return InputError(f"{where}: {what}", path=name)

        ids.add(str(doc_id), where, fail)
        mentions = doc.spans[spans_key] if spans_key is not None and spans_key in doc.spans else doc.ents
        if spans_key is not None and spans_key not in doc.spans:
            notes.skip(f"documents without span group {spans_key}")
            mentions = []
        spans = [
            check_span(m.start_char, m.end_char, m.label_, doc.text, f"mention {j}", fail)
            for j, m in enumerate(mentions)
        ]
        tokens = [(t.idx, t.idx + len(t.text)) for t in doc]
        out.append(make_doc(str(doc_id), doc.text, spans, tokens=tokens))
    return out, notes


def write(
    docs: Iterable[Document], path: str | Path, *, spans_key: str | None = None, drop_fragments: bool = False
) -> None:
    """A DocBin of the documents, tokenised as their own tokens where the text is those tokens
    joined by single spaces or none, else by spaCy's language-neutral tokenizer; mentions as
    ``doc.ents`` (or the span group ``spans_key``, which may overlap). A mention whose boundary
    falls inside a token, or mentions that overlap as ``doc.ents``, are refused."""
    spacy, tokens_module = _spacy("writing a spaCy DocBin")
    checked = writable(docs, "spacy", drop_fragments=drop_fragments)
    nlp = spacy.blank("xx")
    out = tokens_module.DocBin(store_user_data=True)
    for document in checked:
        doc = _tokenised(tokens_module, nlp, document)
        spans = []
        for start, end, label in document.spans:
            span = doc.char_span(start, end, label=label, alignment_mode="strict")
            if span is None:
                raise OptionError(
                    f"spacy: document {shorten(document.id)}: {label} {start}..{end} does not start and end"
                    " between tokens"
                )
            spans.append(span)
        if spans_key is not None:
            doc.spans[spans_key] = spans
        else:
            try:
                doc.ents = spans
            except ValueError:
                raise OptionError(
                    f"spacy: document {shorten(document.id)} has overlapping mentions, which doc.ents cannot"
                    " hold: write them to a span group (spans_key=)"
                ) from None
        doc.user_data["id"] = document.id
        out.add(doc)
    with atomic_output(path) as handle:
        handle.write(out.to_bytes())


def _tokenised(tokens_module: Any, nlp: Any, document: Document) -> Any:
    tokens = list(document.tokens or ())
    if tokens:
        words = [document.text[s:e] for s, e in tokens]
        gaps = [document.text[e:s] for (_, e), (s, _) in itertools.pairwise(tokens)]
        tail = document.text[tokens[-1][1] :]
        if tokens[0][0] == 0 and all(g in ("", " ") for g in gaps) and tail in ("", " "):
            spaces = [g == " " for g in gaps] + [tail == " "]
            return tokens_module.Doc(nlp.vocab, words=words, spaces=spaces)
    return nlp.make_doc(document.text)

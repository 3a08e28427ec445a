"""Prodigy's JSONL (``prodigy db-out``): one task per line, ``{"text", "tokens", "spans",
"_input_hash", "answer", "meta"}``.

A span's character offsets (``start``, ``end``) are used when it has them; a span with token
offsets only is converted through ``tokens`` (``token_end`` is inclusive, as in Prodigy). Records
answered ``reject`` or ``ignore`` are left out and counted ("rejected", "ignored"), so are other
sessions' when ``session`` picks one (``_session_id``; in a ``review`` export, the version of each
input that session gave, from ``versions``), and spans that carry an answer of their own
other than ``accept`` (binary annotation merged into one task). ``relations`` are counted, not
read. The id is ``meta["id"]`` where there is one, else ``_input_hash``; the same input annotated
twice (two sessions, a binary ``ner.teach`` session, an input imported twice) is an error naming
both lines, unless ``session`` chooses or ``dedupe`` says which to keep (``first``, ``last``, or
``merge``: the mentions of every accepted record, as a binary session means them).

The task's ``tokens`` are kept with its document (``Document.tokens``): predicted boundaries are
checked against them. Where the task has tokens, a character boundary strictly inside a token, and
character offsets that disagree with the span's own token offsets, are listed in
``ReadNotes.misaligned``; the character offsets are kept as they are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import InputError, OptionError
from ..document import Document, Span, text_tokens
from ..files import atomic_output
from ..jsonl import json_objects
from ._base import (
    Collected,
    ReadNotes,
    check_dedupe,
    check_file_encoding,
    check_span,
    cut_tokens,
    make_doc,
    name_list,
    no_surrogates,
    writable,
)

_LEFT_OUT = {"reject": "rejected", "ignore": "ignored"}


def read(
    path: str | Path, *, session: str | None = None, dedupe: str | None = None
) -> tuple[list[Document], ReadNotes]:
    name = str(path)
    mode = check_dedupe(dedupe, "prodigy")
    if session is not None and not isinstance(session, str):
        raise OptionError(f"prodigy: session is a session id (text, as _session_id gives it), not {session!r}")
    check_file_encoding(path)
    notes = ReadNotes()
    docs = Collected(mode)
    sessions: dict[str, None] = {}
    chosen = 0
    for number, obj in json_objects(path):

        def fail(what: str, number: int = number) -> InputError:
            return InputError(what, path=name, line=number)

        meta = obj.get("meta")
        doc_id = meta["id"] if isinstance(meta, dict) and "id" in meta else obj.get("_input_hash")
        if session is not None:
            own = _of_session(obj, session, sessions)
            if own is None:
                notes.leave_out(doc_id, "other sessions")
                continue
            chosen += 1
            obj = own
        answer = obj.get("answer")
        if answer in _LEFT_OUT:
            notes.leave_out(doc_id, _LEFT_OUT[answer])
            continue
        text = obj.get("text")
        if not isinstance(text, str):
            raise fail('missing the text: expected a "text" string')
        no_surrogates(text, "the text", fail)
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
            raise fail('no id: expected "meta": {"id": ...} or an "_input_hash" (a string or an integer)')
        tokens = _tokens(obj.get("tokens"), text, fail)
        spans = obj.get("spans") or []
        if not isinstance(spans, list):
            raise fail("spans must be a list")
        relations = obj.get("relations")
        notes.skip("relations", len(relations) if isinstance(relations, list) else 0)
        where = {"file": name, "line": number, "id": str(doc_id)}
        ordered = sorted(tokens) if tokens else None
        starts = [s for s, _ in ordered] if ordered else None
        kept = []
        for k, span in enumerate(spans):
            own = span.get("answer") if isinstance(span, dict) else None
            if own in _LEFT_OUT:
                notes.skip(f"{_LEFT_OUT[own]} spans")
                continue
            kept.append(_span(k, span, text, tokens, ordered, starts, notes, where, fail))
        doc = make_doc(str(doc_id), text, kept, line=number, tokens=tokens)
        docs.add(doc, f"line {number}", fail, notes)
    if session is not None and not chosen and sessions:
        raise OptionError(f"{name}: no record of session={session!r}; the file's sessions: {name_list(sessions)}")
    return docs.docs, notes


def _of_session(obj: dict[str, Any], session: str, seen: dict[str, None]) -> dict[str, Any] | None:
    """The record as ``session`` answered it, or None: in a ``review`` export the version that
    session gave (each version lists its ``sessions``; the record's own spans are the reviewer's
    decision, whatever its ``_session_id`` says), else the record itself where it is that
    session's."""
    own = obj.get("_session_id")
    if isinstance(own, str):
        seen[own] = None
    versions = obj.get("versions")
    found = None
    for version in versions if isinstance(versions, list) else []:
        if not isinstance(version, dict):
            continue
        names = version.get("sessions")
        names = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
        if isinstance(version.get("_session_id"), str):
            names.append(version["_session_id"])
        seen.update(dict.fromkeys(names))
        if found is None and session in names:
            found = version
    if found is not None:
        # A version keeps its own text, tokens and spans; the record's meta names the input.
        return {**obj, **found}
    return obj if own == session else None


def _tokens(raw: Any, text: str, fail: Any) -> list[tuple[int, int]] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise fail("tokens must be a list")
    tokens = []
    for k, token in enumerate(raw):
        if not isinstance(token, dict):
            raise fail(f"token {k} must be an object with start and end")
        if token.get("id", k) != k:
            raise fail(f"token {k} has id {token.get('id')!r}: tokens must be numbered in order from 0")
        start, end = token.get("start"), token.get("end")
        if type(start) is not int or type(end) is not int or not 0 <= start <= end <= len(text):
            raise fail(f"token {k}: need 0 <= start <= end <= {len(text)} (text length), got {start!r}..{end!r}")
        tokens.append((start, end))
    return tokens


def _span(
    k: int,
    span: Any,
    text: str,
    tokens: list[tuple[int, int]] | None,
    ordered: list[tuple[int, int]] | None,
    starts: list[int] | None,
    notes: ReadNotes,
    where: dict[str, Any],
    fail: Any,
) -> Span:
    what = f"span {k}"
    if not isinstance(span, dict):
        raise fail(f"{what} must be an object")
    by_tokens = None
    if "token_start" in span or "token_end" in span:
        first, last = span.get("token_start"), span.get("token_end")
        if tokens is None:
            raise fail(f"{what} has token offsets but the task has no tokens")
        if type(first) is not int or type(last) is not int or not 0 <= first <= last < len(tokens):
            raise fail(f"{what}: need 0 <= token_start <= token_end < {len(tokens)} (tokens), got {first!r}..{last!r}")
        by_tokens = (tokens[first][0], tokens[last][1])
    if "start" in span or "end" in span:
        start, end = span.get("start"), span.get("end")
    elif by_tokens is not None:
        start, end = by_tokens
    else:
        raise fail(f"{what} has neither start and end nor token_start and token_end")
    result = check_span(start, end, span.get("label"), text, what, fail)
    if by_tokens is not None and by_tokens != (result[0], result[1]):
        notes.misaligned.append(
            {
                **where,
                "start": result[0],
                "end": result[1],
                "label": result[2],
                "what": f"{what}: characters {result[0]}..{result[1]} but tokens"
                f" {span['token_start']}..{span['token_end']} cover {by_tokens[0]}..{by_tokens[1]}:"
                " the character offsets are kept",
            }
        )
    cut = cut_tokens(result[0], result[1], ordered, starts) if ordered else None
    if cut is not None:
        notes.misaligned.append(
            {
                **where,
                "start": result[0],
                "end": result[1],
                "label": result[2],
                **cut,
                "what": f"{what}: its {cut['boundary']} falls inside a token: kept, not snapped",
            }
        )
    return result


def write(docs: Iterable[Document], path: str | Path, *, drop_fragments: bool = False) -> None:
    """Accepted tasks with ``meta["id"]``, ``tokens`` (the document's own, else its words and
    punctuation apart, as spaCy splits them), and spans with character offsets (and token offsets
    where both boundaries fall between tokens). Prodigy sets the hashes when the file is imported
    (``db-in``)."""
    checked = writable(docs, "prodigy", drop_fragments=drop_fragments)
    with atomic_output(path) as handle:
        for doc in checked:
            handle.write(json.dumps(_task(doc), ensure_ascii=False).encode("utf-8") + b"\n")


def _task(doc: Document) -> dict[str, Any]:
    text = doc.text
    tokens = list(doc.tokens) if doc.tokens is not None else text_tokens(text)
    first = {s: k for k, (s, _) in enumerate(tokens)}
    last = {e: k for k, (_, e) in enumerate(tokens)}
    spans = []
    for start, end, label in doc.spans:
        span: dict[str, Any] = {"start": start, "end": end, "label": label}
        if start in first and end in last:
            span.update(token_start=first[start], token_end=last[end])
        spans.append(span)
    return {
        "text": text,
        "tokens": [
            {"text": text[s:e], "start": s, "end": e, "id": k, "ws": e < len(text) and text[e].isspace()}
            for k, (s, e) in enumerate(tokens)
        ],
        "spans": spans,
        "meta": {"id": doc.id},
        "answer": "accept",
    }

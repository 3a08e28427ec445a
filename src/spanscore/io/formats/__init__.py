"""Annotation tools' export formats, read into one document model and written back from it.

Every format is a module named for it, with ``read(path, **options) -> (docs, notes)`` and
``write(docs, path, **options)``; ``READERS`` and ``WRITERS`` hold them by name, and ``read`` and
``write`` here check the options and call them. Any format converts to any other through
``Document`` (``io.document``; spanscore's own JSONL is the format named ``"jsonl"``).
``read_documents`` is how scoring reads one side of an evaluation, with what the reader skipped as
``Report.read`` shows it, and ``misaligned_summary`` what it shows of predicted boundaries inside
reference tokens.

=================  =====================================================================
``brat``           a folder of ``NAME.txt`` + ``NAME.ann`` (BRAT standoff)
``label-studio``   Label Studio's JSON export (a list of tasks)
``doccano``        doccano's JSONL export for sequence labelling
``prodigy``        Prodigy's JSONL (``db-out``)
``hf-datasets``    a Hugging Face dataset folder (``save_to_disk``) with BIO ``ClassLabel`` tags
``hf-pipeline``    a Hugging Face token-classification pipeline's aggregated output, with its text
``docbin``         spaCy's DocBin (``.spacy``): entities, or a span group by name
``webanno``        WebAnno TSV 3 as INCEpTION and WebAnno export it (stacked span layers)
``jsonl``          spanscore's own JSONL
=================  =====================================================================

A ``Document`` holds character offsets (end exclusive) into its text, spans sorted. What a reader does
not keep (relations, events, rejected records...) is counted in ``ReadNotes.skipped``; nothing is
dropped without a count. A writer checks everything before it writes, writes its file or folder
whole or not at all, and refuses (``OptionError``, one line) to write what its format would lose:
a discontinuous mention outside BRAT, overlapping mentions or a boundary inside a token as BIO
tags, an id that is no file name.

Reconciliation policy
---------------------
Character offsets are the truth; tokens are only ever compared with them, never used to move them. A
boundary of a predicted mention that falls strictly inside a reference token (the format's own
tokens where it has them, Prodigy's and a dataset's; otherwise the text's words, punctuation apart,
by ``io.document.text_tokens``, which finds no word boundaries to check in text written without
spaces) is *reported*: ``misaligned_boundaries`` lists each such mention with its document id, span,
label, which boundary (``start``, ``end`` or ``start and end``) and the token(s) it cuts, and
readers put the same kind of entry, with file and line, in ``ReadNotes.misaligned`` (a Prodigy span
whose character and token offsets disagree is listed there too, and keeps its character offsets).
Such a mention is scored as it is, so a criterion that wants whole tokens counts it as a boundary
error; it is never silently snapped to a token. The one conversion made is of offsets that
demonstrably count UTF-16 code units (Label Studio before it counted characters): only where the
stored mention text matches that reading and not the other, and listed in ``misaligned``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import InputError, OptionError
from ...stages.parts import EXAMPLE_LIMIT
from ..document import Document, text_tokens
from ..jsonl import read_jsonl
from . import brat, docbin, doccano, hf_datasets, hf_pipeline, jsonl, label_studio, prodigy, webanno
from ._base import ReadNotes, cut_tokens, whitespace_tokens

__all__ = [
    "READERS",
    "WRITERS",
    "Doc",
    "Document",
    "ReadNotes",
    "misaligned_boundaries",
    "misaligned_summary",
    "nothing_left",
    "read",
    "read_documents",
    "reader_keywords",
    "whitespace_tokens",
    "write",
]

Doc = Document  # the name the document type had here before ``io.document`` held it

READERS: dict[str, Callable[..., tuple[list[Document], ReadNotes]]] = {
    "brat": brat.read,
    "label-studio": label_studio.read,
    "doccano": doccano.read,
    "prodigy": prodigy.read,
    "hf-datasets": hf_datasets.read,
    "hf-pipeline": hf_pipeline.read,
    "docbin": docbin.read,
    "webanno": webanno.read,
    "jsonl": jsonl.read,
}

WRITERS: dict[str, Callable[..., None]] = {
    "brat": brat.write,
    "label-studio": label_studio.write,
    "doccano": doccano.write,
    "prodigy": prodigy.write,
    "hf-datasets": hf_datasets.write,
    "hf-pipeline": hf_pipeline.write,
    "docbin": docbin.write,
    "webanno": webanno.write,
    "jsonl": jsonl.write,
}


def read(name: str, path: str | Path, **options: Any) -> tuple[list[Document], ReadNotes]:
    """The documents of ``path`` in format ``name``, and what the reader skipped or reconciled."""
    reader = _pick(READERS, name, "read")
    _check_options(reader, name, options)
    docs, notes = reader(path, **options)
    return list(docs), notes


def write(name: str, docs: Iterable[Document], path: str | Path, **options: Any) -> None:
    """Write ``docs`` to ``path`` in format ``name``: complete, or nothing at all."""
    writer = _pick(WRITERS, name, "write")
    _check_options(writer, name, options)
    writer(docs, Path(path), **options)


def read_documents(
    name: str, path: Any, options: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None
) -> tuple[list[Document], dict[str, Any], frozenset[str]]:
    """One side of an evaluation read whole: the documents of ``path`` in format ``name`` (an
    annotation tool's, or ``"jsonl"``) with the reader's ``options``; what the reader skipped or
    reconciled, as ``Report.read`` shows it ({} for spanscore's JSONL, which skips nothing); and
    the ids of the documents it left out (``ReadNotes.left_out``)."""
    if name == "jsonl" and not options:
        # The scoring reader: spans in the file's order, and each document's line for messages.
        return read_jsonl(path), {}, frozenset()
    docs, notes = read(name, path, **dict(options or {}))
    fragments = sum(1 for d in docs for f in d.fragments if f is not None)
    out: dict[str, Any] = {"skipped": dict(notes.skipped), "misaligned": list(notes.misaligned)[:EXAMPLE_LIMIT]}
    out["misaligned_count"] = len(notes.misaligned)
    if fragments:
        out["discontinuous_mentions"] = fragments
    return docs, out, frozenset(notes.left_out)


def nothing_left(side: str, read_notes: Mapping[str, Any], path: Any, format: str = "") -> InputError:
    """The error for a side with no document left to score, saying what left them out (the
    reader's ``skipped``, as ``read_documents`` gives them), rather than "no documents", and, where
    Label Studio tasks hold only predictions, how to read those."""
    skipped = {what: count for what, count in (read_notes.get("skipped") or {}).items() if count}
    why = ", ".join(f"{what}: {count}" for what, count in skipped.items()) or "the file holds none"
    hint = ""
    if format == "label-studio" and "tasks without annotation" in skipped:
        flag = "--reference-option" if side == "reference" else "--predicted-option"
        option = "reference" if side == "reference" else "predicted"
        python = f"{option}_options={{'source': 'predictions'}}"
        hint = f"; to read the tasks' predictions give {flag} source=predictions ({python})"
    return InputError(f"no document of the {side} is left to score ({why}){hint}", path=str(path))


def misaligned_summary(reference: Sequence[Document], predicted: Sequence[Document]) -> dict[str, Any]:
    """Predicted boundaries inside a reference token (the reference's own tokens, else its text's,
    ``text_tokens``), paired by document id: counted, the first few listed, never moved. Unpaired
    documents and differing texts are passed over here: the source that pairs the documents
    refuses them."""
    by_id = {d.id: d for d in reference}
    found: list[dict[str, Any]] = []
    for p in predicted:
        r = by_id.get(p.id)
        if r is None or r.text != p.text or not p.spans:
            continue
        found += misaligned_boundaries(r, p)
    return {"count": len(found), "examples": found[:EXAMPLE_LIMIT]}


def _pick(table: dict[str, Callable[..., Any]], name: str, verb: str) -> Callable[..., Any]:
    if name not in table:
        raise OptionError(f"cannot {verb} format {name!r}: use one of {', '.join(table)}")
    return table[name]


def reader_keywords(function: Callable[..., Any]) -> list[str]:
    """The options a reader or writer takes (its keyword-only parameters)."""
    return [p.name for p in inspect.signature(function).parameters.values() if p.kind is p.KEYWORD_ONLY]


def _check_options(function: Callable[..., Any], name: str, options: dict[str, Any]) -> None:
    # Refused here, as one line naming what the format takes, rather than as a TypeError.
    takes = reader_keywords(function)
    unknown = [key for key in options if key not in takes]
    if unknown:
        offer = f"it takes {', '.join(takes)}" if takes else "it takes none"
        raise OptionError(f"format {name!r} has no option {unknown[0]!r} ({offer})")


def misaligned_boundaries(
    reference: Document, predicted: Document, tokens: list[tuple[int, int]] | None = None
) -> list[dict[str, Any]]:
    """Predicted mentions with a boundary strictly inside a reference token, in span order.

    ``tokens`` are the reference's (start, end) tokens; by default its own (``Document.tokens``),
    else its text's (``io.document.text_tokens``: words and punctuation apart, and no boundary to
    check in a script written without spaces).
    Each entry: ``id``, ``start``, ``end``, ``label``, ``boundary`` ("start", "end" or "start and
    end"), ``tokens`` (the token or tokens cut) and ``what``. No span is changed (see the module's
    reconciliation policy).
    """
    if predicted.text != reference.text:
        raise InputError(f"document {reference.id!r}: the prediction's text is not the reference's")
    if tokens is None:
        tokens = list(reference.tokens) if reference.tokens is not None else text_tokens(reference.text)
    tokens = sorted(tokens)
    starts = [s for s, _ in tokens]
    found = []
    for start, end, label in predicted.spans:
        cut = cut_tokens(start, end, tokens, starts)
        if cut is None:
            continue
        pieces = " and ".join(repr(reference.text[s:e]) for s, e in cut["tokens"])
        plural = "s" if len(cut["tokens"]) > 1 else ""
        found.append(
            {
                "id": predicted.id,
                "start": start,
                "end": end,
                "label": label,
                **cut,
                "what": f"the {cut['boundary']} of {label} {start}..{end} falls inside the reference"
                f" token{plural} {pieces}",
            }
        )
    return found

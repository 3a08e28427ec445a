"""spanscore's own JSONL (``io/jsonl.py``): one ``{"id", "text", "spans"}`` object per line."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ..document import Document
from ..files import atomic_output
from ..jsonl import iter_documents
from ._base import ReadNotes, make_doc, writable


def read(path: str | Path) -> tuple[list[Document], ReadNotes]:
    """Every document, checked as scoring checks it (unique ids, spans inside the text)."""
    return [make_doc(d.id, d.text, d.spans, line=d.line) for d in iter_documents(path)], ReadNotes()


def write(docs: Iterable[Document], path: str | Path, *, drop_fragments: bool = False) -> None:
    """One line per document; a discontinuous mention is refused unless ``drop_fragments``."""
    checked = writable(docs, "jsonl", drop_fragments=drop_fragments)
    with atomic_output(path) as handle:
        for doc in checked:
            spans = [{"start": s, "end": e, "label": label} for s, e, label in doc.spans]
            line = json.dumps({"id": doc.id, "text": doc.text, "spans": spans}, ensure_ascii=False)
            handle.write(line.encode("utf-8") + b"\n")

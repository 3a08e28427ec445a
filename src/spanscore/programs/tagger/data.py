"""Sentences of tokens (and labels) read from CoNLL files, for training and tagging."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...errors import InputError
from ...io.conll import ConllTable, read_conll
from ...io.reading import DEFAULT_READING, Reading


@dataclass(frozen=True)
class Sentences:
    """Tokens per sentence, and labels per sentence when the file has them."""

    path: str
    tokens: list[list[str]]
    labels: list[list[str]] | None

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def n_tokens(self) -> int:
        return sum(len(s) for s in self.tokens)

    def head(self, n: int | None) -> Sentences:
        """The first ``n`` sentences (all when ``n`` is None)."""
        if n is None:
            return self
        return Sentences(self.path, self.tokens[:n], None if self.labels is None else self.labels[:n])


def table_tokens(table: ConllTable) -> list[list[str]]:
    """Every token's text, grouped by sentence."""
    raw = table.buffer.tobytes()
    flat = [
        raw[s:e].decode("utf-8", errors="replace")
        for s, e in zip(table.token_start.tolist(), table.token_end.tolist(), strict=True)
    ]
    bounds = table.sentence_bounds.tolist()
    return [flat[bounds[k] : bounds[k + 1]] for k in range(len(bounds) - 1)]


def read_sentences(path: str | Path, reading: Reading = DEFAULT_READING, *, labelled: bool = True) -> Sentences:
    """Read a CoNLL file; with ``labelled`` its label column is required."""
    reading.one_level("the tagger")
    table = read_conll(
        path,
        columns=(reading.label_column,) if labelled else (),
        token_column=reading.token_column,
        delimiter=reading.delimiter,
        encoding=reading.encoding,
        header=reading.header,
    )
    tokens = table_tokens(table)
    if not labelled:
        return Sentences(str(path), tokens, None)
    if table.n_columns < 2:
        raise InputError("lines have one column: a training file needs a label column", path=str(path))
    col = table.columns[0]
    names = [col.vocab[i] for i in col.ids.tolist()]
    bounds = table.sentence_bounds.tolist()
    labels = [names[bounds[k] : bounds[k + 1]] for k in range(len(bounds) - 1)]
    return Sentences(str(path), tokens, labels)

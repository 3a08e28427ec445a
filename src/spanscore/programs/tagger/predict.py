"""Tag a CoNLL file, writing the predictions on exactly its lines.

Only label fields are written: sentences, tokens, ``-DOCSTART-`` and comment lines, other columns,
the delimiter and line endings stay as they were, so ``spanscore evaluate INPUT PRED`` lines the
two files up token for token.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import InputError
from ...io.conll import parse_conll, tab_separated
from ...io.files import read_bytes, write_atomic
from ...io.reading import DEFAULT_READING, Reading
from ..transform import splice, split_bom
from .data import table_tokens
from .loading import load_model
from .model import Tagger
from .progress import Progress


@dataclass(frozen=True)
class PredictResult:
    path: Path
    sentences: int
    tokens: int
    appended: bool  # True: a label column was added; False: the last label column was replaced


def predict_file(
    model: Tagger | str | Path,
    source: str | Path,
    output: str | Path,
    reading: Reading = DEFAULT_READING,
    *,
    append: bool = False,
    progress: Progress | None = None,
) -> PredictResult:
    """Tag ``source`` with ``model`` and write ``output`` (atomically).

    The prediction replaces the label column (``reading.label_column``) when the file has one, or is added
    as a new last column when the file holds tokens only or ``append`` is set (a merged
    ``token gold predicted`` file).
    """
    tagger = load_model(model) if isinstance(model, str | Path) else model
    reading.one_level("the tagger")
    name = str(source)
    data = read_bytes(source)
    bom, body = split_bom(data)
    token_column, label_column, delimiter = reading.token_column, reading.label_column, reading.delimiter
    # Labels are spliced into the bytes as they are; the tagger reads the tokens as text, in the
    # file's encoding (UTF-8 is checked in place; another is converted in a second reading).
    in_place = reading.encoding == "utf-8" or body.isascii()
    table = parse_conll(
        body,
        name,
        columns=(),
        token_column=token_column,
        delimiter=delimiter,
        encoding=reading.encoding if in_place else None,
    )
    text = table
    if not in_place:
        text = parse_conll(
            body, name, columns=(), token_column=token_column, delimiter=delimiter, encoding=reading.encoding
        )
    sentences = table_tokens(text)
    predicted = tagger.predict(sentences, progress=progress)
    if len(predicted) != len(sentences) or any(
        len(p) != len(s) for p, s in zip(predicted, sentences, strict=True)
    ):
        raise InputError("the tagger returned a different number of labels than tokens", path=name)
    pieces = [label.encode("utf-8") for sentence in predicted for label in sentence]

    appending = append or table.n_columns < 2
    if appending:
        # Insert before the line's end (and its \r, if any).
        buf = table.buffer
        newline = np.flatnonzero(buf == 10)
        line_end = newline[table.token_line - 1 - table.line_offset]
        has_cr = (line_end > 0) & (buf[np.maximum(line_end - 1, 0)] == 13)
        at = (line_end - has_cr).tolist()
        # Space only where the columns are space-separated: a tab there would change how it reads.
        spaced = delimiter == "whitespace" or (delimiter == "auto" and not tab_separated(body))
        sep = b" " if spaced and table.n_columns > 1 else b"\t"
        out = splice(body, at, at, [sep + p for p in pieces])
    else:
        if label_column % table.n_columns == token_column % table.n_columns:
            raise InputError("the label column is the token column: use --append", path=name)
        fields = parse_conll(
            body,
            name,
            columns=(),
            token_column=label_column,
            delimiter=delimiter,
            encoding=None,
            hash_comments=token_column % table.n_columns != 0,  # the same lines as the first reading
        )
        out = splice(body, fields.token_start.tolist(), fields.token_end.tolist(), pieces)
    target = Path(output)
    write_atomic(target, bom + out)
    return PredictResult(target, table.n_sentences, table.n_tokens, appending)

"""The partial pairs report.html lists are read back from their CSV rows by one reader for the
whole sample (``sample_rows``), as each row read alone gives them (``sample_row``)."""

from __future__ import annotations

import csv
import io
from typing import Any

from spanscore.stages.pairs import pair_fields, sample_row, sample_rows

ROWS: list[list[Any]] = [
    [3, 'say "hi", then', "PER", 0, 14, "a\r\nb", "LOC", 3, 5, "partial", 1 / 3, "longer", 'c, "q"\nx'],
    [4, "plain", "ORG", 1, 2, "plain", "ORG", 1, 3, "partial", 0.5, "shorter", "a b c"],
    [5, "", "PER", 0, 0, "\n", "PER", 0, 1, "none", 0.0, "shifted", ""],
    [6, "\r", "X", 2, 9, "é,ü", "Y", 2, 9, "partial", 0.25, "same", "\r\n\r\n"],
]


def _lines(rows: list[list[Any]]) -> list[str]:
    lines = []
    for values in rows:
        buffer = io.StringIO(newline="")
        csv.writer(buffer).writerow(values)
        lines.append(buffer.getvalue())
    return lines


def test_sample_rows_read_at_once_are_the_rows_read_one_by_one() -> None:
    fields = pair_fields("sentence")
    lines = _lines(ROWS)
    one_by_one = [sample_row(line, fields, named=False) for line in lines]
    assert sample_rows(lines, fields, named=False) == one_by_one
    assert [list(r.values()) for r in one_by_one] == ROWS
    assert sample_rows([], fields, named=False) == []
    named = [["d,1", *row[1:]] for row in ROWS]
    assert [list(r.values()) for r in sample_rows(_lines(named), pair_fields("document"), named=True)] == named


def test_a_line_that_is_not_one_record_is_read_alone() -> None:
    fields = pair_fields("sentence")
    lines = _lines(ROWS)
    # Without its line end, the second row runs into the third when joined: each is read alone.
    broken = [lines[0], lines[1].rstrip("\r\n"), *lines[2:]]
    assert sample_rows(broken, fields, named=False) == [sample_row(line, fields, named=False) for line in broken]

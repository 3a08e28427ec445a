"""Read a CoNLL file into label sequences (one list per sentence), as a peer's user would.

Labels are the last column; blank lines end sentences; -DOCSTART- lines are skipped.
"""

from __future__ import annotations


def read_labels(path: str) -> list[list[str]]:
    sentences: list[list[str]] = []
    current: list[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if not fields:
                if current:
                    sentences.append(current)
                    current = []
                continue
            if fields[0] == "-DOCSTART-":
                continue
            current.append(fields[-1])
    if current:
        sentences.append(current)
    return sentences

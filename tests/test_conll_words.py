"""The words the CoNLL reader gathers at byte offsets, and label ids of any length, against plain Python."""

from __future__ import annotations

import numpy as np
import pytest

from spanscore.io.conll import parse_conll, prefix_words, words_at


def _word(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 8].ljust(8, b"\0"), "little")


@pytest.mark.parametrize("seed", range(20))
def test_words_at_any_offset_are_the_8_bytes_there(seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, int(rng.integers(1, 200)), dtype=np.uint8).tobytes()
    buf = np.frombuffer(data, dtype=np.uint8)
    at = rng.integers(0, len(data), 64).astype(np.int64)
    at[:2] = (0, len(data) - 1)  # the first and the last byte
    assert words_at(buf, at).tolist() == [_word(data, int(a)) for a in at]
    lengths = rng.integers(0, 12, at.shape[0]).astype(np.int64)
    expected = [_word(data, int(a)) & ((1 << (8 * min(int(n), 8))) - 1) for a, n in zip(at, lengths, strict=True)]
    assert prefix_words(buf, at, lengths).tolist() == expected


LABELS = ["O", "B-PER", "I-PER", "B-WORK_OF_ART", "I-WORK_OF_ART", "B-ORGANIZATION", "I-ORGANIZATIONS", "B-X"]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("separator", [" ", "\t"])
def test_labels_of_any_length_read_as_plain_python_reads_them(seed: int, separator: str) -> None:
    rng = np.random.default_rng(seed)
    # Labels up to 16 bytes and longer, short ones last in the file (their later words lie past its end).
    chosen = [LABELS[int(k)] for k in rng.integers(0, len(LABELS), int(rng.integers(1, 300)))] + ["O", "B-X"]
    lines, expected = [], []
    for i, label in enumerate(chosen):
        lines.append(f"w{i}{separator}{label}")
        expected.append(label)
        if rng.random() < 0.1:
            lines.append("")
    data = ("\n".join(lines) + "\n").encode()
    table = parse_conll(data, "x", columns=(-1,))
    column = table.columns[0]
    assert [column.vocab[k] for k in column.ids.tolist()] == expected
    assert sorted(set(column.vocab)) == sorted(column.vocab)  # one id per label

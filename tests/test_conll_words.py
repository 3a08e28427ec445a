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


def _colliding_labels() -> tuple[str, str]:
    """Two 16-byte labels whose hashed keys (first word times the multiplier, XOR the second) are
    equal: the reader must still tell them apart."""
    m = 0x9E3779B97F4A7C15
    mask = (1 << 64) - 1
    a = b"B-ABCDEFGHIJKLMN"
    a0, a1 = int.from_bytes(a[:8], "little"), int.from_bytes(a[8:], "little")
    rng = np.random.default_rng(0)
    for _ in range(200_000):
        b0_bytes = b"B-" + bytes(rng.integers(65, 91, 6, dtype=np.uint8).tolist())
        b0 = int.from_bytes(b0_bytes, "little")
        b1 = ((a0 * m) & mask) ^ ((b0 * m) & mask) ^ a1
        b1_bytes = b1.to_bytes(8, "little")
        if all(0x21 <= c <= 0x7E and c != 0x2D for c in b1_bytes):
            return a.decode(), (b0_bytes + b1_bytes).decode()
    raise AssertionError("no colliding pair found")


def test_labels_whose_keys_collide_stay_apart() -> None:
    first, second = _colliding_labels()
    assert first != second
    data = f"a {first}\nb {second}\nc O\nd {second}\n\ne {first}\n".encode()
    column = parse_conll(data, "x", columns=(-1,)).columns[0]
    assert [column.vocab[k] for k in column.ids.tolist()] == [first, second, "O", second, first]

#!/usr/bin/env python3
"""What making one chunk's joint histogram costs in ``compare A B``, pass by pass (a script, not
a test).

The joint rows each chunk hands to ``Histogram.of`` (every document the chunk holds whole, both
systems' columns side by side) are captured from one in-process ``compare GOLD A B --json --jobs 1``
run, then ``Histogram.of`` and each of its passes are timed on them, CPU ms per chunk, the best of
``--repeat`` rounds over all the captured chunks, in a process with spanscore's malloc settings
(``runtime.memory.keep_freed_memory``: freed blocks kept, as in a real run; without them each
chunk's 64-bit copy of its rows faults in fresh pages and the figures mislead). The passes:

- ``min + max``: the rows' smallest value (counts: none negative) and each column's largest;
- ``layout + pack``: each column's largest value again, and ``Histogram.of``'s sort words, a
  copy to 64 bits, a shift and an or per column;
- ``layout + pack, 3 calls``: the same words from one copy of the rows to 64 bits, one product by each
  column's 2^shift and one sum per word's run of columns (tried, and dropped: see
  docs/benchmarks.md);
- ``lexsort``: the words' order; ``groups``: where equal words change, the counts;
- ``rows``: the distinct rows gathered.

    python bench/chunk_histogram_passes.py [--files GOLD A B] [--head-lines N] [--repeat 5] [--chunks 40]

``--head-lines N`` reads only the first N lines of each file (cut at the sentence boundary after
line N of GOLD; A and B must hold the same tokens line by line, as /tmp/c1m's do): the first
chunks of a 1M-sentence corpus without its whole run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent


def _head(path: str, lines: int, out: Path) -> int:
    """The first ``lines`` lines of ``path`` and the rest of its sentence, written to ``out``;
    the number of lines written."""
    n = 0
    with open(path, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            dst.write(line)
            n += 1
            if n >= lines and not line.strip():
                break
    return n


def capture(gold: str, a: str, b: str, limit: int) -> list[tuple[np.ndarray[Any, Any], tuple[str, ...]]]:
    from spanscore.cli.main import cli
    from spanscore.engines import paired

    got: list[tuple[np.ndarray[Any, Any], tuple[str, ...]]] = []
    real = paired.Histogram.of

    def spy(stats: Any, fields: tuple[str, ...], weights: Any = None, repeats: Any = None) -> Any:
        if weights is None and len(got) < limit:
            got.append((np.array(stats), fields))
        return real(stats, fields, weights, repeats)

    joined_call = paired._Joined.__call__

    def call(self: Any, items: Any) -> Any:
        paired.Histogram.of = spy  # type: ignore[method-assign]
        try:
            return joined_call(self, items)
        finally:
            paired.Histogram.of = real  # type: ignore[method-assign]

    paired._Joined.__call__ = call  # type: ignore[method-assign]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            cli.main(args=["compare", gold, a, b, "--json", "--jobs", "1"], standalone_mode=False)
    finally:
        paired._Joined.__call__ = joined_call  # type: ignore[method-assign]
    return got


def layout(stats: np.ndarray[Any, Any]) -> list[tuple[int, int, int]]:
    """(column, word, shift) of every column not always zero, as ``Histogram.of`` packs them."""
    places: list[tuple[int, int, int]] = []
    free, last = 0, -1
    for j, top in enumerate(stats.max(axis=0).tolist()):
        b = int(top).bit_length()
        if b == 0:
            continue
        if b > free:
            last, free = last + 1, 64
        free -= b
        places.append((j, last, free))
    return places


def pack(stats: np.ndarray[Any, Any], places: list[tuple[int, int, int]]) -> list[np.ndarray[Any, Any]]:
    words: list[np.ndarray[Any, Any]] = []
    columns = stats.T
    for j, w, shift in places:
        if w == len(words):
            words.append(np.zeros(stats.shape[0], dtype=np.uint64))
        words[w] |= columns[j].astype(np.uint64) << np.uint64(shift)
    return words


def pack_3_calls(stats: np.ndarray[Any, Any], places: list[tuple[int, int, int]]) -> list[np.ndarray[Any, Any]]:
    scale = np.zeros(stats.shape[1], dtype=np.uint64)
    starts: list[int] = []
    for j, w, shift in places:
        scale[j] = np.uint64(1) << np.uint64(shift)
        if w == len(starts):
            starts.append(j if w else 0)
    x = stats.astype(np.uint64)
    x *= scale  # the fields do not overlap: a sum is their or
    return [np.ascontiguousarray(w) for w in np.add.reduceat(x, starts, axis=1).T]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", nargs=3, metavar=("GOLD", "A", "B"), help="default: bench/out's 100k corpora")
    ap.add_argument("--head-lines", type=int, default=0, help="only the first N lines of each file")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--chunks", type=int, default=40, help="chunks captured, at most")
    args = ap.parse_args()
    from spanscore.runtime.memory import keep_freed_memory
    from spanscore.stages.documents import Histogram, _grouped_by_words

    keep_freed_memory()
    files = args.files or [str(HERE / "out" / n) for n in ("a.gold", "a.pred", "b.pred")]
    with tempfile.TemporaryDirectory() as tmp:
        if args.head_lines:
            cut = [Path(tmp) / f"{k}.conll" for k in ("gold", "a", "b")]
            sizes = {_head(f, args.head_lines, c) for f, c in zip(files, cut, strict=True)}
            if len(sizes) != 1:
                sys.exit(f"the files' sentences end at different lines: {sorted(sizes)}")
            files = [str(c) for c in cut]
        got = capture(*files, limit=args.chunks)
    if not got:
        sys.exit("no chunk's joint rows were captured")
    for stats, _ in got:
        words = pack(stats, layout(stats))
        same = pack_3_calls(stats, layout(stats))
        if len(words) != len(same) or not all(np.array_equal(u, v) for u, v in zip(words, same, strict=True)):
            sys.exit("the two packings differ")
    ready = [(s, f, pack(s, layout(s))) for s, f in got]
    orders = [np.lexsort(w[::-1]) if len(w) > 1 else np.argsort(w[0], kind="stable") for _, _, w in ready]

    def best(step: Callable[[int], object]) -> float:
        rounds = []
        for _ in range(args.repeat):
            start = time.process_time()
            for k in range(len(got)):
                step(k)
            rounds.append(time.process_time() - start)
        return min(rounds) / len(got) * 1e3

    def groups(k: int) -> object:
        words, order = ready[k][2], orders[k]
        change = np.zeros(order.shape[0] - 1, dtype=bool)
        for w in words:
            ordered = w[order]
            change |= ordered[1:] != ordered[:-1]
        return np.flatnonzero(np.concatenate(([True], change)))

    starts = [groups(k) for k in range(len(got))]
    s0 = got[0][0]
    print(
        f"{len(got)} chunks, rows {min(s.shape[0] for s, _ in got)}-{max(s.shape[0] for s, _ in got)}, "
        f"{s0.shape[1]} columns ({len(layout(s0))} not always zero), {len(ready[0][2])} sort words, "
        f"distinct rows of the first {len(starts[0])}; load {os.getloadavg()[0]:.2f}"
    )
    steps: dict[str, Callable[[int], object]] = {
        "Histogram.of": lambda k: Histogram.of(*got[k]),
        "_grouped_by_words": lambda k: _grouped_by_words(got[k][0], None),
        "min + max": lambda k: (int(got[k][0].min()), got[k][0].max(axis=0).tolist()),
        "layout + pack": lambda k: pack(got[k][0], layout(got[k][0])),
        "layout + pack, 3 calls": lambda k: pack_3_calls(got[k][0], layout(got[k][0])),
        "lexsort": lambda k: np.lexsort(ready[k][2][::-1]),
        "groups": groups,
        "rows": lambda k: got[k][0][orders[k][starts[k]]],
    }
    for name, step in steps.items():
        print(f"{name:24s} {best(step):7.3f} ms a chunk")
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""The order in which a review presents mismatches: the one that teaches a judge most per review.

Ordering by uncertainty alone (the judge's probability closest to 0.5 first) reviews a narrow
band of near-ties, all alike, and a model learned from them is no better than one learned from as
many mismatches taken at random: on the MedMentions learning curve it is worse at every size from
25 to 800 reviews (docs/judge.md). Settles (2009) surveys why: uncertainty sampling from a fixed model
samples a biased, redundant region. What the curve rewards instead is stratified sampling
(Cochran 1977) with the reviews allocated where they teach the acceptance model something:

- strata: predictions that drop words of the gold span, split by the judge's verdict (it accepts
  them or rejects them), and predictions that only add words;
- nine reviews in ten go to predictions that drop words, alternating between those the judge
  accepts and those it rejects, whatever their shares: mismatches the judge rejects hold most of
  the rejections a user makes, and a balanced sample of both verdicts is what a balanced
  acceptance model learns fastest from;
- one review in ten goes to predictions that only add words, which the ``contains`` rule
  accepts outright: never reviewing them would leave that belief untested;
- within a stratum, mismatches come in a random order (seeded), so that each stretch of the
  review covers the stratum evenly rather than one corner of it.

A stratum that runs out is skipped; the others go on in the same proportions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ...stages.judging import Mismatch
from .acceptance import group_of

IntArray = npt.NDArray[np.int64]

# One cycle of the allocation, a stratum per review; a stratum that runs out is skipped.
CYCLE: tuple[str, ...] = ("rejected", "accepted") * 4 + ("rejected", "adds")
ORDERS: tuple[str, ...] = ("judge", "random")


def review_order(items: Sequence[Mismatch], probability: npt.ArrayLike, seed: int = 0) -> IntArray:
    """The positions of ``items`` in review order, given a judge's acceptance probabilities."""
    p = np.asarray(probability, dtype=np.float64)
    if p.shape != (len(items),):
        raise ValueError(f"{p.size} probabilities for {len(items)} mismatches")
    shuffled = np.random.default_rng(seed).permutation(len(items))
    adds = np.array([group_of(items[k]) == "adds" for k in shuffled.tolist()], dtype=bool)
    accepted = p[shuffled] >= 0.5
    strata = {
        "adds": shuffled[adds].tolist(),
        "accepted": shuffled[~adds & accepted].tolist(),
        "rejected": shuffled[~adds & ~accepted].tolist(),
    }
    taken = dict.fromkeys(strata, 0)
    out: list[int] = []
    while len(out) < len(items):
        for stratum in CYCLE:
            if taken[stratum] < len(strata[stratum]):
                out.append(strata[stratum][taken[stratum]])
                taken[stratum] += 1
    return np.array(out, dtype=np.int64)


def random_order(n: int, seed: int = 0) -> IntArray:
    return np.random.default_rng(seed).permutation(n).astype(np.int64)


def order_of(kind: str, items: Sequence[Mismatch], probability: npt.ArrayLike, seed: int) -> IntArray:
    if kind == "judge":
        return review_order(items, probability, seed)
    if kind == "random":
        return random_order(len(items), seed)
    raise ValueError(f"unknown order {kind!r}")

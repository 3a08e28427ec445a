"""Agreement between reviewers: Cohen's kappa for two, Krippendorff's alpha for any number.

Both take verdicts as integers (Good 1 / Bad 0, or scores 1-5). Alpha is computed from the
coincidence matrix of Krippendorff (2011, "Computing Krippendorff's Alpha-Reliability"), nominal
or ordinal; items judged by fewer than two reviewers are left out, as the measure defines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

Level = Literal["nominal", "ordinal"]


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's kappa of two reviewers' verdicts on the same items (NaN when undefined).

    >>> cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0])
    0.5
    """
    if len(a) != len(b):
        raise ValueError("both reviewers must judge the same items")
    if not a:
        return float("nan")
    values = sorted(set(a) | set(b))
    index = {v: i for i, v in enumerate(values)}
    table = np.zeros((len(values), len(values)))
    for x, y in zip(a, b, strict=True):
        table[index[x], index[y]] += 1
    n = table.sum()
    observed = np.trace(table) / n
    expected = float((table.sum(axis=0) * table.sum(axis=1)).sum() / (n * n))
    if expected == 1.0:
        return float("nan")
    return float((observed - expected) / (1 - expected))


def krippendorff_alpha(units: Sequence[Sequence[int]], level: Level = "nominal") -> float:
    """Krippendorff's alpha over units (items), each the verdicts its reviewers gave.

    >>> krippendorff_alpha([[1, 1], [0, 0], [1, 0]])
    0.4444444444444444
    """
    pairable = [list(u) for u in units if len(u) >= 2]
    if not pairable:
        return float("nan")
    values = sorted({v for u in pairable for v in u})
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    coincidence = np.zeros((k, k))
    for unit in pairable:
        counts = np.bincount([index[v] for v in unit], minlength=k).astype(float)
        # Every ordered pair of values from different reviewers, weighted 1 / (m - 1).
        coincidence += (np.outer(counts, counts) - np.diag(counts)) / (len(unit) - 1)
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    delta = _distance(n_c, level)
    observed = float((coincidence * delta).sum())
    expected = float((np.outer(n_c, n_c) * delta).sum()) / (n - 1)
    if expected == 0.0:
        return float("nan")
    return float(1.0 - observed / expected)


def _distance(n_c: npt.NDArray[np.float64], level: Level) -> npt.NDArray[np.float64]:
    """The squared difference of each pair of values (the values sorted)."""
    k = n_c.shape[0]
    if level == "nominal":
        out: npt.NDArray[np.float64] = 1.0 - np.eye(k)
        return out
    if level != "ordinal":
        raise ValueError(f"level must be nominal or ordinal, not {level!r}")
    cumulative = np.concatenate(([0.0], np.cumsum(n_c)))
    out = np.zeros((k, k))
    for c in range(k):
        for d in range(c, k):
            between = cumulative[d + 1] - cumulative[c] - (n_c[c] + n_c[d]) / 2
            out[c, d] = out[d, c] = between**2
    return out

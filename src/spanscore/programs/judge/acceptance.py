"""The acceptance model: what a judge learns from human scores, starting from its rule.

For each group of mismatches (predictions that only add words, and those that drop some), a
logistic regression whose *offset* is the rule's log-odds (McCullagh and Nelder 1989, on offsets
in generalised linear models):

    logit P(user accepts) = slope * logit(rule probability) + intercept + weights . z(features)

with a Gaussian prior centred on the rule itself (slope 1, intercept 0, weights 0), so that with
no scores the model *is* the rule, and the maximum a posteriori estimate moves away from it only
as far as the scores carry it. ``z`` standardises the features on the scores and clips them at
``CLIP`` standard deviations: an item far outside the scored range moves the decision no more than
one at the edge of it.

Why it cannot collapse to accept-all on a small, unbalanced sample:

- the classes are weighted to balance (King and Zeng 2001): the stationarity condition of the
  intercept equates (up to the prior's pull) the mean predicted rejection of the accepted scores
  with the mean predicted acceptance of the rejected ones; accepting every scored mismatch at the
  0.5 threshold puts the right side at 0.5 or more and the left at 0.5 or less, so it can hold
  only with every probability at 0.5; the share of acceptable mismatches in the sample never
  enters;
- the prior's precision is ``PRIOR_PRECISION * max(1, PRIOR_SCORES / n)`` for a group with ``n``
  scores: it weighs like the rule's own verdicts on ``PRIOR_SCORES`` items until the scores
  outnumber them, so a handful of scores (ten, one of them a rejection) nudges the rule instead of
  replacing it, and with hundreds the prior fades (its weight against the data falls as 1 / n);
- a group whose scores hold one verdict only keeps the rule: balancing needs both, and forty
  acceptances say nothing of where rejection begins (with unit weights instead, forty
  acceptances and no rejection do make a judge that accepts everything).

The constants were fixed on the learning curve of the MedMentions development judgements (the
nested cross-fitted curve in docs/judge.md), not searched per data set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...errors import OptionError
from ...stages.judging import Mismatch
from .features import FEATURES

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

# Predictions that contain the whole gold span only add words; the others drop some of its words.
GROUPS: tuple[str, ...] = ("adds", "drops")
PRIOR_PRECISION = 3.0  # on standardised features: a weight of about 0.6 is one prior sd
PRIOR_SCORES = 50  # below this many scores in a group, the prior tightens in proportion
CLIP = 4.0  # standardised features are clipped to +-CLIP
MIN_SCORES = 15  # a group with fewer scores keeps the rule: too few to move it without risk
RULE_FLOOR = 0.01  # the rule's probability is kept in [RULE_FLOOR, 1 - RULE_FLOOR] for its log-odds
# A model carried to another domain departs from that domain's rule by n / (n + CARRY_SCORES) of
# what it learned from n scores: a hundred scores of elsewhere weigh half, thousands almost all.
CARRY_SCORES = 100


def group_of(item: Mismatch) -> str:
    return "adds" if item.relation == "longer" else "drops"


def groups_of(items: Sequence[Mismatch]) -> npt.NDArray[np.str_]:
    return np.array([group_of(it) for it in items], dtype=str)


def rule_logit(probability: FloatArray) -> FloatArray:
    p = np.clip(probability, RULE_FLOOR, 1.0 - RULE_FLOOR)
    out: FloatArray = np.log(p / (1.0 - p))
    return out


def prior_precision(n: int) -> float:
    return PRIOR_PRECISION * max(1.0, PRIOR_SCORES / max(n, 1))


def _map_logistic(
    design: FloatArray, y: FloatArray, weight: FloatArray, centre: FloatArray, precision: float
) -> FloatArray:
    """Maximum a posteriori logistic regression with the prior N(centre, 1 / precision), by
    Newton's method with a backtracking line search (the objective is strictly convex)."""

    def objective(theta: FloatArray) -> float:
        eta = design @ theta
        loss = float(np.sum(weight * (np.logaddexp(0.0, eta) - y * eta)))
        return loss + 0.5 * precision * float(np.sum((theta - centre) ** 2))

    theta = centre.copy()
    value = objective(theta)
    eye = np.eye(len(theta))
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(design @ theta)))
        grad = design.T @ (weight * (p - y)) + precision * (theta - centre)
        hess = (design * (weight * p * (1.0 - p))[:, None]).T @ design + precision * eye
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while True:
            trial = theta - t * step
            new = objective(trial)
            if new <= value - 1e-4 * t * float(grad @ step) or t < 1e-10:
                break
            t /= 2.0
        theta, old, value = trial, value, new
        if old - value <= 1e-10 * max(1.0, abs(value)):
            break
    return theta


@dataclass(frozen=True)
class GroupModel:
    """The rule's log-odds recalibrated and corrected by standardised features."""

    mean: FloatArray
    scale: FloatArray
    coef: FloatArray
    slope: float
    intercept: float
    scores: int  # how many scores it learned from
    accepted: int | None = None  # how many of them the user accepted (None in files before it was kept)

    def carried(self, shift: float) -> GroupModel:
        """The model as it judges another domain (see ``Acceptance.carried``): its departure from
        the rule shrunk by n / (n + ``CARRY_SCORES``), its log-odds moved by ``shift``."""
        shrink = self.scores / (self.scores + CARRY_SCORES)
        return GroupModel(
            self.mean, self.scale, shrink * self.coef, 1.0 + shrink * (self.slope - 1.0),
            shrink * self.intercept + shift, self.scores, self.accepted,
        )

    def predict(self, x: FloatArray, rule_probability: FloatArray) -> FloatArray:
        z = np.clip((x - self.mean) / self.scale, -CLIP, CLIP)
        eta = self.slope * rule_logit(rule_probability) + self.intercept + z @ self.coef
        out: FloatArray = 1.0 / (1.0 + np.exp(-eta))
        return out

    @staticmethod
    def fit(x: FloatArray, rule_probability: FloatArray, accepted: BoolArray) -> GroupModel:
        n, d = x.shape
        mean = x.mean(axis=0)
        scale = x.std(axis=0)
        scale[scale == 0] = 1.0
        z = np.clip((x - mean) / scale, -CLIP, CLIP)
        design = np.column_stack([rule_logit(rule_probability), np.ones(n), z])
        y = accepted.astype(np.float64)
        n_yes = int(accepted.sum())
        if not 0 < n_yes < n:
            raise ValueError("a balanced acceptance model needs accepted and rejected scores")
        weight = np.where(accepted, n / (2.0 * n_yes), n / (2.0 * (n - n_yes)))
        centre = np.zeros(d + 2)
        centre[0] = 1.0
        theta = _map_logistic(design, y, weight, centre, prior_precision(n))
        return GroupModel(mean, scale, theta[2:].copy(), float(theta[0]), float(theta[1]), n, n_yes)


@dataclass(frozen=True)
class Acceptance:
    """One ``GroupModel`` per group whose scores hold both verdicts; other groups follow the rule."""

    groups: dict[str, GroupModel]
    user: str
    feature_names: tuple[str, ...] = FEATURES
    reviewers: tuple[str, ...] = ()  # whose scores, where the scores named them
    carried_over: bool = False  # made for another domain than its scores' (``carried``)
    scores: int | None = None  # how many scores it learned from, and how many were acceptances
    accepted: int | None = None  # (None in files written before they were kept)
    shift: float = 0.0  # log-odds added to the rule's where a group has no model (``carried``)

    def acceptance_rate(self) -> float | None:
        """The share of its scores the user accepted, smoothed: (accepted + 1) / (scores + 2)."""
        if self.scores is None or self.accepted is None:
            return None
        return (self.accepted + 1.0) / (self.scores + 2.0)

    def carried(self) -> Acceptance:
        """The model as it judges another domain, where no score was made (a type-agnostic model
        carried to another corpus, or judging types its judge never saw).

        Two changes. Its departure from the rule is shrunk by n / (n + ``CARRY_SCORES``) for a
        group of n scores: what a hundred scores of tweets say about cut mentions is weak evidence
        about medical text, where the target's own rule is the better-founded judge. And every
        log-odds it gives, the rule's in a group without a model included, moves by the source
        users' acceptance odds, log(rate / (1 - rate)) (the prior correction of King and Zeng
        2001, with ``acceptance_rate``): balanced weights put 0.5 where, on the scores' own sample,
        a wrong acceptance and a wrong rejection are equally likely, but with no score of the new
        domain the users' base rate is the one thing known about it (the users of both domains
        measured accept most mismatches: 70-91%). One shift for all the scores, not one per group:
        it is better estimated, and it keeps the order of the model's probabilities across
        groups. Without it a carried model rejects far more than the users do. Idempotent."""
        if self.carried_over:
            return self
        rate = self.acceptance_rate()
        shift = 0.0 if rate is None else float(np.log(rate / (1.0 - rate)))
        groups = {g: m.carried(shift) for g, m in self.groups.items()}
        return Acceptance(groups, self.user, self.feature_names, self.reviewers, True, self.scores, self.accepted,
                          shift)

    @staticmethod
    def fit(
        x: FloatArray,
        items: Sequence[Mismatch],
        rule_probability: FloatArray,
        accepted: BoolArray,
        user: str,
        reviewers: tuple[str, ...] = (),
        feature_names: tuple[str, ...] = FEATURES,
    ) -> Acceptance:
        if x.shape[0] == 0:
            raise OptionError("no human scores to learn from")
        group = groups_of(items)
        models = {}
        for g in GROUPS:
            rows = group == g
            if int(rows.sum()) >= MIN_SCORES and 0 < int(accepted[rows].sum()) < int(rows.sum()):
                models[g] = GroupModel.fit(x[rows], rule_probability[rows], accepted[rows])
        return Acceptance(models, user, feature_names, reviewers, scores=len(items), accepted=int(accepted.sum()))

    def predict(self, x: FloatArray, items: Sequence[Mismatch], rule_probability: FloatArray) -> FloatArray:
        """Acceptance probabilities; a group without a model keeps the rule's (moved by ``shift``)."""
        out = rule_probability.astype(np.float64, copy=True)
        if not len(items):
            return out
        if self.shift:
            out = 1.0 / (1.0 + np.exp(-(rule_logit(out) + self.shift)))
        group = groups_of(items)
        for g, model in self.groups.items():
            rows = group == g
            if rows.any():
                out[rows] = model.predict(x[rows], rule_probability[rows])
        return out

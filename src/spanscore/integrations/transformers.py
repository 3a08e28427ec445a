"""``compute_metrics`` for the Hugging Face ``Trainer``: token-classification predictions scored by spanscore.

>>> compute_metrics = make_compute_metrics(model.config.id2label, labels="BIO")  # doctest: +SKIP
>>> trainer = Trainer(model, args, eval_dataset=dev, compute_metrics=compute_metrics)  # doctest: +SKIP
>>> trainer.evaluate()["eval_strict_f1"]  # doctest: +SKIP

The returned callable takes the ``EvalPrediction`` the Trainer hands it (``predictions`` as logits
or as label ids, ``label_ids`` with -100 where there is nothing to score) and returns flat scalar
metrics. It works with ``TrainingArguments(batch_eval_metrics=True)`` too: between batches it keeps
only spanscore's integer ``Counts``, never logits, and the metrics are exactly those of the
whole set at once.

Which positions are tokens
--------------------------
Every position whose label is -100 is dropped, whatever is predicted there; the positions left in a
row, in order, are the tokens of one sentence, decoded with ``id2label`` under the label encoding
``labels`` (repair policy ``repair``, conlleval's by default, for invalid transitions such as an
``I-`` after ``O``). Special tokens and padding carry -100 in every Hugging Face recipe, and the
Trainer pads predictions and labels across batches with -100 as well, so none of them is scored.

- **First-subword labelling** (the usual recipe: a word's first subword carries the word's label,
  its other subwords -100): the positions left are exactly the words, so mentions, boundaries and
  token scores are those of word-level evaluation, the same numbers as scoring the word labels.
- **label_all_tokens** (every subword carries a label): every non--100 position is a token, so
  mentions are spans of subwords. Boundaries are subword boundaries, the token score counts
  subwords, and a long word weighs more than a short one. Where continuation subwords copy a
  ``B-`` label (the recipe's default without ``b_to_i_label``), each subword starts a mention of
  its own and one word becomes several mentions; map ``B-`` to ``I-`` on continuations, or label
  them -100 for word-level scores. The predictions alone do not say where words begin, so this
  cannot be undone here.

Metrics
-------
``{name}_precision``, ``{name}_recall`` and ``{name}_f1`` for every name of ``criteria``: the
criteria ``strict``, ``boundary``, ``left``, ``right``, ``overlap`` (partial credit ``credit``), the
token score ``token``, and the SemEval-2013 schemes ``semeval_strict``, ``semeval_exact``,
``semeval_partial`` and ``semeval_type``. With ``per_type=True`` also ``{name}_{score}_{TYPE}``
(``strict_f1_PER``) for every type that ``id2label`` names, present in the data or not, so that
the keys are the same at every evaluation. The Trainer prefixes each key with ``eval_``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, OptionError, shorten
from ..results import Scores
from ..stages.counts import Counts, count, credit_label
from ..stages.criteria import CRITERIA
from ..stages.encoding import (
    EncodingSpec,
    Repair,
    check_repair,
    decode,
    get_encoding,
    invalid_transitions,
    split_labels,
)
from ..stages.scores import score_counts
from ..stages.scoring import Scoring
from ..stages.spans import IntArray, Spans

IGNORE_INDEX = -100  # the Trainer's and the data collators' label for positions not to score
SCORE_NAMES = ("precision", "recall", "f1")
MATCH_CRITERIA = tuple(c.name for c in CRITERIA)
SEMEVAL_SCHEMES = ("semeval_strict", "semeval_exact", "semeval_partial", "semeval_type")
ALL_CRITERIA: tuple[str, ...] = (*MATCH_CRITERIA, "token", *SEMEVAL_SCHEMES)
# The options of spanscore.evaluate that change a number; reading options other than the encoding
# and the repair policy have no meaning for label ids.
SCORING_OPTIONS = (
    "repair",
    "credit",
    "matching",
    "min_overlap",
    "min_overlap_of",
    "types",
    "type_map",
    "zero_division",
)


def check_criteria(criteria: Sequence[str] | None) -> tuple[str, ...]:
    """The names of ``criteria`` whose scores are wanted (None: all of them)."""
    if criteria is None:
        return ALL_CRITERIA
    if isinstance(criteria, str) or not isinstance(criteria, Sequence):
        names = ", ".join(ALL_CRITERIA)
        raise OptionError(f"criteria must be a list of names, not {criteria!r}; the names are: {names}")
    unknown = [c for c in criteria if c not in ALL_CRITERIA]
    if unknown:
        raise OptionError(f"unknown criterion {unknown[0]!r}: use any of {', '.join(ALL_CRITERIA)}")
    if not criteria:
        raise OptionError(f"criteria names no criterion: use any of {', '.join(ALL_CRITERIA)}")
    return tuple(dict.fromkeys(criteria))


def check_options(labels: Any, options: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The encoding's name and ``options`` as spanscore.evaluate takes them. ``scheme`` (seqeval's
    name) may give the encoding instead of ``labels``; an unknown option is refused rather than
    ignored, since a misspelt one would silently score with the default."""
    opts = dict(options)
    if "scheme" in opts:
        scheme = opts.pop("scheme")
        if labels not in ("BIO", scheme):
            raise OptionError(f"labels={labels!r} and scheme={scheme!r} name two encodings: give one")
        labels = scheme
    if not isinstance(labels, str):
        raise OptionError(f"labels must be the name of a label encoding, not {type(labels).__name__}")
    unknown = sorted(set(opts) - set(SCORING_OPTIONS))
    if unknown:
        raise OptionError(f"unknown option {unknown[0]!r}: the scoring options are {', '.join(SCORING_OPTIONS)}")
    return labels, opts


def flat_metrics(scores: Scores, criteria: Sequence[str], types: Sequence[str] = ()) -> dict[str, float]:
    """The scores of ``criteria`` as flat scalar keys (``strict_f1``), and per type of ``types``
    (``strict_f1_PER``); every type of ``types`` must be in ``scores``."""
    out: dict[str, float] = {}
    for name in criteria:
        block = _block(scores["metrics"], scores["semeval"], name)
        for score in SCORE_NAMES:
            out[f"{name}_{score}"] = float(block[score])
    for name in criteria:
        for t in types:
            per = scores["per_type"][t]
            block = _block(per["metrics"], per["semeval"], name)
            for score in SCORE_NAMES:
                out[f"{name}_{score}_{t}"] = float(block[score])
    return out


def _block(metrics: Mapping[str, Any], semeval: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    if name.startswith("semeval_"):
        return semeval[name[len("semeval_") :]]  # type: ignore[no-any-return]
    return metrics[name]  # type: ignore[no-any-return]


@dataclass(frozen=True)
class _Vocabulary:
    """``id2label`` as arrays: the label of each id, and which ids it names."""

    labels: tuple[str, ...]
    known: np.ndarray[Any, np.dtype[np.bool_]]

    @staticmethod
    def of(id2label: Any, spec: EncodingSpec) -> _Vocabulary:
        if isinstance(id2label, Mapping):
            try:
                pairs = {int(k): v for k, v in id2label.items()}
            except (TypeError, ValueError):
                raise OptionError("id2label must map integer label ids to label strings") from None
        elif isinstance(id2label, Sequence) and not isinstance(id2label, str | bytes):
            pairs = dict(enumerate(id2label))
        else:
            raise OptionError(f"id2label must be a mapping from label id to label, not {type(id2label).__name__}")
        if not pairs:
            raise OptionError("id2label names no label")
        if min(pairs) < 0:
            raise OptionError(f"id2label has the negative label id {min(pairs)}")
        allowed = ", ".join(f"{p}-TYPE" for p in spec.prefixes)
        for k, label in pairs.items():
            if not isinstance(label, str):
                raise OptionError(f"id2label[{k}] must be a label string, not {label!r}")
            head, sep, typ = label.partition("-")
            if label != "O" and not (sep and typ and head in spec.prefixes):
                raise OptionError(
                    f"id2label[{k}] is {shorten(label)}, which is not O or {allowed}: give the encoding as labels="
                )
        size = max(pairs) + 1
        known = np.zeros(size, dtype=bool)
        known[list(pairs)] = True
        # An id that id2label skips decodes as O here, but ``known`` refuses it before decoding.
        return _Vocabulary(tuple(pairs.get(i, "O") for i in range(size)), known)


class SpanscoreMetrics:
    """A ``compute_metrics`` for the Trainer (see the module's docstring); ``make_compute_metrics``
    builds one.

    ``metrics(eval_pred)`` scores one ``EvalPrediction`` (or a ``(predictions, label_ids)`` pair).
    ``metrics(eval_pred, compute_result=False)`` only adds its counts; the next call with
    ``compute_result=True`` (the default) adds its own, returns the scores of all of them and
    starts afresh: that is how the Trainer calls it under ``batch_eval_metrics=True``, its last
    batch marked ``compute_result=True``. An evaluation cut short (an exception in the model, say)
    leaves its counts behind: ``reset()`` drops them.
    """

    def __init__(
        self,
        id2label: Any,
        *,
        labels: str = "BIO",
        per_type: bool = False,
        criteria: Sequence[str] | None = None,
        scoring: Scoring | None = None,
        **options: Any,
    ) -> None:
        labels, opts = check_options(labels, options)
        if not isinstance(per_type, bool):
            raise OptionError(f"per_type must be True or False, not {per_type!r}")
        self.spec = get_encoding(labels)
        self.criteria = check_criteria(criteria)
        self.per_type = per_type
        self.repair: Repair = check_repair(opts.pop("repair", "conlleval"))
        self.scoring = Scoring.of(scoring, **opts)
        self.options = self.scoring.options
        self.zero_division = self.scoring.zero_division
        self.vocabulary = _Vocabulary.of(id2label, self.spec)
        self.label_set = split_labels(self.vocabulary.labels, self.spec)
        self.selection = self.scoring.selection
        # Checked against id2label now rather than against the data at the end of an evaluation.
        self.selection.check(frozenset(self.label_set.types))
        none = Spans.empty(self.label_set.types)
        self.types: tuple[str, ...] = self.selection.apply(none, none)[0].types
        self._counts: Counts | None = None

    def __call__(self, eval_pred: Any, compute_result: bool = True) -> dict[str, float]:
        predictions, label_ids = _unpack(eval_pred)
        self.update(predictions, label_ids)
        if not compute_result:
            return {}
        return self.compute()

    def update(self, predictions: Any, label_ids: Any) -> None:
        """Add the counts of one batch (or of the whole set)."""
        batch = self.count(predictions, label_ids)
        # Merged only once the whole batch is counted: a batch that fails adds nothing.
        self._counts = batch if self._counts is None else self._counts.merge(batch)

    def compute(self) -> dict[str, float]:
        """The metrics of every batch added since the last ``compute`` or ``reset``, which then starts afresh."""
        total = self.counts
        self._counts = None
        scores = score_counts(total, zero_division=self.zero_division)
        out = flat_metrics(scores, self.criteria)
        if self.per_type:
            # Over every type, so that each evaluation logs the same keys; the micro scores above are
            # computed without the absent types, as spanscore.evaluate computes them.
            wide = score_counts(total.with_types(self.types), zero_division=self.zero_division)
            out.update(flat_metrics(wide, self.criteria, self.types))
        return out

    def reset(self) -> None:
        """Drop the counts added so far."""
        self._counts = None

    @property
    def counts(self) -> Counts:
        """The counts added so far (the zero counts before any batch)."""
        return self._counts if self._counts is not None else self._zero()

    def _zero(self) -> Counts:
        return Counts.zeros((), credit_label(self.options.credit), MATCH_CRITERIA)

    def count(self, predictions: Any, label_ids: Any) -> Counts:
        """The counts of predictions against labels (numpy arrays, torch tensors, or lists of per-batch
        arrays as the Trainer gives with ``eval_do_concat_batches=False``), without adding them."""
        if isinstance(label_ids, list):
            if not isinstance(predictions, list) or len(predictions) != len(label_ids):
                raise OptionError("label_ids is a list of batches: predictions must be a list of as many batches")
            total = self._zero()
            for p, g in zip(predictions, label_ids, strict=True):
                total = total.merge(self.count(p, g))
            return total
        gold = _label_array(label_ids)
        pred = _prediction_array(predictions, gold.ndim)
        if pred.shape != gold.shape:
            raise OptionError(
                f"predictions of shape {_shape(predictions)} do not match label_ids of shape {gold.shape}"
                " (give logits [batch, length, labels] or label ids [batch, length])"
            )
        mask = gold != IGNORE_INDEX
        ref_ids = gold[mask]
        pred_ids = pred[mask]
        self._check_ids("label_ids", ref_ids)
        self._check_ids("predictions", pred_ids)
        bounds = np.zeros(gold.shape[0] + 1, dtype=np.int64)
        np.cumsum(mask.sum(axis=1), out=bounds[1:])
        reference = self._decode("label_ids", ref_ids, bounds)
        predicted = self._decode("predictions", pred_ids, bounds)
        reference, predicted = self.selection.apply(reference, predicted)
        counts, _ = count(reference, predicted, self.options)
        counts.documents, counts.sentences, counts.tokens = 0, int(gold.shape[0]), int(ref_ids.shape[0])
        return counts

    def _check_ids(self, name: str, ids: IntArray) -> None:
        known = self.vocabulary.known
        outside = (ids < 0) | (ids >= known.shape[0])
        if outside.any():
            bad = int(ids[np.flatnonzero(outside)[0]])
        else:
            unnamed = ~known[ids]
            if not unnamed.any():
                return
            bad = int(ids[np.flatnonzero(unnamed)[0]])
        where = " (at a position whose label is not -100)" if name == "predictions" else ""
        raise OptionError(f"{name} holds the label id {bad}{where}, which id2label does not name")

    def _decode(self, name: str, ids: IntArray, bounds: IntArray) -> Spans:
        decoded = decode(ids, bounds, self.label_set, self.spec, self.repair)
        if self.repair == "none" and decoded.n_invalid:
            n = ids.shape[0]
            first = np.zeros(n, dtype=bool)
            first[bounds[:-1][bounds[:-1] < n]] = True
            found = invalid_transitions(decoded, ids, self.vocabulary.labels, np.arange(n), first, name)
            at = found[0].line
            sentence = int(np.searchsorted(bounds, at, side="right")) - 1
            raise InputError(
                f"{name}, sentence {sentence} of the batch, labelled position {at - int(bounds[sentence])}:"
                f" {found[0].what} ({len(found)} invalid {self.spec.name} transition{'s' if len(found) > 1 else ''};"
                " choose repair='conlleval' or 'discard')"
            )
        return decoded.spans


def make_compute_metrics(
    id2label: Any,
    *,
    labels: str = "BIO",
    per_type: bool = False,
    criteria: Sequence[str] | None = None,
    scoring: Scoring | None = None,
    **options: Any,
) -> SpanscoreMetrics:
    """A ``compute_metrics`` callable for ``transformers.Trainer`` that scores with spanscore.

    ``id2label`` maps label ids to labels (``model.config.id2label``, or a list of labels);
    ``labels`` names their encoding (BIO, IOB1, BIOES, BILOU...; ``scheme=`` is accepted as
    seqeval's name for it). ``criteria`` chooses the scores returned (all by default, see the
    module's docstring), ``per_type`` adds them per entity type. ``options`` are spanscore.evaluate's
    scoring options: ``repair``, ``credit``, ``matching``, ``min_overlap``, ``min_overlap_of``,
    ``types``, ``type_map``, ``zero_division``. Positions labelled -100 are not scored (the module's
    docstring says what that means for subwords). Bad options raise ``OptionError`` here, before
    any training.
    """
    return SpanscoreMetrics(
        id2label, labels=labels, per_type=per_type, criteria=criteria, scoring=scoring, **options
    )


def _unpack(eval_pred: Any) -> tuple[Any, Any]:
    if hasattr(eval_pred, "predictions") and hasattr(eval_pred, "label_ids"):
        return eval_pred.predictions, eval_pred.label_ids
    if isinstance(eval_pred, tuple | list) and len(eval_pred) == 2:
        return eval_pred[0], eval_pred[1]
    raise OptionError(f"expected an EvalPrediction or a (predictions, label_ids) pair, not {type(eval_pred).__name__}")


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "detach") and hasattr(x, "cpu") and hasattr(x, "numpy")


def _shape(x: Any) -> tuple[int, ...]:
    if isinstance(x, tuple):
        x = x[0]
    return tuple(int(d) for d in getattr(x, "shape", np.shape(x)))


def _label_array(label_ids: Any) -> IntArray:
    if label_ids is None:
        raise OptionError("label_ids is None: the evaluation set needs a labels column")
    if isinstance(label_ids, tuple):
        raise OptionError("label_ids holds several label columns: spanscore scores one (set label_names to one name)")
    a = label_ids.detach().cpu().numpy() if _is_tensor(label_ids) else np.asarray(label_ids)
    if a.ndim != 2:
        raise OptionError(f"label_ids must be [batch, length], not of shape {a.shape}")
    return _integers("label_ids", a)


def _prediction_array(predictions: Any, label_ndim: int) -> IntArray:
    if isinstance(predictions, tuple):  # a model with several outputs: the logits come first
        if not predictions:
            raise OptionError("predictions is an empty tuple")
        predictions = predictions[0]
    if predictions is None:
        raise OptionError("predictions is None: the model returned no logits")
    if _is_tensor(predictions):
        x = predictions.detach()
        if x.ndim == label_ndim + 1:
            x = x.argmax(dim=-1)  # on the device: only the ids cross to the host
        elif x.is_floating_point():
            x = x.float()  # bfloat16 has no numpy type
        a = x.cpu().numpy()
    else:
        a = np.asarray(predictions)
        if a.ndim == label_ndim + 1:
            a = a.argmax(axis=-1)
    return _integers("predictions", a)


def _integers(name: str, a: np.ndarray[Any, Any]) -> IntArray:
    if a.dtype.kind in "iu":
        return a.astype(np.int64, copy=False)
    if a.dtype.kind == "f" and bool(np.all(np.isfinite(a))) and bool(np.all(a == np.round(a))):
        return a.astype(np.int64)
    raise OptionError(f"{name} must hold label ids (integers), not {a.dtype} values")

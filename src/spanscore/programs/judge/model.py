"""Judges of boundary mismatches, and their files.

A ``SpanJudge`` holds an entity classifier and word statistics, and decides in one of two ways:

- without human scores, by a rule: ``classifier`` is Nejadgholi et al.'s (accept when the classifier's top
  class for the predicted text is the predicted label); ``contains`` (default) also accepts every
  prediction that contains the whole gold span, which loses nothing the annotator marked;
- with human scores, by an acceptance model (``acceptance.py``) that starts from the rule: for
  predictions that drop gold words, and for those that only add words, a logistic regression
  whose offset is the rule's log-odds and whose prior is centred on the rule, over
  ``features.FEATURES`` (span relation, dropped and added words, information dropped, classifier
  probabilities) learned from the judgements.

Judge files are ``.npz`` archives read with ``allow_pickle=False``: a JSON header (format name
and version, backend, rule, feature names) and plain numeric or string arrays. Loading never runs
code from the file, and a file of another format version is refused.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ... import __version__
from ...errors import InputError, OptionError
from ...io.files import atomic_output
from ...stages.judging import Mismatch
from .acceptance import GROUPS, Acceptance, GroupModel, group_of
from .classifier import Arrays, EntityClassifier, get_backend
from .features import FEATURES, Lexicon, features, pairwise_probability

FloatArray = npt.NDArray[np.float64]
Rule = Literal["classifier", "contains"]
RULES: tuple[str, ...] = ("classifier", "contains")

FORMAT = "spanscore-judge"
FORMAT_VERSION = 2
# Version 1 files are read when they hold no acceptance model: their rule judges are the same.
READABLE = (1, 2)
_META = "__meta__"


def rule_probability(items: Sequence[Mismatch], classifier: EntityClassifier, rule: Rule) -> FloatArray:
    """The rule's acceptance probability: the paper's pairwise probability, and 1 for a prediction
    that contains the gold span under ``contains``."""
    p = pairwise_probability(items, classifier)
    if rule == "contains" and len(items):
        p[np.array([group_of(it) == "adds" for it in items])] = 1.0
    return p


class SpanJudge:
    """An entity classifier, word statistics, and a way of turning them into acceptance
    probabilities: a rule, or an acceptance model learned from human scores."""

    def __init__(
        self,
        classifier: EntityClassifier,
        lexicon: Lexicon,
        *,
        rule: Rule = "contains",
        acceptance: Acceptance | None = None,
        name: str | None = None,
    ) -> None:
        if rule not in RULES:
            raise OptionError(f"rule must be one of {', '.join(RULES)}, not {rule!r}")
        self.classifier = classifier
        self.lexicon = lexicon
        self.rule: Rule = rule
        self.acceptance = acceptance
        how = f"learned-{acceptance.user}" if acceptance is not None else rule
        self.name = name or f"{classifier.backend}-{how}"

    def rule_probability(self, items: Sequence[Mismatch]) -> FloatArray:
        return rule_probability(items, self.classifier, self.rule)

    def accept_probability(self, items: Sequence[Mismatch]) -> FloatArray:
        if not items:
            return np.zeros(0)
        rule = self.rule_probability(items)
        if self.acceptance is None:
            return rule
        return self.acceptance.predict(features(items, self.classifier, self.lexicon), items, rule)

    def save(self, path: str | Path) -> None:
        meta_c, arrays_c = self.classifier.state()
        meta_l, arrays_l = self.lexicon.state()
        meta: dict[str, Any] = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "spanscore": __version__,
            "name": self.name,
            "rule": self.rule,
            "classifier": meta_c,
            "lexicon": meta_l,
            "acceptance": None,
        }
        arrays: Arrays = {f"classifier.{k}": v for k, v in arrays_c.items()}
        arrays.update({f"lexicon.{k}": v for k, v in arrays_l.items()})
        if self.acceptance is not None:
            a = self.acceptance
            groups: dict[str, Any] = {}
            for g, m in a.groups.items():
                groups[g] = {"slope": m.slope, "intercept": m.intercept, "scores": m.scores}
                arrays.update({f"acceptance.{g}.mean": m.mean, f"acceptance.{g}.scale": m.scale,
                               f"acceptance.{g}.coef": m.coef})
            meta["acceptance"] = {
                "features": list(a.feature_names), "user": a.user, "groups": groups, "reviewers": list(a.reviewers)
            }
        arrays[_META] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
        # A file object: np.savez would append .npz to a name. Written whole or not at all.
        with atomic_output(path) as fh:
            np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]


class CallableJudge:
    """A user's function as a judge: ``fn(mismatch) -> probability`` (or a list -> probabilities
    with ``batched=True``)."""

    def __init__(
        self,
        fn: Callable[[Mismatch], float] | Callable[[Sequence[Mismatch]], Sequence[float]],
        *,
        batched: bool = False,
        name: str | None = None,
    ) -> None:
        self.fn = fn
        self.batched = batched
        self.name = name or getattr(fn, "__name__", "callable")

    def accept_probability(self, items: Sequence[Mismatch]) -> FloatArray:
        if self.batched:
            out = np.asarray(self.fn(items), dtype=np.float64)  # type: ignore[arg-type]
        else:
            out = np.array([float(self.fn(it)) for it in items], dtype=np.float64)  # type: ignore[arg-type]
        if out.shape != (len(items),):
            raise OptionError(f"judge {self.name} returned {out.shape} values for {len(items)} mismatches")
        return out


def load_judge(path: str | Path) -> SpanJudge:
    """Read a judge file written by ``SpanJudge.save`` (``spanscore judge train``)."""
    name = str(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
    except FileNotFoundError:
        raise InputError("no such file", path=name) from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        raise InputError("not a spanscore judge file (write one with spanscore judge train)", path=name) from None
    if _META not in arrays:
        raise InputError("not a spanscore judge file: no header", path=name)
    try:
        meta = json.loads(arrays.pop(_META).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InputError("not a spanscore judge file: unreadable header", path=name) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputError("not a spanscore judge file: wrong format name", path=name)
    version = meta.get("format_version")
    if version not in READABLE or (version != FORMAT_VERSION and meta.get("acceptance") is not None):
        raise InputError(
            f"judge file format version {meta.get('format_version')!r} (written by spanscore"
            f" {meta.get('spanscore', '?')}); this spanscore reads version {FORMAT_VERSION}, and version 1 judges"
            " that learned from no scores: train the judge again",
            path=name,
        )
    try:
        backend = get_backend(str(meta["classifier"]["backend"]))
        classifier = backend.load(meta["classifier"], _part(arrays, "classifier"))
        lexicon = Lexicon.load(meta["lexicon"], _part(arrays, "lexicon"))
        rule = meta["rule"]
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}")
        acceptance = None
        if meta.get("acceptance") is not None:
            names = tuple(str(f) for f in meta["acceptance"]["features"])
            if names != FEATURES:
                raise ValueError(f"acceptance features {list(names)} differ from this spanscore's")
            groups = {}
            for g, spec in meta["acceptance"]["groups"].items():
                if g not in GROUPS:
                    raise ValueError(f"unknown group {g!r}")
                m = GroupModel(
                    np.asarray(arrays[f"acceptance.{g}.mean"], dtype=np.float64),
                    np.asarray(arrays[f"acceptance.{g}.scale"], dtype=np.float64),
                    np.asarray(arrays[f"acceptance.{g}.coef"], dtype=np.float64),
                    float(spec["slope"]),
                    float(spec["intercept"]),
                    int(spec["scores"]),
                )
                if not m.mean.shape == m.scale.shape == m.coef.shape == (len(names),):
                    raise ValueError("acceptance weights do not fit its features")
                groups[g] = m
            reviewers = tuple(str(r) for r in meta["acceptance"].get("reviewers", ()))
            acceptance = Acceptance(groups, str(meta["acceptance"]["user"]), names, reviewers)
        return SpanJudge(classifier, lexicon, rule=rule, acceptance=acceptance, name=str(meta["name"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"damaged judge file: {exc}", path=name) from None


def _part(arrays: Arrays, prefix: str) -> Arrays:
    return {k[len(prefix) + 1 :]: v for k, v in arrays.items() if k.startswith(prefix + ".")}

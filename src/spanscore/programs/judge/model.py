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
from .agnostic import AGNOSTIC_FEATURES, agnostic_features, agnostic_rule
from .classifier import Arrays, EntityClassifier, get_backend
from .corpus import OTHER
from .features import FEATURES, Lexicon, features, pairwise_probability

FloatArray = npt.NDArray[np.float64]
Rule = Literal["classifier", "contains", "agnostic"]
RULES: tuple[str, ...] = ("classifier", "contains", "agnostic")
Unknown = Literal["refuse", "agnostic"]
UNKNOWN: tuple[str, ...] = ("refuse", "agnostic")

FORMAT = "spanscore-judge"
FORMAT_VERSION = 3
# Version 1 files are read when they hold no acceptance model: their rule judges are the same.
# Version 2 files lack the types, the corpus and the type-agnostic model, which are derived or absent.
READABLE = (1, 2, 3)
_META = "__meta__"
_SHOWN_TYPES = 12  # an error names at most this many known types


def rule_probability(items: Sequence[Mismatch], classifier: EntityClassifier, rule: Rule) -> FloatArray:
    """The rule's acceptance probability: the paper's pairwise probability, and 1 for a prediction
    that contains the gold span under ``contains``; the type-agnostic rule under ``agnostic``."""
    if rule == "agnostic":
        return agnostic_rule(items, classifier)
    p = pairwise_probability(items, classifier)
    if rule == "contains" and len(items):
        p[np.array([group_of(it) == "adds" for it in items])] = 1.0
    return p


def features_of(items: Sequence[Mismatch], classifier: EntityClassifier, lexicon: Lexicon, rule: Rule) -> FloatArray:
    """What the acceptance model of a judge with ``rule`` reads: the typed ``FEATURES``, or
    ``AGNOSTIC_FEATURES`` for the type-agnostic rule."""
    if rule == "agnostic":
        return agnostic_features(items, classifier)
    return features(items, classifier, lexicon)


def feature_names(rule: str) -> tuple[str, ...]:
    return AGNOSTIC_FEATURES if rule == "agnostic" else FEATURES


def _listed(names: Sequence[str]) -> str:
    shown = list(names[:_SHOWN_TYPES])
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


class UnknownTypes(InputError):
    """A judge asked about mentions of types its corpus never had."""


class SpanJudge:
    """An entity classifier, word statistics, and a way of turning them into acceptance
    probabilities: a rule, or an acceptance model learned from human scores.

    A typed judge (rule ``contains`` or ``classifier``) knows the types of its training corpus and
    refuses mentions of any other type (``UnknownTypes``), unless ``unknown="agnostic"``: then its
    type-agnostic model (the agnostic rule, corrected by ``agnostic`` where it learned one) judges
    them, and its name says so. A judge with rule ``agnostic`` judges every type alike.
    """

    def __init__(
        self,
        classifier: EntityClassifier,
        lexicon: Lexicon,
        *,
        rule: Rule = "contains",
        acceptance: Acceptance | None = None,
        name: str | None = None,
        types: Sequence[str] | None = None,
        corpus: dict[str, Any] | None = None,
        agnostic: Acceptance | None = None,
        unknown: Unknown = "refuse",
        written_by: str = __version__,
    ) -> None:
        if rule not in RULES:
            raise OptionError(f"rule must be one of {', '.join(RULES)}, not {rule!r}")
        if unknown not in UNKNOWN:
            raise OptionError(f"unknown types: one of {', '.join(UNKNOWN)}, not {unknown!r}")
        self.classifier = classifier
        self.lexicon = lexicon
        self.rule: Rule = rule
        self.acceptance = acceptance
        self.agnostic = agnostic
        self.types: tuple[str, ...] = tuple(
            sorted(types) if types is not None else (c for c in classifier.classes if c != OTHER)
        )
        self.corpus = corpus
        self.unknown: Unknown = unknown
        self.written_by = written_by
        how = rule if acceptance is None else f"learned-{acceptance.user}"
        if acceptance is not None and rule == "agnostic":
            how = f"agnostic-learned-{acceptance.user}"
        base = name or f"{classifier.backend}-{how}"
        self.base_name = base
        self.name = base + ("+agnostic" if unknown == "agnostic" and rule != "agnostic" else "")

    def with_unknown(self, unknown: Unknown) -> SpanJudge:
        """The same judge, refusing unknown types or judging them with its type-agnostic model."""
        return SpanJudge(
            self.classifier, self.lexicon, rule=self.rule, acceptance=self.acceptance, name=self.base_name,
            types=self.types, corpus=self.corpus, agnostic=self.agnostic, unknown=unknown,
            written_by=self.written_by,
        )

    def agnostic_model(self) -> Acceptance | None:
        """The judge's type-agnostic acceptance model, which another corpus's agnostic judge can
        carry over (``judge train --rule agnostic --acceptance-from``)."""
        return self.acceptance if self.rule == "agnostic" else self.agnostic

    def unknown_types(self, items: Sequence[Mismatch]) -> list[str]:
        """Labels of ``items`` that are not types of the judge's corpus (none for an agnostic judge)."""
        if self.rule == "agnostic":
            return []
        known = set(self.types)
        return sorted({it.label for it in items} - known)

    def check_types(self, labels: Sequence[str] | set[str]) -> None:
        """Refuse labels the judge does not know, unless it judges them with its agnostic model."""
        if self.rule == "agnostic" or self.unknown == "agnostic":
            return
        unknown = sorted(set(labels) - set(self.types))
        if unknown:
            where = f" (trained on {self.corpus['path']})" if self.corpus and self.corpus.get("path") else ""
            raise UnknownTypes(
                f"judge {self.name} knows the types {_listed(self.types)}{where}, not {_listed(unknown)}: train a"
                " judge on a corpus of these types, or judge them with a type-agnostic model (spanscore judge"
                " train --rule agnostic, or --judge-unknown agnostic)"
            )

    def rule_probability(self, items: Sequence[Mismatch]) -> FloatArray:
        return rule_probability(items, self.classifier, self.rule)

    def agnostic_probability(self, items: Sequence[Mismatch]) -> FloatArray:
        """The type-agnostic model's probability: the agnostic rule, corrected by what it learned."""
        # a typed judge's fallback judges types of another domain: its model is carried there
        model = self.acceptance if self.rule == "agnostic" else self.agnostic.carried() if self.agnostic else None
        rule = agnostic_rule(items, self.classifier)
        if model is None or not items:
            return rule
        return model.predict(agnostic_features(items, self.classifier), items, rule)

    def accept_probability(self, items: Sequence[Mismatch]) -> FloatArray:
        if not items:
            return np.zeros(0)
        if self.rule == "agnostic":
            return self.agnostic_probability(items)
        unknown = set(self.unknown_types(items))
        if unknown:
            self.check_types(unknown)
            out = np.zeros(len(items))
            strange = np.array([it.label in unknown for it in items])
            out[strange] = self.agnostic_probability([it for it in items if it.label in unknown])
            if (~strange).any():
                out[~strange] = self._typed([it for it in items if it.label not in unknown])
            return out
        return self._typed(items)

    def _typed(self, items: Sequence[Mismatch]) -> FloatArray:
        rule = self.rule_probability(items)
        if self.acceptance is None:
            return rule
        return self.acceptance.predict(features(items, self.classifier, self.lexicon), items, rule)

    def describe(self) -> dict[str, Any]:
        """What the judge is: what ``spanscore judge show`` prints."""

        def model(a: Acceptance | None) -> dict[str, Any] | None:
            if a is None:
                return None
            return {
                "user": a.user,
                "reviewers": list(a.reviewers),
                "features": list(a.feature_names),
                "groups": {g: m.scores for g, m in sorted(a.groups.items())},
                "carried": a.carried_over,
                "acceptance_rate": a.acceptance_rate(),
            }

        return {
            "name": self.base_name,
            "format_version": FORMAT_VERSION,
            "written_by": self.written_by,
            "backend": self.classifier.backend,
            "rule": self.rule,
            "types": "any (type-agnostic)" if self.rule == "agnostic" else list(self.types),
            "classifier_types": [c for c in self.classifier.classes if c != OTHER],
            "corpus": self.corpus,
            "features": list(feature_names(self.rule)),
            "acceptance": model(self.acceptance),
            "agnostic_fallback": model(self.agnostic) if self.rule != "agnostic" else None,
        }

    def save(self, path: str | Path) -> None:
        meta_c, arrays_c = self.classifier.state()
        meta_l, arrays_l = self.lexicon.state()
        meta: dict[str, Any] = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "spanscore": __version__,
            "name": self.base_name,
            "rule": self.rule,
            "types": list(self.types),
            "corpus": self.corpus,
            "features": list(feature_names(self.rule)),
            "classifier": meta_c,
            "lexicon": meta_l,
            "acceptance": None,
            "agnostic": None,
        }
        arrays: Arrays = {f"classifier.{k}": v for k, v in arrays_c.items()}
        arrays.update({f"lexicon.{k}": v for k, v in arrays_l.items()})
        meta["acceptance"] = _save_acceptance(self.acceptance, "acceptance", arrays)
        meta["agnostic"] = _save_acceptance(self.agnostic, "agnostic", arrays)
        arrays[_META] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
        # A file object: np.savez would append .npz to a name. Written whole or not at all.
        with atomic_output(path) as fh:
            np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]


def _save_acceptance(a: Acceptance | None, prefix: str, arrays: Arrays) -> dict[str, Any] | None:
    if a is None:
        return None
    groups: dict[str, Any] = {}
    for g, m in a.groups.items():
        groups[g] = {"slope": m.slope, "intercept": m.intercept, "scores": m.scores, "accepted": m.accepted}
        arrays.update({f"{prefix}.{g}.mean": m.mean, f"{prefix}.{g}.scale": m.scale, f"{prefix}.{g}.coef": m.coef})
    return {"features": list(a.feature_names), "user": a.user, "groups": groups, "reviewers": list(a.reviewers),
            "carried": a.carried_over, "scores": a.scores, "accepted": a.accepted, "shift": a.shift}


def _load_acceptance(spec: Any, prefix: str, arrays: Arrays, expected: tuple[str, ...]) -> Acceptance | None:
    if spec is None:
        return None
    names = tuple(str(f) for f in spec["features"])
    if names != expected:
        raise ValueError(f"{prefix} features {list(names)} differ from this spanscore's")
    groups = {}
    for g, gspec in spec["groups"].items():
        if g not in GROUPS:
            raise ValueError(f"unknown group {g!r}")
        m = GroupModel(
            np.asarray(arrays[f"{prefix}.{g}.mean"], dtype=np.float64),
            np.asarray(arrays[f"{prefix}.{g}.scale"], dtype=np.float64),
            np.asarray(arrays[f"{prefix}.{g}.coef"], dtype=np.float64),
            float(gspec["slope"]),
            float(gspec["intercept"]),
            int(gspec["scores"]),
            None if gspec.get("accepted") is None else int(gspec["accepted"]),
        )
        if not m.mean.shape == m.scale.shape == m.coef.shape == (len(names),):
            raise ValueError(f"{prefix} weights do not fit its features")
        groups[g] = m
    reviewers = tuple(str(r) for r in spec.get("reviewers", ()))
    counts = [None if spec.get(k) is None else int(spec[k]) for k in ("scores", "accepted")]
    return Acceptance(groups, str(spec["user"]), names, reviewers, bool(spec.get("carried", False)), counts[0],
                      counts[1], float(spec.get("shift", 0.0)))


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
    if version not in READABLE or (version == 1 and meta.get("acceptance") is not None):
        raise InputError(
            f"judge file format version {meta.get('format_version')!r} (written by spanscore"
            f" {meta.get('spanscore', '?')}); this spanscore reads versions 2 and {FORMAT_VERSION}, and version 1"
            " judges that learned from no scores: train the judge again",
            path=name,
        )
    try:
        backend = get_backend(str(meta["classifier"]["backend"]))
        classifier = backend.load(meta["classifier"], _part(arrays, "classifier"))
        lexicon = Lexicon.load(meta["lexicon"], _part(arrays, "lexicon"))
        rule = meta["rule"]
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}")
        acceptance = _load_acceptance(meta.get("acceptance"), "acceptance", arrays, feature_names(rule))
        agnostic = _load_acceptance(meta.get("agnostic"), "agnostic", arrays, AGNOSTIC_FEATURES)
        types = meta.get("types")
        if types is not None and not (isinstance(types, list) and all(isinstance(t, str) for t in types)):
            raise ValueError("types is not a list of names")
        corpus = meta.get("corpus")
        if corpus is not None and not isinstance(corpus, dict):
            raise ValueError("corpus is not an object")
        return SpanJudge(classifier, lexicon, rule=rule, acceptance=acceptance, name=str(meta["name"]), types=types,
                         corpus=corpus, agnostic=agnostic, written_by=str(meta.get("spanscore", "?")))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"damaged judge file: {exc}", path=name) from None


def _part(arrays: Arrays, prefix: str) -> Arrays:
    return {k[len(prefix) + 1 :]: v for k, v in arrays.items() if k.startswith(prefix + ".")}

"""nervaluate 1.2.1, computed by spanscore's engine: change the imports, keep the code.

This package mirrors nervaluate's modules, so that ``nervaluate`` becomes
``spanscore.compat.nervaluate`` in each import line and nothing else changes; nervaluate's own
test suite passes against it with its imports so rewritten (``python tools/peer_suites.py
nervaluate``):

- ``.evaluator`` (``Evaluator`` and its reports), ``.entities`` (``Entity``,
  ``EvaluationResult``, ``EvaluationIndices``), ``.loaders`` (``DataLoader``, ``ConllLoader``,
  ``ListLoader``, ``DictLoader``), ``.strategies`` (``EvaluationStrategy``,
  ``StrictEvaluation``, ``PartialEvaluation``, ``EntityTypeEvaluation``, ``ExactEvaluation``)
  and ``.utils`` (``collect_named_entities``, ``list_to_spans``, ``conll_to_spans``,
  ``split_list``, ``find_overlap``, ``clean_entities``).

Those are *faithful*: on any input the same figures (floats to the last bit), indices, report
strings and exception types as nervaluate, its odd readings included: the matching that depends
on the order of the entity lists (below), tags it reads on without a check (``B-PER E-PER`` is one
entity), ``loader="default"`` failing on an empty first document, ``summary_report_indices``
looking every index up in the unfiltered predictions, and the tags of ``entities`` in the order of
the set nervaluate collects them in. ``Evaluator`` computes on arrays: labels decoded by
spanscore's decoder, every overlapping pair of the corpus found at once by spanscore's
``find_pairs``, each pair's category read from spanscore's SemEval criteria tables, counts summed
per tag and scheme; only a document whose figures depend on list order is walked by nervaluate's
strategies, as nervaluate walks every document. The loaded entities (``Evaluator.true``,
``.pred``) are made when first read.

This module itself is the *guarded* face, where nervaluate's README imports from
(``from nervaluate import Evaluator``): nervaluate's signatures, return shapes, figures and
indices, its matching included, but input that nervaluate silently misreads is refused, and two of
its outputs are put right. Each difference is pinned by a test in tests/test_compat_nervaluate.py,
numbered as there:

3. **Tags other than O, B-X and I-X raise** ``ValueError("Invalid tag format: ...")`` wherever
   they stand, in the loaders and in ``collect_named_entities``, ``list_to_spans`` and
   ``conll_to_spans``. nervaluate raises only where such a tag would start an entity (its utils
   never); elsewhere it reads it as going on (``["B-PER", "E-PER", "S-PER"]`` is one PER entity),
   and ``B-`` alone is an entity of type ``""``: the input is in another encoding, and reading it
   as BIO scores entities nobody annotated.
4. **An entity that ends before it starts raises** ``ValueError`` (dict loader). nervaluate
   divides by zero or scores a negative overlap.
5. **``loader="default"`` with an empty first document** infers the loader from the first
   non-empty document; nervaluate raises ``IndexError`` (it reads ``true[0][0]``).
6. **``summary_report_indices`` names the entity each index refers to**: the reference entity for
   a missed one, and the entity of the list filtered by ``tags`` (by the one tag per tag) that the
   index counts in. nervaluate looks every index up in the unfiltered predictions, so it names the
   wrong entity (or raises ``IndexError``) for missed entities and wherever ``tags`` filtered
   something out.
7. **Tags in ``entities`` are sorted**; nervaluate's order is a set's, which changes with the
   hash seed, and so do the listings of ``results_to_csv`` and ``summary_report_indices``.

Bad input otherwise raises nervaluate's error with its message, as a class that is also a
spanscore ``InputError`` (``OptionError`` for an unknown loader or percentage).

**Matching** (differences 1 and 2 of an earlier version, which matched as spanscore does, are
gone: both faces now give nervaluate's figures). Each strategy walks a document's predictions in
list order, and each takes a reference not taken yet that it overlaps by
``min_overlap_percentage`` of the reference's length: a same-span one (under ``strict`` also
same-type) wherever it stands, otherwise the first; under ``ent_type`` the same-type one with the
closest boundaries, otherwise the first of another type. Where an entity overlaps two on the other
side, the figures so depend on the order of the lists: with reference X 0-2 and predictions X 0-0
then X 0-2, ``strict`` is INC 1 SPU 1, and COR 1 SPU 1 with the predictions swapped. spanscore's
own API (``spanscore.evaluate``, the SemEval schemes) pairs mentions one to one whatever their
order, same-span same-type pairs first, then the most credit (docs/criteria.md).

>>> true = [["O", "B-PER", "I-PER", "O", "B-ORG"]]
>>> pred = [["O", "B-PER", "O", "O", "B-LOC"]]
>>> results = Evaluator(true, pred, tags=["PER", "ORG", "LOC"], loader="list").evaluate()
>>> r = results["overall"]["partial"]
>>> r.correct, r.partial, r.missed, r.spurious, r.precision
(1, 1, 0, 0, 0.75)
>>> results["entities"]["ORG"]["strict"].missed, results["entities"]["LOC"]["strict"].spurious
(1, 1)
>>> list(results["entities"])
['LOC', 'ORG', 'PER']
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from functools import partial
from itertools import chain
from typing import Any

from . import evaluator, loaders
from ._errors import InputTypeError, InputValueError, OptionValueError
from .entities import Entity, EvaluationIndices, EvaluationResult
from .evaluator import _check, _entity_info, _painter, _table
from .loaders import DataLoader, Loaded, _conll_tags, read_dicts
from .strategies import (
    EntityTypeEvaluation,
    EvaluationStrategy,
    ExactEvaluation,
    PartialEvaluation,
    StrictEvaluation,
)
from .utils import find_overlap, spans_of, split_list

__all__ = [
    "ConllLoader",
    "DataLoader",
    "DictLoader",
    "Entity",
    "EntityTypeEvaluation",
    "EvaluationIndices",
    "EvaluationResult",
    "EvaluationStrategy",
    "Evaluator",
    "ExactEvaluation",
    "ListLoader",
    "PartialEvaluation",
    "StrictEvaluation",
    "collect_named_entities",
    "conll_to_spans",
    "find_overlap",
    "list_to_spans",
    "split_list",
]


# --------------------------------------------------------------------------------------------
# Tags (difference 3).


def _valid_tag(tag: str) -> bool:
    """O, or B-/I- and a type that is not empty."""
    return tag == "O" or (len(tag) > 2 and tag[1] == "-" and tag[0] in "BI")


def _check_tag_lists(data: Sequence[Any]) -> None:
    """nervaluate's ListLoader checks, but any tag that is not O, B-X or I-X raises wherever it is.
    The common case, every tag valid, is decided on the distinct tags."""
    if all(isinstance(doc, list) for doc in data):
        try:
            distinct = set(chain.from_iterable(data))
        except TypeError:  # an unhashable tag: found below
            distinct = {None}
        if all(isinstance(t, str) and _valid_tag(t) for t in distinct):
            return
    for doc in data:  # the first error in nervaluate's reading order
        if not isinstance(doc, list):
            raise InputValueError("Each document must be a list of tags")
        for tag in doc:
            if not isinstance(tag, str):
                raise InputValueError(f"Invalid tag type: {type(tag)}")
            if not _valid_tag(tag):
                raise InputValueError(f"Invalid tag format: {tag}")


def _checked_tag_of_line(line: str) -> str:
    tag = loaders._tag_of_line(line)
    if not _valid_tag(tag):
        raise InputValueError(f"Invalid tag format: {tag}")
    return tag


class ConllLoader(loaders.ConllLoader):
    """nervaluate's ``ConllLoader``, refusing any tag but O, B-X and I-X (difference 3)."""

    def _columns(self, data: Any) -> Loaded:
        if not isinstance(data, str):
            raise InputValueError("ConllLoader expects string input")
        if not data:
            return []
        docs, error = _conll_tags(data, _checked_tag_of_line)
        if error is not None:
            raise error
        return loaders._decoded(docs)


class ListLoader(loaders.ListLoader):
    """nervaluate's ``ListLoader``, refusing any tag but O, B-X and I-X (difference 3)."""

    def _columns(self, data: Any) -> Loaded:
        if not isinstance(data, list):
            raise InputValueError("ListLoader expects list input")
        if not data:
            return []
        _check_tag_lists(data)
        return loaders._decoded(data)


def _ends_after_start(entity: dict[str, Any]) -> None:
    if entity["end"] < entity["start"]:
        raise InputValueError(f"Entity ends before it starts: {entity!r}")


class DictLoader(loaders.DictLoader):
    """nervaluate's ``DictLoader``, refusing an entity that ends before it starts (difference 4)."""

    def _columns(self, data: Any) -> Loaded:
        return read_dicts(data, _ends_after_start)


def list_to_spans(doc: list[list[str]]) -> list[list[dict[str, Any]]]:
    """The entities of each tag list as ``{"label", "start", "end"}`` dicts (ends inclusive)."""
    sequences = [list(tags) for tags in doc]
    _check_tag_lists(sequences)
    return spans_of(sequences, check_starts=True)


def collect_named_entities(tokens: list[str]) -> list[dict[str, Any]]:
    """The entities of one tag list as ``{"label", "start", "end"}`` dicts (ends inclusive)."""
    return list_to_spans([tokens])[0]


def conll_to_spans(doc: str) -> list[list[dict[str, Any]]]:
    """The entities of each example of a ``token TAB tag`` string (examples split at empty lines)."""
    examples = split_list(doc.split("\n"), split_chars=None)
    return list_to_spans([[token.split("\t")[1] for token in example] for example in examples])


# --------------------------------------------------------------------------------------------
# The evaluator.


def _has_label(label: Any, entity: Any) -> bool:
    return bool(entity.label == label)


def _first_item(*sides: Any) -> Any:
    """The first element of the first non-empty document of each side in turn (difference 5)."""
    for side in sides:
        if isinstance(side, list):
            for doc in side:
                if isinstance(doc, list) and doc:
                    return doc[0]
    return None


class Evaluator(evaluator.Evaluator):
    """nervaluate's ``Evaluator`` (``spanscore.compat.nervaluate.evaluator.Evaluator``, the same
    figures and indices), with the guards of differences 3 to 7.

    >>> true = [[{"label": "PER", "start": 0, "end": 2}]]
    >>> pred = [[{"label": "PER", "start": 0, "end": 0}, {"label": "PER", "start": 0, "end": 2}]]
    >>> r = Evaluator(true, pred, ["PER"]).evaluate()["overall"]["strict"]
    >>> r.correct, r.incorrect, r.spurious  # nervaluate's: the first prediction takes the reference
    (0, 1, 1)
    """

    def _setup_loaders(self) -> None:
        self.loaders: dict[str, DataLoader] = {"conll": ConllLoader(), "list": ListLoader(), "dict": DictLoader()}

    def _load_data(self, true: Any, pred: Any, loader: str) -> None:
        # nervaluate fails on these with a TypeError from deep inside (len() of None, iterating
        # None): say which argument is wrong instead.
        tags: object = self.tags  # callers pass anything
        if isinstance(tags, str) or not isinstance(tags, Sequence | set):
            raise InputTypeError(f"tags must be a list of entity types, not {type(tags).__name__}")
        for name, side in (("true", true), ("pred", pred)):
            if side is None:
                raise InputTypeError(f"{name} is None: give a list of documents, or a CoNLL string")
            if isinstance(side, list):
                for k, doc in enumerate(side):
                    if doc is None:
                        raise InputTypeError(f"{name}[{k}] is None: give a list (empty for no entities)")
        super()._load_data(true, pred, loader)

    def _setup_evaluation_strategies(self) -> None:
        p: object = self.min_overlap_percentage  # callers pass anything: nervaluate checks at run time
        if not (isinstance(p, numbers.Real) and 1.0 <= float(p) <= 100.0):
            raise OptionValueError("min_overlap_percentage must be between 1.0 and 100.0")
        super()._setup_evaluation_strategies()

    def _infer_loader(self, true: Any, pred: Any) -> str:
        if isinstance(true, str):
            return "conll"
        if isinstance(true, list) and true and isinstance(true[0], list):
            return "dict" if isinstance(_first_item(true, pred), dict) else "list"
        raise InputValueError("Could not infer loader from input type")

    def _tag_order(self, used: set[Any]) -> list[Any]:
        return sorted(used)

    def _kept(self, entity: Any) -> bool:
        return entity.label in self.tags

    def summary_report_indices(self, mode: str = "overall", scenario: str = "strict", colors: bool = False) -> str:
        """Each category's ``(document, entity)`` indices under ``scenario``, overall or per tag,
        naming the entity each index refers to (difference 6)."""
        _check(mode, scenario)
        paint = _painter(colors)
        results = self.evaluate()
        sides = {"true": self._documents("true"), "pred": self._documents("pred")}

        def details_of(keep: Callable[[Any], bool]) -> Callable[[int, int, str], str]:
            def details(doc: int, k: int, category: str) -> str:
                side = sides["true" if category == "missed_indices" else "pred"]
                return _entity_info([e for e in side[doc] if keep(e)][k])

            return details

        if mode == "overall":
            head = f"\n{paint('Indices for error schema', 'bold')} '{paint(scenario, 'cyan')}':\n\n"
            kept = details_of(self._kept)
            return head + _table(results["overall_indices"][scenario], paint, kept)
        report = ""
        for tag, by_scheme in results["entity_indices"].items():
            report += f"\n{paint('Entity Type', 'bold')}: {paint(tag, 'cyan')}\n"
            report += f"{paint('Error Schema', 'bold')}: '{paint(scenario, 'cyan')}'\n\n"
            report += _table(by_scheme[scenario], paint, details_of(partial(_has_label, tag)))
        return report

"""nervaluate 1.2.1's ``nervaluate.evaluator``: ``Evaluator`` and its reports.

The same figures, indices, strings and errors as nervaluate's ``Evaluator`` on any input, its
order-dependent matching included (``strategies`` says what it is): this is nervaluate to the last
index, computed on arrays (``_engine`` says how). The tags of ``entities`` come in the order of
the set nervaluate builds them in (the same order in one process as nervaluate's, which changes
with the hash seed); the guarded ``spanscore.compat.nervaluate.Evaluator`` sorts them.

>>> true = [["O", "B-PER", "I-PER", "O", "B-ORG"]]
>>> pred = [["O", "B-PER", "O", "O", "B-LOC"]]
>>> results = Evaluator(true, pred, tags=["PER", "ORG", "LOC"], loader="list").evaluate()
>>> r = results["overall"]["partial"]
>>> r.correct, r.partial, r.missed, r.spurious, r.precision
(1, 1, 0, 0, 0.75)
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

import numpy as np

from . import _engine
from ._columns import Columns, from_entities
from ._engine import PARTIAL_FORMULA, Evaluation
from ._errors import InputValueError, OptionValueError
from .entities import Entity, EvaluationIndices, EvaluationResult
from .loaders import ConllLoader, DataLoader, DictLoader, ListLoader, Loaded, _ColumnLoader
from .strategies import (
    CATEGORY_FIELDS,
    EntityTypeEvaluation,
    EvaluationStrategy,
    ExactEvaluation,
    PartialEvaluation,
    StrictEvaluation,
)

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
]

_VALID_SCENARIOS = {"strict", "ent_type", "partial", "exact"}
_VALID_MODES = {"overall", "entities"}
_STRATEGIES: tuple[tuple[str, type[EvaluationStrategy]], ...] = (
    ("strict", StrictEvaluation),
    ("partial", PartialEvaluation),
    ("ent_type", EntityTypeEvaluation),
    ("exact", ExactEvaluation),
)
_HEADERS = ["correct", "incorrect", "partial", "missed", "spurious", "precision", "recall", "f1-score"]
_CSV_HEADERS = ["Correct", "Incorrect", "Partial", "Missed", "Spurious", "Precision", "Recall", "F1-Score"]
COLORS = {
    "reset": "\033[0m",
    "bold": "\033[1m",
    "red": "\033[91m",
    "green": "\033[92m",
    "yellow": "\033[93m",
    "blue": "\033[94m",
    "magenta": "\033[95m",
    "cyan": "\033[96m",
    "white": "\033[97m",
}
CATEGORY_COLORS = {"Correct": "green", "Incorrect": "red", "Partial": "yellow", "Missed": "magenta", "Spurious": "blue"}


class Evaluator:
    """Load both sides, then ``evaluate()`` them under nervaluate's four schemes.

    ``loader`` is ``"conll"``, ``"list"``, ``"dict"`` or ``"default"`` (inferred from ``true``);
    ``tags`` the entity types to evaluate; ``min_overlap_percentage`` the least share of a
    reference that a prediction must cover to match it (1 to 100). ``self.true`` and
    ``self.pred`` are the loaded entities (made when first read: ``evaluate()`` does not need
    them); ``self.loaders`` and ``self.strategies`` may be changed as in nervaluate, and are then
    used as they are.
    """

    def __init__(
        self, true: Any, pred: Any, tags: list[str], loader: str = "default", min_overlap_percentage: float = 1.0
    ) -> None:
        self.tags = tags
        self.min_overlap_percentage = min_overlap_percentage
        self._setup_loaders()
        self._load_data(true, pred, loader)
        self._setup_evaluation_strategies()

    # ----------------------------------------------------------------------------------------
    # Loading.

    def _setup_loaders(self) -> None:
        self.loaders: dict[str, DataLoader] = {"conll": ConllLoader(), "list": ListLoader(), "dict": DictLoader()}

    def _setup_evaluation_strategies(self) -> None:
        p = self.min_overlap_percentage
        self.strategies: dict[str, EvaluationStrategy] = {name: cls(p) for name, cls in _STRATEGIES}

    def _infer_loader(self, true: Any, pred: Any) -> str:
        """The loader of ``loader="default"``: from the type of ``true`` and its first item."""
        if isinstance(true, str):
            return "conll"
        if isinstance(true, list) and true and isinstance(true[0], list):
            return "dict" if isinstance(true[0][0], dict) else "list"
        raise InputValueError("Could not infer loader from input type")

    def _load_data(self, true: Any, pred: Any, loader: str) -> None:
        if loader == "default":
            loader = self._infer_loader(true, pred)
        if loader not in self.loaders:
            raise OptionValueError(f"Unknown loader: {loader}")
        if loader == "list":
            _same_lengths(true, pred)
        chosen = self.loaders[loader]
        self._data: dict[str, Loaded] = {}
        self._seen: dict[str, list[list[Entity]]] = {}
        for side, data in (("true", true), ("pred", pred)):
            if isinstance(chosen, _ColumnLoader) and type(chosen).load is _ColumnLoader.load:
                self._data[side] = chosen._columns(data)
            else:  # a loader of the caller's
                self._data[side] = chosen.load(data)
        if self._n_docs("true") != self._n_docs("pred"):
            raise InputValueError("Number of predicted documents does not equal true")

    # The loaded entities, made from the columns when someone reads them. From then on they are
    # what is evaluated (whoever read them may change them).

    @property
    def true(self) -> list[list[Entity]]:
        return self._expose("true")

    @true.setter
    def true(self, value: list[list[Entity]]) -> None:
        self._set("true", value)

    @property
    def pred(self) -> list[list[Entity]]:
        return self._expose("pred")

    @pred.setter
    def pred(self, value: list[list[Entity]]) -> None:
        self._set("pred", value)

    def _set(self, side: str, value: list[list[Entity]]) -> None:
        if not hasattr(self, "_data"):
            self._data, self._seen = {}, {}
        self._data[side] = value
        self._seen.pop(side, None)

    def _expose(self, side: str) -> list[list[Entity]]:
        documents = self._documents(side)
        self._data[side] = documents
        return documents

    def _documents(self, side: str) -> list[list[Entity]]:
        """The entity lists of a side, made once from the columns (without exposing them)."""
        loaded = self._data[side]
        if isinstance(loaded, list):
            return loaded
        if side not in self._seen:
            self._seen[side] = loaded.documents()
        return self._seen[side]

    def _n_docs(self, side: str) -> int:
        loaded = self._data[side]
        return loaded.n_docs if isinstance(loaded, Columns) else len(loaded)

    # ----------------------------------------------------------------------------------------
    # Evaluation.

    def evaluate(self) -> dict[str, Any]:
        """``overall`` and ``overall_indices`` by scheme; ``entities`` and ``entity_indices`` by tag
        (the tags of ``tags`` that occur on either side), then by scheme."""
        return self._evaluation().results

    def _tag_order(self, used: set[Any]) -> list[Any]:
        """The order of the tags of ``entities``: the set's, as nervaluate iterates it."""
        return list(used)

    def _used_tags(self) -> list[Any]:
        used: set[Any] = set()
        for side in ("true", "pred"):
            loaded = self._data[side]
            if isinstance(loaded, Columns):
                used.update(loaded.first_seen())
            else:
                used.update(e.label for doc in loaded for e in doc)
        return self._tag_order(used.intersection(set(self.tags)))

    def _evaluation(self) -> Evaluation:
        used = self._used_tags()
        n_docs = min(self._n_docs("true"), self._n_docs("pred"))
        if not n_docs:
            none: dict[str, Any] = {"overall": {}, "entities": {}, "overall_indices": {}, "entity_indices": {}}
            for key in ("entities", "entity_indices"):
                none[key] = {tag: {} for tag in used}
            return Evaluation(none)
        percentage = self._standard_strategies()
        if percentage is not None:
            true, pred = self._columns("true"), self._columns("pred")
            if true is not None and pred is not None and _well_formed(true) and _well_formed(pred):
                return _engine.evaluate(true, pred, n_docs, used, percentage, self.strategies)
        return self._walk_documents(used)

    def _columns(self, side: str) -> Columns | None:
        loaded = self._data[side]
        return loaded if isinstance(loaded, Columns) else from_entities(loaded)

    def _standard_strategies(self) -> float | None:
        """The overlap percentage where ``strategies`` are nervaluate's four, in its order, with one
        percentage that is an int or a float, summed by nervaluate's merges; else None (the
        strategies then walk every document)."""
        strategies = getattr(self, "strategies", None)
        if not isinstance(strategies, dict) or list(strategies) != [name for name, _ in _STRATEGIES]:
            return None
        merges = (type(self)._merge_results, type(self)._merge_indices)
        if merges != (Evaluator._merge_results, Evaluator._merge_indices):  # a subclass sums its own way
            return None
        if any(type(strategies[name]) is not cls for name, cls in _STRATEGIES):
            return None
        percentages = {strategies[name].min_overlap_percentage for name, _ in _STRATEGIES}
        if len(percentages) != 1:
            return None
        (percentage,) = percentages
        return percentage if isinstance(percentage, int | float) else None

    def _walk_documents(self, used: list[Any]) -> Evaluation:
        """nervaluate's evaluation as it runs: each strategy on each document, totals and per tag,
        summed as it sums them. For strategies of the caller's, and entities the arrays cannot
        hold (positions that are no integers, an entity that ends before it starts)."""
        results: dict[str, EvaluationResult] = {}
        indices: dict[str, EvaluationIndices] = {}
        entities: dict[Any, dict[str, EvaluationResult]] = {tag: {} for tag in used}
        entity_indices: dict[Any, dict[str, EvaluationIndices]] = {tag: {} for tag in used}
        true_docs, pred_docs = self._documents("true"), self._documents("pred")
        for d, (true_doc, pred_doc) in enumerate(zip(true_docs, pred_docs, strict=False)):
            true_doc = [e for e in true_doc if e.label in self.tags]
            pred_doc = [e for e in pred_doc if e.label in self.tags]
            for name, strategy in self.strategies.items():
                result, found = strategy.evaluate(true_doc, pred_doc, self.tags, d)
                self._add(results, indices, name, result, found)
                for tag in used:
                    result, found = strategy.evaluate(
                        [e for e in true_doc if e.label == tag], [e for e in pred_doc if e.label == tag], [tag], d
                    )
                    self._add(entities[tag], entity_indices[tag], name, result, found)
        out = {"overall": results, "entities": entities, "overall_indices": indices, "entity_indices": entity_indices}
        return Evaluation(out)

    def _add(
        self,
        results: dict[str, EvaluationResult],
        indices: dict[str, EvaluationIndices],
        name: str,
        result: EvaluationResult,
        found: EvaluationIndices,
    ) -> None:
        """A document's result added to the totals as nervaluate sums them: the first document's
        is kept as it is, later ones are merged into it."""
        if name not in results:
            results[name], indices[name] = result, found
            return
        self._merge_results(results[name], result, name)
        self._merge_indices(indices[name], found)

    @staticmethod
    def _merge_results(target: EvaluationResult, source: EvaluationResult, strategy_name: str) -> None:
        """``source``'s counts added to ``target``'s, and ``target``'s scores computed again."""
        target.correct += source.correct
        target.incorrect += source.incorrect
        target.partial += source.partial
        target.missed += source.missed
        target.spurious += source.spurious
        target.compute_metrics(partial_or_type=strategy_name in PARTIAL_FORMULA)

    @staticmethod
    def _merge_indices(target: EvaluationIndices, source: EvaluationIndices) -> None:
        """``source``'s indices appended to ``target``'s, category by category."""
        for category in CATEGORY_FIELDS:
            getattr(target, category).extend(getattr(source, category))

    # ----------------------------------------------------------------------------------------
    # Reports.

    def results_to_csv(
        self, mode: str = "overall", scenario: str = "strict", file_path: str | None = None
    ) -> str | None:
        """The results as CSV: a row per scheme (``mode="overall"``), or per tag under ``scenario``
        (``mode="entities"``); written to ``file_path`` if given (then None), else returned."""
        _check(mode, scenario)
        results = self.evaluate()
        if mode == "overall":
            rows = [["Strategy", *_CSV_HEADERS]]
            rows += [[name, *_row(r)] for name, r in results["overall"].items()]
        else:
            rows = [["Entity", *_CSV_HEADERS]]
            rows += [[tag, *_row(by[scenario])] for tag, by in results["entities"].items() if scenario in by]
        if file_path:
            with open(file_path, "w", newline="", encoding="utf-8") as f:
                csv.writer(f).writerows(rows)
            return None
        out = io.StringIO()
        csv.writer(out).writerows(rows)
        return out.getvalue()

    def summary_report(self, mode: str = "overall", scenario: str = "strict", digits: int = 2) -> str:
        """A text table: a row per scheme (``mode="overall"``), or per tag under ``scenario``
        (``mode="entities"``), scores with ``digits`` decimals."""
        _check(mode, scenario)
        results = self.evaluate()
        if mode == "overall":
            data = results["overall"]
            rows = [[name, *_row(data[name])] for name in sorted(_VALID_SCENARIOS) if name in data]
        else:
            data = results["entities"]
            rows = [[tag, *_row(data[tag][scenario])] for tag in sorted(data) if scenario in data[tag]]
        width = max(len(str(row[0])) for row in [_HEADERS, *rows])
        width = max(width, digits)
        report = f"Scenario: {scenario if mode == 'entities' else 'all'}\n\n"
        report += ("{:>{width}s} " + " {:>11}" * len(_HEADERS)).format("", *_HEADERS, width=width) + "\n\n"
        row_fmt = "{:>{width}s} " + " {:>11}" * 5 + " {:>11.{digits}f}" * 3 + "\n"
        return report + "".join(row_fmt.format(*row, width=width, digits=digits) for row in rows)

    def summary_report_indices(self, mode: str = "overall", scenario: str = "strict", colors: bool = False) -> str:
        """Each category's ``(document, entity)`` indices under ``scenario``, overall or per tag,
        with the prediction each index names (nervaluate looks every index up in the unfiltered
        predictions, missed ones included)."""
        _check(mode, scenario)
        paint = _painter(colors)
        results = self.evaluate()
        pred = self._data["pred"]
        no_predictions = pred.n_docs == 1 and not len(pred) if isinstance(pred, Columns) else pred == [[]]

        def details(doc: int, k: int, category: str) -> str:
            if no_predictions:
                return "No prediction info"
            return _entity_info(self._entity_at("pred", doc, k))

        if mode == "overall":
            head = f"\n{paint('Indices for error schema', 'bold')} '{paint(scenario, 'cyan')}':\n\n"
            return head + _table(results["overall_indices"][scenario], paint, details)
        report = ""
        for tag, by_scheme in results["entity_indices"].items():
            report += f"\n{paint('Entity Type', 'bold')}: {paint(tag, 'cyan')}\n"
            report += f"{paint('Error Schema', 'bold')}: '{paint(scenario, 'cyan')}'\n\n"
            report += _table(by_scheme[scenario], paint, details)
        return report

    def _entity_at(self, side: str, doc: int, k: int) -> Any:
        """``self.true[doc][k]`` or ``self.pred[doc][k]``, without making every entity."""
        loaded = self._data[side]
        if isinstance(loaded, list):
            return loaded[doc][k]
        if not 0 <= doc < loaded.n_docs or not 0 <= k < int(loaded.offsets[doc + 1] - loaded.offsets[doc]):
            raise IndexError("list index out of range")
        row = int(loaded.offsets[doc]) + k
        return Entity(loaded.labels[int(loaded.label[row])], int(loaded.start[row]), int(loaded.end[row]))


def _same_lengths(true: Any, pred: Any) -> None:
    """nervaluate's checks of list input: as many documents, each as long on both sides."""
    if len(true) != len(pred):
        raise InputValueError("Number of predicted documents does not equal true")
    try:  # every length at once; where one cannot be taken, one by one (the first error first)
        a = np.fromiter(map(len, true), dtype=np.int64, count=len(true))
        b = np.fromiter(map(len, pred), dtype=np.int64, count=len(pred))
        differ = np.flatnonzero(a != b)
        start = int(differ[0]) if differ.shape[0] else len(true)
    except (TypeError, ValueError):
        start = 0
    for i, (true_doc, pred_doc) in enumerate(islice(zip(true, pred, strict=False), start, None), start):
        if len(true_doc) != len(pred_doc):
            raise InputValueError(f"Document {i} has different lengths: true={len(true_doc)}, pred={len(pred_doc)}")


def _well_formed(columns: Columns) -> bool:
    """No entity ends before it starts (nervaluate's strategies then divide by zero, or find
    overlaps no array reproduces)."""
    return not bool((columns.end < columns.start).any())


def _check(mode: str, scenario: str) -> None:
    if mode not in _VALID_MODES:
        raise OptionValueError(f"Invalid mode: must be one of {_VALID_MODES}")
    if mode == "entities" and scenario not in _VALID_SCENARIOS:
        raise OptionValueError(f"Invalid scenario: must be one of {_VALID_SCENARIOS}")


def _row(r: EvaluationResult) -> list[Any]:
    return [r.correct, r.incorrect, r.partial, r.missed, r.spurious, r.precision, r.recall, r.f1]


def _painter(colors: bool) -> Callable[[str, str], str]:
    def paint(text: str, color: str) -> str:
        return f"{COLORS[color]}{text}{COLORS['reset']}" if colors else text

    return paint


def _entity_info(entity: Any) -> str:
    if isinstance(entity, Entity):
        return f"Label={entity.label}, Start={entity.start}, End={entity.end}"
    return f"Tag={entity}"


def _table(
    indices: EvaluationIndices, paint: Callable[[str, str], str], details: Callable[[int, int, str], str]
) -> str:
    """One scheme's indices as rows of Category, Instance, Entity, Details."""
    row_fmt = "{:<20} {:<10} {:<8} {:<10}\n"
    text = paint("{:<20} {:<10} {:<8} {:<25}".format("Category", "Instance", "Entity", "Details"), "bold") + "\n"
    text += paint("-" * 78, "white") + "\n"
    for category, found in vars(indices).items():
        if not category.endswith("_indices"):
            continue
        name = category.replace("_indices", "").replace("_", " ").capitalize()
        label = paint(name, CATEGORY_COLORS.get(name, "white"))
        rows: Iterable[tuple[int, int]] = found
        if not found:
            text += row_fmt.format(label, "-", "-", "None")
        for doc, k in rows:
            text += row_fmt.format(label, f"{doc}", f"{k}", details(doc, k, category))
    return text

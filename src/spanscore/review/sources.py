"""Where review items come from: a run's partial matches, the paper's own judgements, expert scores."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..api import evaluate
from ..errors import InputError, OptionError
from ..io.files import read_bytes
from ..io.reading import Reading
from ..programs.judge.judgements import read_judgements
from ..report import Report
from ..stages.criteria import RIGHT_LABEL_OVERLAP_KINDS
from ..stages.judging import Judge, Mismatch
from ..stages.matching import PARTIAL
from ..stages.pairs import KeptDetails
from ..stages.scores import prf
from ..stages.spans import Spans
from ..stages.text import Text, mention_text
from .store import BAD, GOOD, Item

PARTIAL_CRITERIA = ("left", "right", "overlap")
TYPE5 = "type5"
CRITERIA_SEPARATOR = ","


def items_from_run(
    reference: Any,
    predicted: Any,
    reading: Reading,
    *,
    criteria: Sequence[str] = PARTIAL_CRITERIA,
    type5: bool = False,
    judge: Judge | None = None,
) -> list[Item]:
    """Every pair given partial credit under ``criteria`` (and with ``type5`` every right-label,
    overlapping pair of the one-to-one matching), as review items in corpus order."""
    unknown = [c for c in criteria if c not in PARTIAL_CRITERIA]
    if unknown:
        raise OptionError(f"criteria with partial credit are {', '.join(PARTIAL_CRITERIA)}; not {', '.join(unknown)}")
    report = evaluate(reference=reference, predicted=predicted, reading=reading, keep_details=True)
    return items_from_report(report, criteria=criteria, type5=type5, judge=judge)


def run_summary(report: Report) -> dict[str, Any]:
    """What the user F-scores of a run need besides the verdicts (Nejadgholi et al. 2020): its
    exact matches, its mentions on each side, and the exact and relaxed F1 to compare them with."""
    overlap = report.metrics["overlap"]
    relaxed = prf(
        overlap["full"] + overlap["partial"],
        overlap["full"] + overlap["partial"],
        int(report.counts.predicted.sum()),
        int(report.counts.reference.sum()),
        report.zero_division,
    )
    return {
        "exact_matches": int(report.to_dict()["errors"]["correct"]),
        "predicted": int(report.counts.predicted.sum()),
        "reference": int(report.counts.reference.sum()),
        "criteria": {"exact": report.metrics["strict"]["f1"], "relaxed": relaxed.f1},
        "signature": report.signature,
    }


def items_from_report(
    report: Report, *, criteria: Sequence[str] = PARTIAL_CRITERIA, type5: bool = False, judge: Judge | None = None
) -> list[Item]:
    """``items_from_run`` of a report that kept its details."""
    items: list[Item] = []
    tokens = report.options.get("units") == "tokens"
    for kept in report.kept or ():
        # One item per pair, naming every criterion that gives it partial credit: a reviewer judges
        # a pair once, and the verdict counts under each of them.
        answers: dict[tuple[int, int], list[str]] = {}
        first: dict[tuple[int, int], tuple[int, float]] = {}
        pairs = kept.details.pairs
        for criterion in criteria:
            m = kept.details.matchings[criterion]
            for k, lv, c in zip(m.pair.tolist(), m.level.tolist(), m.credit.tolist(), strict=True):
                if lv == PARTIAL:
                    _answer(answers, first, (int(pairs.ref[k]), int(pairs.pred[k])), criterion, int(k), float(c))
        if type5:
            m = kept.details.schemes["type"]
            kinds = pairs.kind[m.pair]
            for k in m.pair[np.isin(kinds, RIGHT_LABEL_OVERLAP_KINDS)].tolist():
                _answer(answers, first, (int(pairs.ref[k]), int(pairs.pred[k])), TYPE5, int(k), 0.5)
        items += [
            _item(kept, first[key][0], CRITERIA_SEPARATOR.join(names), first[key][1], tokens)
            for key, names in answers.items()
        ]
    if judge is not None and items:
        probability = judge.accept_probability([_mismatch(it) for it in items])
        items = [
            Item(**{**it.__dict__, "probability": float(p)}) for it, p in zip(items, probability.tolist(), strict=True)
        ]
    return items


def _answer(
    answers: dict[tuple[int, int], list[str]],
    first: dict[tuple[int, int], tuple[int, float]],
    key: tuple[int, int],
    criterion: str,
    k: int,
    credit: float,
) -> None:
    names = answers.setdefault(key, [])
    if criterion not in names:
        names.append(criterion)
    first.setdefault(key, (k, credit))


def criteria_of(item_criterion: str) -> list[str]:
    """The criteria an item answers (its ``criterion`` field names them, comma-separated)."""
    return item_criterion.split(CRITERIA_SEPARATOR)


def _item(kept: KeptDetails, k: int, criterion: str, credit: float, tokens: bool) -> Item:
    d, text = kept.details, kept.text
    r, p = int(d.pairs.ref[k]), int(d.pairs.pred[k])
    unit = int(d.reference.unit[r])
    sentence = text.context(unit)

    def chars(position: int) -> int:
        local = text.local(unit, position)
        if not tokens:
            return local
        prefix = text.mention(position - local, position)
        return len(prefix) + 1 if prefix else 0

    rs, re_ = int(d.reference.start[r]), int(d.reference.end[r])
    ps, pe = int(d.predicted.start[p]), int(d.predicted.end[p])
    gold_text, pred_text = text.mention(rs, re_), text.mention(ps, pe)
    gs, pstart = chars(rs), chars(ps)
    gold_end, pred_end = gs + len(gold_text), pstart + len(pred_text)
    # A discontinuous mention reads as its fragments; its offsets stay its extent's.
    gold_text, pred_text = mention_text(text, d.reference, r), mention_text(text, d.predicted, p)
    return Item(
        criterion=criterion,
        sentence=sentence,
        gold_text=gold_text,
        gold_label=d.reference.types[int(d.reference.type[r])],
        gold_start=gs,
        gold_end=gold_end,
        pred_text=pred_text,
        pred_label=d.predicted.types[int(d.predicted.type[p])],
        pred_start=pstart,
        pred_end=pred_end,
        credit=credit,
        unit=unit + kept.unit_offset,
        gold_level=_level(d.reference, r),
        pred_level=_level(d.predicted, p),
        gold_fragments=_fragments(d.reference, r, chars, text),
        pred_fragments=_fragments(d.predicted, p, chars, text),
    )


def _fragments(spans: Spans, i: int, chars: Callable[[int], int], text: Text) -> tuple[tuple[int, int], ...] | None:
    """A discontinuous mention's fragments in its sentence's characters (None: it is continuous)."""
    pieces = spans.pieces
    if pieces is None:
        return None
    lo, hi = np.searchsorted(pieces.owner, [i, i + 1])
    if hi <= lo:
        return None
    out = []
    for a, b in zip(pieces.start[lo:hi].tolist(), pieces.end[lo:hi].tolist(), strict=True):
        start = chars(a)
        out.append((start, start + len(text.mention(a, b))))
    return tuple(out)


def _level(spans: Spans, i: int) -> str | None:
    """A mention's nesting level, where the run read levels."""
    return None if spans.level is None else spans.levels[int(spans.level[i])]


def _mismatch(item: Item) -> Mismatch:
    return item.mismatch()


# The paper's own review (Kong and Sullivan, section 5.3; seed-partial-matches/judgements.md).

_SECTION = re.compile(r"^##\s+\d+\.\s+(Overlap|Left Boundary|Right Boundary)", re.IGNORECASE)
_CRITERION = {"overlap": "overlap", "left boundary": "left", "right boundary": "right"}
_ROW = re.compile(r"^\|\s*(\d+)\s*\|(.*)\|(.*)\|\s*([0-9.]+)\s*\|(.*)\|\s*$")


def paper_judgements(path: str | Path) -> list[tuple[Item, int]]:
    """Each pair the authors judged, with its verdict (Good 1, Bad 0), from their Markdown tables."""
    name = str(path)
    try:
        text = read_bytes(path).decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=name) from None
    criterion: str | None = None
    out: list[tuple[Item, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        section = _SECTION.match(line)
        if section:
            criterion = _CRITERION[section.group(1).lower()]
            continue
        row = _ROW.match(line)
        if row is None or criterion is None:
            continue
        no, gold, pred, credit, analysis = (cell.strip() for cell in row.groups())
        verdict = GOOD if "good" in analysis.lower() else BAD if "bad" in analysis.lower() else None
        if verdict is None:
            raise InputError(f"the analysis {analysis!r} says neither Good nor Bad", path=name, line=number)
        # No sentence is given: the row's number keeps two rows of the same texts apart.
        item = Item(criterion, "", gold, "", None, None, pred, "", None, None, float(credit), int(no))
        out.append((item, verdict))
    if not out:
        raise InputError(
            "no judged pairs found (expected Markdown tables under '## N. Overlap ...' headings)", path=name
        )
    return out


def expert_judgements(path: str | Path) -> list[tuple[Item, int]]:
    """Scores 1-5 in the judgements JSONL format (medmentions-expert), as items of a five-point task."""
    out = []
    for j in read_judgements(path):
        gold = j.gold_span or (None, None)
        pred = j.pred_span or (None, None)
        item = Item(
            TYPE5,
            j.sentence,
            j.gold_text,
            j.gold_label,
            gold[0],
            gold[1],
            j.pred_text,
            j.gold_label,
            pred[0],
            pred[1],
            0.5,
            j.sentence_index,
            source_id=j.id or None,
        )
        out.append((item, j.score))
    return out

"""Human judgements of boundary mismatches, in the format of medmentions-expert/judgements.jsonl.

One JSON object per line with ``sentence``, ``gold_text``, ``gold_label``, ``pred_text`` and an
integer ``score`` from 1 to 5; optional ``id``, ``sentence_index``, character offsets
``gold_start``/``gold_end``/``pred_start``/``pred_end`` in ``sentence``, and ``reviewer`` (a review
export, ``spanscore review export``, names the reviewer of every verdict).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ...errors import InputError, OptionError
from ...io.jsonl import json_objects
from ...stages.judging import Mismatch
from .corpus import Corpus
from .features import relation_of

User = Literal["forgiving", "strict"]
# Least score each user accepts (Nejadgholi et al. 2020, section 9.1).
USERS: dict[str, int] = {"forgiving": 2, "strict": 3}


def check_user(user: str) -> int:
    try:
        return USERS[user]
    except KeyError:
        raise OptionError(f"user must be one of {', '.join(USERS)}, not {user!r}") from None


@dataclass(frozen=True)
class Judgement:
    sentence: str
    gold_text: str
    gold_label: str
    pred_text: str
    score: int
    line: int
    id: str = ""
    sentence_index: int | None = None
    gold_span: tuple[int, int] | None = None
    pred_span: tuple[int, int] | None = None
    reviewer: str | None = None

    def pair(self) -> tuple[object, ...]:
        """What makes two verdicts verdicts on the same pair."""
        return (self.sentence, self.gold_text, self.gold_label, self.pred_text, self.gold_span, self.pred_span)

    def mismatch(self) -> Mismatch:
        if self.gold_span is not None and self.pred_span is not None:
            (gs, ge), (ps, pe) = self.gold_span, self.pred_span
            same_start, same_end = gs == ps, ge == pe
            if ps <= gs and ge <= pe:
                relation = "longer"
            elif gs <= ps and pe <= ge:
                relation = "shorter"
            else:
                relation = "shifted"
        else:
            relation, same_start, same_end = relation_of(self.gold_text, self.pred_text)
        return Mismatch(
            predicted_text=self.pred_text,
            label=self.gold_label,
            reference_text=self.gold_text,
            context=self.sentence,
            relation=relation,
            same_start=same_start,
            same_end=same_end,
        )


def _field(obj: dict[str, Any], name: str, kind: type, path: str, line: int, optional: bool = False) -> Any:
    value = obj.get(name)
    if value is None and optional:
        return None
    # bool is an int to Python, never to a score or an offset
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        what = "missing" if value is None else f"not a {kind.__name__}: {value!r}"
        raise InputError(f"field {name!r} is {what}", path=path, line=line)
    return value


def read_judgements(path: str | Path) -> list[Judgement]:
    name = str(path)
    out: list[Judgement] = []
    for n, obj in json_objects(path):
        sentence = _field(obj, "sentence", str, name, n)
        gold_text = _field(obj, "gold_text", str, name, n)
        pred_text = _field(obj, "pred_text", str, name, n)
        score = _field(obj, "score", int, name, n)
        if not 1 <= score <= 5:
            raise InputError(f"score must be 1 to 5, not {score}", path=name, line=n)
        spans: list[tuple[int, int] | None] = []
        for side, text in (("gold", gold_text), ("pred", pred_text)):
            s = _field(obj, f"{side}_start", int, name, n, optional=True)
            e = _field(obj, f"{side}_end", int, name, n, optional=True)
            if s is None or e is None:
                spans.append(None)
                continue
            if not 0 <= s < e <= len(sentence):
                raise InputError(
                    f"{side}_start/{side}_end {s}..{e}: need 0 <= start < end <= {len(sentence)} (sentence length)",
                    path=name,
                    line=n,
                )
            if sentence[s:e] != text:
                raise InputError(f"{side}_start/{side}_end do not point at {side}_text {text!r}", path=name, line=n)
            spans.append((s, e))
        out.append(
            Judgement(
                sentence=sentence,
                gold_text=gold_text,
                gold_label=_field(obj, "gold_label", str, name, n),
                pred_text=pred_text,
                score=score,
                line=n,
                id=str(obj.get("id", "")),
                sentence_index=_field(obj, "sentence_index", int, name, n, optional=True),
                gold_span=spans[0],
                pred_span=spans[1],
                reviewer=_field(obj, "reviewer", str, name, n, optional=True),
            )
        )
    if not out:
        raise InputError("no judgements in the file", path=name)
    return out


def check_labels(rows: Sequence[Judgement], corpus: Corpus, path: str = "judgements") -> None:
    """A judged label must be a type of the corpus: a typed judge learns its types from it."""
    known = set(corpus.types)
    for row in rows:
        if row.gold_label not in known:
            raise InputError(
                f"gold_label {row.gold_label!r} is not a type of {corpus.path} (its types: {', '.join(sorted(known))};"
                " a type-agnostic judge, --rule agnostic, learns from any type)",
                path=path,
                line=row.line,
            )


def locate(rows: Sequence[Judgement], corpus: Corpus, path: str = "judgements") -> npt.NDArray[np.int64]:
    """Sentence of the corpus each judgement was made on: its ``sentence_index`` when that sentence
    has the judged text, else the first sentence with that text. A judged label must be a type of
    the corpus (the judge learns types from it)."""
    check_labels(rows, corpus, path)
    first: dict[str, int] = {}
    for n, s in enumerate(corpus.sentences):
        first.setdefault(s.text, n)
    out = np.zeros(len(rows), dtype=np.int64)
    for k, row in enumerate(rows):
        i = row.sentence_index
        if i is not None and 0 <= i < len(corpus) and corpus.sentences[i].text == row.sentence:
            out[k] = i
        elif row.sentence in first:
            out[k] = first[row.sentence]
        else:
            raise InputError(
                f"the judged sentence is not in {corpus.path}: cross-fitting needs the corpus that holds the judged"
                " sentences",
                path=path,
                line=row.line,
            )
    return out


def accepts(rows: Sequence[Judgement], user: str) -> npt.NDArray[np.bool_]:
    least = check_user(user)
    return np.array([r.score >= least for r in rows], dtype=bool)


@dataclass(frozen=True)
class Selection:
    """The verdicts a judge learns from, out of a file of judgements (a review export), and what
    was left out: the line ``describe`` gives is what ``spanscore judge train`` states."""

    judgements: tuple[Judgement, ...]
    reviewers: tuple[str, ...]  # the reviewers whose verdicts these are (none where the file names none)
    read: int  # verdicts in the file
    pairs: int  # distinct pairs among the verdicts kept
    disagreed: int  # pairs left out because the reviewers who judged them disagree (``agreed``)
    agreed: bool

    def describe(self, user: str) -> str:
        who = "no reviewer named"
        if self.reviewers:
            who = f"{len(self.reviewers)} reviewer(s): {', '.join(self.reviewers)}"
        text = f"{len(self.judgements)} of {self.read} verdicts on {self.pairs} pairs, {who}"
        if self.agreed:
            text += f"; {self.disagreed} pairs left out where they disagree for the {user} user"
        return text


def select(
    rows: Sequence[Judgement],
    *,
    reviewers: Sequence[str] | None = None,
    agreed: bool = False,
    user: str = "forgiving",
    path: str = "judgements",
) -> Selection:
    """Every verdict of ``reviewers`` (all, by default). With ``agreed``, each pair once: a pair
    that several of them judged is kept only if they all accept it or all reject it (for ``user``)."""
    least = check_user(user)
    total = len(rows)
    named = sorted({r.reviewer for r in rows if r.reviewer is not None})
    if reviewers is not None:
        wanted = list(dict.fromkeys(reviewers))
        missing = [w for w in wanted if w not in named]
        if missing:
            have = ", ".join(named) or "none: the file names no reviewer"
            raise InputError(
                f"no verdicts by {', '.join(map(repr, missing))} (reviewers in the file: {have})", path=path
            )
        rows = [r for r in rows if r.reviewer in set(wanted)]
        named = sorted(set(wanted))
    by_pair: dict[tuple[object, ...], list[Judgement]] = {}
    for r in rows:
        by_pair.setdefault(r.pair(), []).append(r)
    disagreed = 0
    if agreed:
        kept = []
        for verdicts in by_pair.values():
            if len({v.score >= least for v in verdicts}) > 1:
                disagreed += 1
            else:
                kept.append(verdicts[0])
        rows = kept
    if not rows:
        raise InputError("no verdicts left to learn from", path=path)
    return Selection(tuple(rows), tuple(named), total, len(by_pair) - disagreed, disagreed, agreed)

"""What the judgements of a task say: Table 5 of Kong and Sullivan per criterion, agreement, exports."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from ..io.files import write_atomic
from ..programs.judge.judgements import USERS
from ..stages.scores import prf
from .agreement import cohen_kappa, krippendorff_alpha
from .sources import TYPE5, criteria_of
from .store import GOOD, Scale, Store, five_point, verdict_names


def stats(store: Store, task_name: str | None = None) -> dict[str, Any]:
    """Per criterion: pairs given partial credit, judged, good (the majority of its reviewers' verdicts
    Good; on the five-point scale, accepted by each user), and agreement between reviewers."""
    task = store.task(task_name)
    scale: Scale = task.scale
    items = store.items_of(task.id)
    verdicts = store.verdicts(task.id)
    by_item: dict[int, dict[str, int]] = defaultdict(dict)
    for row in verdicts:
        by_item[row.id][row.reviewer] = row.verdict
    reviewers = sorted({row.reviewer for row in verdicts})
    criteria: dict[str, Any] = {}
    answers = {it.id: criteria_of(it.criterion) for it in items}
    for criterion in sorted({c for names in answers.values() for c in names}):
        ids = [it.id for it in items if criterion in answers[it.id]]
        judged = [i for i in ids if by_item.get(i)]
        entry: dict[str, Any] = {"pairs": len(ids), "judged": len(judged)}
        if scale == "goodbad":
            good = sum(1 for i in judged if 2 * sum(v == GOOD for v in by_item[i].values()) > len(by_item[i]))
            entry.update(good=good, good_share=good / len(judged) if judged else None)
        else:
            for user, least in USERS.items():
                accepted = sum(1 for i in judged if 2 * sum(v >= least for v in by_item[i].values()) > len(by_item[i]))
                entry[f"accepted_{user}"] = accepted
                entry[f"accepted_{user}_share"] = accepted / len(judged) if judged else None
        entry["agreement"] = _agreement({i: by_item[i] for i in judged}, reviewers, scale)
        criteria[criterion] = entry
    out = {
        "task": task.name,
        "scale": scale,
        "reviewers": reviewers,
        "criteria": criteria,
        "agreement": _agreement({i: v for i, v in by_item.items() if v}, reviewers, scale),
    }
    if task.run is not None and any(TYPE5 in answers[it.id] for it in items):
        type5 = [by_item.get(it.id, {}) for it in items if TYPE5 in answers[it.id]]
        out["users"] = user_scores(json.loads(task.run), type5, scale)
    return out


def user_scores(run: dict[str, Any], type5: Sequence[dict[str, int]], scale: Scale) -> dict[str, Any]:
    """The F-scores a strict and a forgiving user would give the run (Nejadgholi et al. 2020,
    Table 2): its exact matches plus the right-label, overlapping pairs the user accepts (most of
    their reviewers' verdicts), and the error of the exact and relaxed F1 against each. Pairs no
    one has judged yet count as not accepted; how many there are is given."""
    judged = [v for v in type5 if v]
    out: dict[str, Any] = {
        "type5_pairs": len(type5),
        "judged": len(judged),
        "unjudged": len(type5) - len(judged),
        "exact_matches": run["exact_matches"],
        "criteria": run["criteria"],
    }
    for user, least in USERS.items():
        if scale == "goodbad":
            accepted = sum(1 for v in judged if 2 * sum(x == GOOD for x in v.values()) > len(v))
        else:
            accepted = sum(1 for v in judged if 2 * sum(x >= least for x in v.values()) > len(v))
        credit = run["exact_matches"] + accepted
        f = prf(credit, credit, run["predicted"], run["reference"])
        out[user] = {
            "accepted": accepted,
            "precision": f.precision,
            "recall": f.recall,
            "f1": f.f1,
            "error": {name: value - f.f1 for name, value in run["criteria"].items()},
        }
    return out


def _agreement(by_item: dict[int, dict[str, int]], reviewers: Sequence[str], scale: Scale) -> dict[str, Any]:
    """Cohen's kappa of each pair of reviewers on the items both judged; Krippendorff's alpha of all
    (nominal on Good/Bad, ordinal on scores)."""
    kappa = {}
    for a, b in combinations(reviewers, 2):
        shared = [i for i, v in by_item.items() if a in v and b in v]
        if shared:
            value = cohen_kappa([by_item[i][a] for i in shared], [by_item[i][b] for i in shared])
            kappa[f"{a} / {b}"] = {"items": len(shared), "kappa": None if value != value else value}
    shared_units = [list(v.values()) for v in by_item.values() if len(v) >= 2]
    alpha = krippendorff_alpha(shared_units, "nominal" if scale == "goodbad" else "ordinal")
    return {
        "cohen_kappa": kappa,
        "krippendorff_alpha": None if alpha != alpha else alpha,
        "alpha_level": "nominal" if scale == "goodbad" else "ordinal",
        "items_with_two_or_more": len(shared_units),
    }


def export_rows(store: Store, task_name: str | None = None) -> list[dict[str, Any]]:
    """Every current verdict as a row of the judgements format (score 1-5; Good 5 and Bad 1 on the
    Good/Bad scale, the verdict named beside it), so that ``spanscore judge`` reads the export."""
    task = store.task(task_name)
    names = verdict_names(task.scale)
    rows = []
    for r in store.verdicts(task.id):
        row: dict[str, Any] = {
            "id": r.source_id or f"{task.name}-{r.id}-{r.reviewer}",
            "sentence": r.sentence,
            "gold_text": r.gold_text,
            "gold_label": r.gold_label,
            "pred_text": r.pred_text,
            "score": five_point(r.verdict, task.scale),
        }
        for side in ("gold", "pred"):
            if getattr(r, f"{side}_start") is not None:
                row[f"{side}_start"] = getattr(r, f"{side}_start")
                row[f"{side}_end"] = getattr(r, f"{side}_end")
        if r.unit is not None:
            row["sentence_index"] = r.unit
        row.update(
            criterion=r.criterion,
            pred_label=r.pred_label,
            credit=r.credit,
            reviewer=r.reviewer,
            verdict=names[r.verdict],
            scale=task.scale,
            judged_at=r.created,
        )
        rows.append(row)
    return rows


def write_export(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """JSONL for ``*.jsonl`` (the judgements format), CSV otherwise; written whole or not at all."""
    target = Path(path)
    if target.suffix.lower() == ".jsonl":
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    else:
        out = io.StringIO()
        fields = sorted(
            {k for row in rows for k in row}, key=lambda k: (k not in _FIRST, _FIRST.index(k) if k in _FIRST else 0, k)
        )
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
        text = out.getvalue()
    write_atomic(target, text.encode("utf-8"))


_FIRST = ["id", "criterion", "reviewer", "verdict", "score", "gold_text", "pred_text", "gold_label", "sentence"]

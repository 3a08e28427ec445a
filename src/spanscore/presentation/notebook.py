"""Results in Jupyter: compact HTML fragments (``_repr_html_``) and tidy pandas frames.

Everything here reads the JSON dicts only: an evaluation's (``Report.to_dict()``, ``spanscore
evaluate --json``) and a comparison's (``spanscore compare --json``). Nothing imports the scoring
code, so a saved JSON file renders the same as a live result.

The HTML is a fragment for a notebook cell: no script, no outside resource, no ``<style>`` block
(which would restyle the whole notebook), a few inline styles; every piece of text, type names and
file names above all, is escaped.

The frames need pandas, an optional extra (``pip install 'spanscore[pandas]'``): it is imported
when a frame is asked for, never when this module is imported. They are long ("tidy"): one row per
score and metric, with ``value``, ``low`` and ``high`` (NaN where there is no interval, or the
score is undefined). Interval scores are named as in the JSON (``strict``, ..., ``semeval_type``,
``token``); the frames split such a name into ``family`` (``criterion``, ``semeval``, ``macro``) and
``score`` (the criterion, or the SemEval scheme without its prefix).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from ..runtime import optional

__all__ = [
    "breakdown_frame",
    "buckets_frame",
    "comparison_frame",
    "comparison_html",
    "differences_frame",
    "report_frame",
    "report_html",
]

CRITERION = "criterion"
SEMEVAL = "semeval"
MACRO = "macro"
SEMEVAL_PREFIX = "semeval_"

# The display order; a name not listed (a future criterion) follows in the JSON's order.
CRITERIA = ("strict", "boundary", "left", "right", "overlap", "token", "learned")
SCHEMES = ("strict", "exact", "partial", "type")
METRICS = ("precision", "recall", "f1", "f_beta")

REPORT_COLUMNS = ("type", "family", "score", "metric", "value", "low", "high")
COMPARISON_COLUMNS = ("system", "file", "family", "score", "metric", "value", "low", "high")
DIFFERENCE_COLUMNS = (
    "a",
    "b",
    "family",
    "score",
    "metric",
    "difference",
    "low",
    "high",
    "p_bootstrap",
    "p_randomization",
)
BUCKET_COLUMNS = (
    "attribute",
    "bucket",
    "reference_mentions",
    "predicted_mentions",
    "family",
    "score",
    "metric",
    "value",
    "low",
    "high",
)
BREAKDOWN_COLUMNS = (
    "group",
    "documents",
    "reference_mentions",
    "predicted_mentions",
    "family",
    "score",
    "metric",
    "value",
    "low",
    "high",
)

_NUMBER = ' style="text-align:right"'
_SMALL = ' style="font-size:smaller;color:#666"'
_TABLE = ' style="border-collapse:collapse;margin:0.3em 0"'


# --- names ---------------------------------------------------------------------------------------


def split_score(name: str) -> tuple[str, str]:
    """The family and score of an interval or comparison name: ``semeval_type`` is the SemEval
    scheme ``type``, any other name a criterion."""
    if name.startswith(SEMEVAL_PREFIX):
        return SEMEVAL, name[len(SEMEVAL_PREFIX) :]
    return CRITERION, name


def score_name(family: str, score: str) -> str:
    """The name of a criterion or SemEval scheme in ``intervals`` and ``compare`` (``split_score``
    reversed)."""
    return SEMEVAL_PREFIX + score if family == SEMEVAL else score


def _ordered(names: Iterable[str], order: Sequence[str]) -> list[str]:
    present = list(dict.fromkeys(names))
    return [n for n in order if n in present] + [n for n in present if n not in order]


def _ordered_scores(names: Iterable[str]) -> list[str]:
    """Interval or comparison names: the criteria first, then the SemEval schemes."""
    present = list(names)
    criteria = _ordered((n for n in present if split_score(n)[0] == CRITERION), CRITERIA)
    schemes = _ordered((split_score(n)[1] for n in present if split_score(n)[0] == SEMEVAL), SCHEMES)
    return criteria + [score_name(SEMEVAL, s) for s in schemes]


def _metrics(block: Mapping[str, Any]) -> list[str]:
    return [m for m in METRICS if m in block]


# --- numbers -------------------------------------------------------------------------------------


def _float(x: Any) -> float:
    """A score as a float; None (undefined, null in the JSON) is NaN."""
    return math.nan if x is None else float(x)


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _pct(x: Any) -> str:
    return "n/a" if _missing(x) else f"{100 * float(x):.2f}"


def _span(entry: Mapping[str, Any] | None) -> str:
    """`` [low, high]`` in percent, or nothing where there is no interval."""
    if entry is None or _missing(entry.get("low")) or _missing(entry.get("high")):
        return ""
    return f" [{_pct(entry['low'])}, {_pct(entry['high'])}]"


def _p(x: Any) -> str:
    if _missing(x):
        return "n/a"
    return f"{x:.4f}" if x >= 0.0001 else f"{x:.1e}"


def _count(n: Any) -> str:
    return f"{n:,}" if isinstance(n, int) else str(n)


def _plural(n: Any, word: str) -> str:
    return f"{_count(n)} {word}" + ("" if n == 1 else "s")


def _beta_label(beta: Any) -> str:
    return f"F{float(beta):g}"


# --- HTML ----------------------------------------------------------------------------------------


def _e(text: Any) -> str:
    return escape(str(text), quote=True)


def _row(label: str, cells: Sequence[str], *, label_style: str = "") -> str:
    tds = "".join(f"<td{_NUMBER}>{_e(c)}</td>" for c in cells)
    return f'<tr><th style="text-align:left{label_style}">{_e(label)}</th>{tds}</tr>'


def _table(caption: str, head: Sequence[str], rows: Sequence[str]) -> str:
    ths = "".join(f"<th{_NUMBER if i else ''}>{_e(h)}</th>" for i, h in enumerate(head))
    return (
        f'<table{_TABLE}><caption style="text-align:left">{_e(caption)}</caption>'
        f"<thead><tr>{ths}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _section(title: str, width: int) -> str:
    return f'<tr><th colspan="{width}" style="text-align:left;font-style:italic">{_e(title)}</th></tr>'


def _signature(signature: Any) -> str:
    return f"<p{_SMALL}><code>{_e(signature)}</code></p>"


def _cell(value: Any, entry: Mapping[str, Any] | None) -> str:
    return _pct(value) + _span(entry)


def _intervals_line(intervals: Mapping[str, Any]) -> str:
    level = intervals.get("level")
    share = f"{100 * float(level):g}% " if isinstance(level, int | float) else ""
    return (
        f"{share}intervals: {intervals.get('interval', 'bootstrap')} over "
        f"{_plural(intervals.get('count', '?'), str(intervals.get('unit', 'document')))}, "
        f"{_plural(intervals.get('resamples', '?'), 'resample')}, seed {intervals.get('seed', '?')}"
    )


def _corpus_line(corpus: Mapping[str, Any]) -> str:
    return (
        f"{_plural(corpus.get('documents', 0), 'document')}, {_plural(corpus.get('sentences', 0), 'sentence')}, "
        f"{_plural(corpus.get('tokens', 0), 'token')}; {_count(corpus.get('reference_mentions', 0))} reference "
        f"and {_count(corpus.get('predicted_mentions', 0))} predicted mentions"
    )


def report_html(data: Mapping[str, Any]) -> str:
    """An evaluation (its dict) as a compact HTML fragment for a notebook (``_repr_html_``).

    A line of corpus counts; one table of precision, recall and F1 (and F-beta where the evaluation
    has a beta) in percent under each criterion and then each SemEval scheme, each cell ``value
    [low, high]`` where the evaluation has intervals; F1 per type under each criterion, with the
    macro average; F1 by group where the evaluation has a breakdown; the signature in small type.
    """
    intervals: Mapping[str, Any] = data.get("intervals") or {}
    overall: Mapping[str, Any] = intervals.get("scores") or {}
    per_type_iv: Mapping[str, Any] = intervals.get("per_type") or {}
    metrics: Mapping[str, Mapping[str, Any]] = data.get("metrics") or {}
    semeval: Mapping[str, Mapping[str, Any]] = data.get("semeval") or {}
    wanted = ["precision", "recall", "f1"] + (["f_beta"] if "beta" in data else [])
    labels = {"precision": "P", "recall": "R", "f1": "F1", "f_beta": _beta_label(data.get("beta", 1.0))}

    header = _corpus_line(data.get("corpus") or {})
    if intervals:
        header += "; " + _intervals_line(intervals)
    parts = ['<div class="spanscore">', f"<p>{_e(header)}.</p>"]

    def line(label: str, block: Mapping[str, Any], name: str, style: str = "") -> str:
        iv = overall.get(name) or {}
        return _row(label, [_cell(block.get(m), iv.get(m)) for m in wanted], label_style=style)

    rows = [line(c, metrics[c], c) for c in _ordered(metrics, CRITERIA)]
    if semeval:
        rows.append(_section("SemEval-2013 schemes", len(wanted) + 1))
        rows += [line(s, semeval[s], score_name(SEMEVAL, s)) for s in _ordered(semeval, SCHEMES)]
    title = "Scores (%)" + (" with intervals" if overall else "")
    parts.append(_table(title, ["score"] + [labels[m] for m in wanted], rows))

    per_type: Mapping[str, Mapping[str, Any]] = data.get("per_type") or {}
    macro: Mapping[str, Mapping[str, Any]] = data.get("macro") or {}
    criteria = _ordered(metrics, CRITERIA)
    if per_type:
        rows = []
        for name, entry in per_type.items():
            blocks: Mapping[str, Mapping[str, Any]] = entry.get("metrics") or {}
            ivs: Mapping[str, Any] = per_type_iv.get(name) or {}
            cells = [_cell((blocks.get(c) or {}).get("f1"), (ivs.get(c) or {}).get("f1")) for c in criteria]
            rows.append(_row(name, cells))
        if macro:
            cells = [_pct((macro.get(c) or {}).get("f1")) for c in criteria]
            rows.append(_row("macro average", cells, label_style=";font-style:italic"))
        parts.append(_table("F1 per type (%)", ["type", *criteria], rows))

    breakdown: Mapping[str, Any] | None = data.get("breakdown")
    if breakdown and breakdown.get("groups"):
        groups: Sequence[Mapping[str, Any]] = breakdown["groups"]
        # F1 under each criterion, as in the per-type table; breakdown_frame has every score
        names = [n for n in _ordered_scores(groups[0].get("scores") or {}) if split_score(n)[0] == CRITERION]
        rows = []
        for g in groups:
            scores: Mapping[str, Any] = g.get("scores") or {}
            giv: Mapping[str, Any] = g.get("intervals") or {}
            cells = [_count(g.get("documents")), _count(g.get("reference_mentions"))]
            cells += [_cell((scores.get(n) or {}).get("f1"), (giv.get(n) or {}).get("f1")) for n in names]
            rows.append(_row(str(g.get("value")), cells))
        head = [str(breakdown.get("field")), "documents", "mentions", *names]
        parts.append(_table(f"F1 by {breakdown.get('field')} (%)", head, rows))

    all_buckets: Mapping[str, Sequence[Mapping[str, Any]]] = data.get("buckets") or {}
    for attribute, entries in all_buckets.items():
        names = _ordered(entries[0]["metrics"], CRITERIA) if entries else []
        rows = []
        for e in entries:
            cells = [_count(e.get("reference_mentions")), _count(e.get("predicted_mentions"))]
            cells += [_cell(e["metrics"][n]["f1"], _bucket_interval(e["metrics"][n], "f1")) for n in names]
            rows.append(_row(str(e.get("bucket")), cells))
        parts.append(_table(f"F1 by {attribute} (%)", [attribute, "reference", "predicted", *names], rows))

    parts.append(_signature(data.get("signature", "")))
    parts.append("</div>")
    return "\n".join(parts)


def _bucket_interval(block: Mapping[str, Any], metric: str) -> Mapping[str, Any] | None:
    """A bucket score's interval in the shape of the overall ones (F1's is ``low``/``high``)."""
    low, high = ("low", "high") if metric == "f1" else (f"{metric}_low", f"{metric}_high")
    if low not in block:
        return None
    return {"low": block[low], "high": block[high]}


def comparison_html(data: Mapping[str, Any], metric: str = "f1") -> str:
    """A comparison (its dict) as a compact HTML fragment for a notebook.

    Each system's ``metric`` (F1 by default) in percent under every score, with its interval; each
    system against the first: the difference ``b - a`` in points with its interval, both p-values,
    and a ``*`` where the randomisation p is below the comparison's alpha; what a criterion changes
    against strict F1 (ranking, significance); the signature in small type.
    """
    systems: Sequence[Mapping[str, Any]] = data.get("systems") or []
    resampling: Mapping[str, Any] = data.get("resampling") or {}
    alpha = float(resampling.get("alpha", 0.05))
    level = resampling.get("level")
    label = {"precision": "Precision", "recall": "Recall", "f1": "F1", "f_beta": "F-beta"}.get(metric, metric)
    share = f"{100 * float(level):g}% " if isinstance(level, int | float) else ""

    header = (
        f"{_plural(len(systems), 'system')} against one reference, "
        f"{_plural(data.get('documents', '?'), str(data.get('unit', 'document')))}; "
        f"{share}{resampling.get('interval', 'bootstrap')} intervals, "
        f"{_plural(resampling.get('resamples', '?'), 'resample')}, "
        f"{_plural(resampling.get('trials', '?'), 'randomisation trial')}, seed {resampling.get('seed', '?')}"
    )
    parts = ['<div class="spanscore">', f"<p>{_e(header)}.</p>"]

    names = _ordered_scores(n for s in systems for n in s.get("metrics") or {})
    rows = []
    for n in names:
        entries = [((s.get("metrics") or {}).get(n) or {}).get(metric) for s in systems]
        rows.append(_row(n, [_cell(None if e is None else e.get("value"), e) for e in entries]))
    head = ["score"] + [str(s.get("name")) for s in systems]
    parts.append(_table(f"{label} of each system (%), with {share}intervals", head, rows))

    wanted = [c for c in data.get("comparisons") or [] if c.get("metric") == metric]
    if wanted:
        base = wanted[0].get("a")
        others = list(dict.fromkeys(str(c.get("b")) for c in wanted))
        found = {(str(c.get("b")), str(c.get("criterion"))): c for c in wanted}
        rows = []
        for n in _ordered_scores(dict.fromkeys(str(c.get("criterion")) for c in wanted)):
            cells: list[str] = []
            for b in others:
                c = found.get((b, n))
                if c is None:
                    cells += ["", "", ""]
                    continue
                mark = " *" if not _missing(c.get("p_randomization")) and c["p_randomization"] < alpha else ""
                cells += [_cell(c.get("difference"), c) + mark, _p(c.get("p_bootstrap")), _p(c.get("p_randomization"))]
            rows.append(_row(n, cells))
        head = ["score"]
        for b in others:
            head += [f"{b} - {base}", "p boot", "p rand"]
        caption = f"{label} differences from {base} in points, paired (* randomisation p < {alpha:g})"
        parts.append(_table(caption, head, rows))

    notes = []
    for change in data.get("changes") or []:
        said = []
        if change.get("ranking_changed"):
            said.append("ranks the systems differently from strict")
        if change.get("significant_only_here"):
            said.append("significant only here: " + ", ".join(map(str, change["significant_only_here"])))
        if change.get("significant_only_under_strict"):
            said.append(
                "significant only under strict: " + ", ".join(map(str, change["significant_only_under_strict"]))
            )
        if said:
            notes.append(f"<li>{_e(change.get('criterion'))}: {_e('; '.join(said))}</li>")
    if notes:
        parts.append(f"<ul>{''.join(notes)}</ul>")

    files = ", ".join(
        f"{_e(s.get('name'))}: <code>{_e(s.get('file'))}</code>" for s in systems if s.get("file") != s.get("name")
    )
    if files:
        parts.append(f"<p{_SMALL}>{files}</p>")
    parts.append(_signature(data.get("signature", "")))
    parts.append("</div>")
    return "\n".join(parts)


# --- frames --------------------------------------------------------------------------------------


def _pandas(what: str) -> Any:
    optional.require("pandas", what=what, extra="pandas")
    return optional.module("pandas")


def _frame(
    pd: Any, rows: list[dict[str, Any]], columns: Sequence[str], floats: Sequence[str], nullable: str = ""
) -> Any:
    """The rows as a frame: ``floats`` as float64 (None read as NaN), ``nullable`` as objects, so
    that its None stays None (pandas 3 would read a column of strings and None as strings and NaN),
    the other columns as pandas infers them."""

    def dtype(column: str) -> str | None:
        return "float64" if column in floats else "object" if column == nullable else None

    return pd.DataFrame({c: pd.Series([r[c] for r in rows], dtype=dtype(c)) for c in columns})


def _score_rows(
    kind: str | None,
    family: str,
    blocks: Mapping[str, Mapping[str, Any]],
    order: Sequence[str],
    intervals: Mapping[str, Any],
) -> list[dict[str, Any]]:
    rows = []
    for score in _ordered(blocks, order):
        block = blocks[score]
        # macro averages have no intervals; the others are named as in ``intervals``
        iv: Mapping[str, Any] = {} if family == MACRO else intervals.get(score_name(family, score)) or {}
        for metric in _metrics(block):
            entry: Mapping[str, Any] = iv.get(metric) or {}
            rows.append(
                {
                    "type": kind,
                    "family": family,
                    "score": score,
                    "metric": metric,
                    "value": _float(block[metric]),
                    "low": _float(entry.get("low")),
                    "high": _float(entry.get("high")),
                }
            )
    return rows


def report_frame(data: Mapping[str, Any]) -> Any:
    """Every score of an evaluation (its dict) as a long pandas DataFrame.

    One row per (type, family, score, metric): ``type`` is None for the scores over all types;
    ``family`` is ``criterion`` (strict, boundary, left, right, overlap, token, learned),
    ``semeval`` (the schemes strict, exact, partial, type) or ``macro`` (the unweighted mean over
    types of each criterion, over all types only); ``metric`` is precision, recall, f1 and, with a
    beta, f_beta. ``value`` is the score (NaN where undefined); ``low`` and ``high`` its interval
    where the evaluation was asked for one (``ci``), over all types and per type, else NaN.
    Needs the ``pandas`` extra.
    """
    pd = _pandas("report_frame (a pandas DataFrame)")
    intervals: Mapping[str, Any] = data.get("intervals") or {}
    overall: Mapping[str, Any] = intervals.get("scores") or {}
    per_type_iv: Mapping[str, Any] = intervals.get("per_type") or {}
    rows = _score_rows(None, CRITERION, data.get("metrics") or {}, CRITERIA, overall)
    rows += _score_rows(None, SEMEVAL, data.get("semeval") or {}, SCHEMES, overall)
    rows += _score_rows(None, MACRO, data.get("macro") or {}, CRITERIA, {})
    for kind, entry in (data.get("per_type") or {}).items():
        ivs: Mapping[str, Any] = per_type_iv.get(kind) or {}
        rows += _score_rows(kind, CRITERION, entry.get("metrics") or {}, CRITERIA, ivs)
        rows += _score_rows(kind, SEMEVAL, entry.get("semeval") or {}, SCHEMES, ivs)
    return _frame(pd, rows, REPORT_COLUMNS, ("value", "low", "high"), nullable="type")


def comparison_frame(data: Mapping[str, Any]) -> Any:
    """Every system's scores in a comparison (its dict) as a long pandas DataFrame: one row per
    (system, family, score, metric) with ``system``, ``file``, ``family`` (criterion or semeval),
    ``score``, ``metric``, ``value``, ``low`` and ``high``. Needs the ``pandas`` extra."""
    pd = _pandas("comparison_frame (a pandas DataFrame)")
    rows = []
    for system in data.get("systems") or []:
        scores: Mapping[str, Mapping[str, Any]] = system.get("metrics") or {}
        for name in _ordered_scores(scores):
            family, score = split_score(name)
            for metric in _metrics(scores[name]):
                entry: Mapping[str, Any] = scores[name][metric] or {}
                rows.append(
                    {
                        "system": system.get("name"),
                        "file": system.get("file"),
                        "family": family,
                        "score": score,
                        "metric": metric,
                        "value": _float(entry.get("value")),
                        "low": _float(entry.get("low")),
                        "high": _float(entry.get("high")),
                    }
                )
    return _frame(pd, rows, COMPARISON_COLUMNS, ("value", "low", "high"))


def differences_frame(data: Mapping[str, Any]) -> Any:
    """The paired tests of a comparison (its dict, ``comparisons``) as a pandas DataFrame, in the
    JSON's order: ``a`` (the first system), ``b``, ``family``, ``score``, ``metric``, ``difference``
    (b - a), ``low``, ``high`` (its interval), ``p_bootstrap`` and ``p_randomization``. Needs the
    ``pandas`` extra."""
    pd = _pandas("differences_frame (a pandas DataFrame)")
    rows = []
    for c in data.get("comparisons") or []:
        family, score = split_score(str(c["criterion"]))
        rows.append(
            {
                "a": c.get("a"),
                "b": c.get("b"),
                "family": family,
                "score": score,
                "metric": c.get("metric"),
                **{k: _float(c.get(k)) for k in DIFFERENCE_COLUMNS[5:]},
            }
        )
    return _frame(pd, rows, DIFFERENCE_COLUMNS, DIFFERENCE_COLUMNS[5:])


def buckets_frame(data: Mapping[str, Any]) -> Any:
    """The scores of each bucket of an evaluation made with ``buckets`` (its dict) as a long pandas
    DataFrame: one row per (attribute, bucket, family, score, metric) with the bucket's mentions,
    ``value``, ``low`` and ``high`` (NaN without intervals). Empty without buckets. Needs the
    ``pandas`` extra."""
    pd = _pandas("buckets_frame (a pandas DataFrame)")
    rows = []
    all_buckets: Mapping[str, Sequence[Mapping[str, Any]]] = data.get("buckets") or {}
    for attribute, entries in all_buckets.items():
        for e in entries:
            for family, blocks, order in ((CRITERION, e["metrics"], CRITERIA), (SEMEVAL, e["semeval"], SCHEMES)):
                for score in _ordered(blocks, order):
                    for metric in _metrics(blocks[score]):
                        interval = _bucket_interval(blocks[score], metric) or {}
                        rows.append(
                            {
                                "attribute": attribute,
                                "bucket": e["bucket"],
                                "reference_mentions": e["reference_mentions"],
                                "predicted_mentions": e["predicted_mentions"],
                                "family": family,
                                "score": score,
                                "metric": metric,
                                "value": _float(blocks[score][metric]),
                                "low": _float(interval.get("low")),
                                "high": _float(interval.get("high")),
                            }
                        )
    return _frame(pd, rows, BUCKET_COLUMNS, ("value", "low", "high"))


def breakdown_frame(data: Mapping[str, Any]) -> Any:
    """The scores of each group of an evaluation made with ``by`` (its dict, ``breakdown``) as a long
    pandas DataFrame: one row per (group, family, score, metric) with ``group`` (the field's value),
    the group's ``documents``, ``reference_mentions`` and ``predicted_mentions``, ``family``,
    ``score``, ``metric``, ``value``, ``low`` and ``high`` (NaN without intervals). Empty without a
    breakdown. Needs the ``pandas`` extra."""
    pd = _pandas("breakdown_frame (a pandas DataFrame)")
    rows = []
    breakdown: Mapping[str, Any] = data.get("breakdown") or {}
    for g in breakdown.get("groups") or []:
        scores: Mapping[str, Mapping[str, Any]] = g.get("scores") or {}
        ivs: Mapping[str, Any] = g.get("intervals") or {}
        for name in _ordered_scores(scores):
            family, score = split_score(name)
            for metric in _metrics(scores[name]):
                entry: Mapping[str, Any] = (ivs.get(name) or {}).get(metric) or {}
                rows.append(
                    {
                        "group": g.get("value"),
                        "documents": g.get("documents"),
                        "reference_mentions": g.get("reference_mentions"),
                        "predicted_mentions": g.get("predicted_mentions"),
                        "family": family,
                        "score": score,
                        "metric": metric,
                        "value": _float(scores[name][metric]),
                        "low": _float(entry.get("low")),
                        "high": _float(entry.get("high")),
                    }
                )
    return _frame(pd, rows, BREAKDOWN_COLUMNS, ("value", "low", "high"), nullable="group")

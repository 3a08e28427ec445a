"""``evaluate``: the one entry point that the CLI, the engines and users call."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .counts import Counts, CreditRule, Details, MinOverlapOf, Options, count, credit_label
from .errors import OptionError
from .io.conll import Delimiter
from .io.load import FORMATS, Format, Loaded, Text, load_conll, load_jsonl, load_labels, load_spans, unify
from .judging import Judge, JudgeCredit, learned_credit
from .matching import Method
from .report import Report
from .scores import check_zero_division
from .stream import DEFAULT_CHUNK, ChunkCounter, count_plan, iter_chunks


def load(
    *,
    reference: Any,
    predicted: Any,
    format: Format = "conll",
    labels: str = "BIO",
    repair: str = "conlleval",
    merged: bool = False,
    delimiter: Delimiter = "auto",
    token_column: int = 0,
    label_column: int = -1,
) -> Loaded:
    """Read a reference and a prediction into two span sets over the same text."""
    if format not in FORMATS:
        raise OptionError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    if merged and format != "conll":
        raise OptionError("merged=True reads one CoNLL file with token, gold and predicted columns")
    if format in ("conll", "jsonl"):
        for name, value in (("reference", reference), ("predicted", predicted)):
            if value is None and name == "predicted" and merged:
                continue
            if not isinstance(value, str | Path):
                raise OptionError(f"format={format!r} expects {name} as a file path, not {type(value).__name__}")
    if format == "conll":
        if merged and predicted is not None:
            raise OptionError("with merged=True give only reference (the merged file)")
        return load_conll(
            reference,
            None if merged else predicted,
            labels=labels,
            repair=repair,
            delimiter=delimiter,
            token_column=token_column,
            label_column=label_column,
        )
    if format == "jsonl":
        return load_jsonl(reference, predicted)
    if format == "labels":
        return load_labels(reference, predicted, labels=labels, repair=repair)
    return load_spans(reference, predicted)


def signature(options: Mapping[str, Any]) -> str:
    """One string naming the version and every option that can change a number."""
    parts = [f"spanscore:{__version__}"]
    parts += [f"{k}:{v}" for k, v in options.items()]
    return "|".join(parts)


def _parse_type_map(type_map: Mapping[str, str] | None) -> dict[str, str | None]:
    if type_map is None:
        return {}
    if not isinstance(type_map, Mapping):
        raise OptionError("type_map must be a mapping from old type to new type")
    return {str(k): (None if v in (None, "", "O") else str(v)) for k, v in type_map.items()}


def _evaluate_stream(
    reference: Any,
    predicted: Any,
    opts: Options,
    *,
    merged: bool,
    labels: str,
    repair: str,
    delimiter: Delimiter,
    token_column: int,
    label_column: int,
    mapping: dict[str, str | None],
    types: Sequence[str] | None,
    chunk_bytes: int,
    jobs: int,
    progress: Callable[[int, int], None] | None,
    counter: ChunkCounter | None,
) -> Counts:
    for name, value in (("reference", reference), ("predicted", predicted)):
        if (value is not None or not merged) and not isinstance(value, str | Path):
            raise OptionError(f"format='conll' expects {name} as a file path, not {type(value).__name__}")
    if merged and predicted is not None:
        raise OptionError("with merged=True give only reference (the merged file)")
    pred = None if merged else predicted
    read = dict(
        labels=labels,
        repair=repair,
        delimiter=delimiter,
        token_column=token_column,
        label_column=label_column,
        type_map=mapping,
        types=types,
    )
    if counter is not None:
        return counter(reference, pred, opts, read, chunk_bytes=chunk_bytes, progress=progress)
    chunks = iter_chunks(reference, pred, chunk_bytes)
    return count_plan(reference, pred, chunks, opts, jobs=jobs, progress=progress, **read)


def _evaluate_memory(
    reference: Any,
    predicted: Any,
    opts: Options,
    *,
    format: Format,
    merged: bool,
    labels: str,
    repair: str,
    delimiter: Delimiter,
    token_column: int,
    label_column: int,
    mapping: dict[str, str | None],
    types: Sequence[str] | None,
    judge: Judge | None,
    judge_credit: JudgeCredit,
    keep_details: bool,
) -> tuple[Counts, Details | None, Text]:
    loaded = load(
        reference=reference,
        predicted=predicted,
        format=format,
        labels=labels,
        repair=repair,
        merged=merged,
        delimiter=delimiter,
        token_column=token_column,
        label_column=label_column,
    )
    ref, pred = loaded.reference, loaded.predicted
    if mapping or types is not None:
        ref, pred = unify(ref.map_types(mapping, types), pred.map_types(mapping, types))
    learned = learned_credit(judge, ref, pred, loaded.text, judge_credit) if judge is not None else None
    counts, details = count(ref, pred, opts, learned=learned, keep_details=keep_details)
    counts.documents, counts.sentences, counts.tokens = loaded.documents, loaded.sentences, loaded.tokens
    return counts, details, loaded.text


def evaluate(
    *,
    reference: Any,
    predicted: Any = None,
    format: Format = "conll",
    labels: str = "BIO",
    repair: str = "conlleval",
    merged: bool = False,
    credit: CreditRule = 0.5,
    matching: Method = "optimal",
    min_overlap: float = 0.0,
    min_overlap_of: MinOverlapOf = "reference",
    types: Sequence[str] | None = None,
    type_map: Mapping[str, str] | None = None,
    zero_division: float = 0.0,
    delimiter: Delimiter = "auto",
    token_column: int = 0,
    label_column: int = -1,
    judge: Judge | None = None,
    judge_credit: JudgeCredit = "accept",
    judge_name: str = "none",
    keep_details: bool = True,
    chunk_bytes: int = DEFAULT_CHUNK,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    counter: ChunkCounter | None = None,
) -> Report:
    """Score predicted mentions against reference mentions under every criterion.

    ``format`` says what ``reference`` and ``predicted`` are: ``"conll"`` and ``"jsonl"`` take file
    paths, ``"labels"`` takes lists of label lists (one per sentence), ``"spans"`` takes lists of
    ``(start, end, label)`` per document. Nothing is guessed from Python types. With
    ``keep_details=False`` CoNLL files are streamed in chunks of ``chunk_bytes`` (bounded memory);
    the report then has counts and scores but no matched pairs, and ``jobs`` > 1 counts the chunks
    in that many worker processes (the same numbers, sooner), or ``counter`` counts them elsewhere
    (``spanscore.engines.dask_engine.DaskCounter``: on a Dask cluster).

    >>> r = evaluate(reference=[["B-ORG", "I-ORG", "I-ORG", "I-ORG"]],
    ...              predicted=[["O", "B-ORG", "I-ORG", "I-ORG"]], format="labels")
    >>> r.metrics["strict"]["f1"], r.metrics["overlap"]["f1"]
    (0.0, 0.5)
    """
    if format not in FORMATS:
        raise OptionError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
    if isinstance(credit, str):
        if credit not in ("dice", "iou"):
            try:
                credit = float(credit)
            except ValueError:
                raise OptionError(f"credit must be a number in [0, 1], dice or iou, not {credit!r}") from None
    else:
        credit = float(credit)
    opts = Options(credit=credit, matching=matching, min_overlap=float(min_overlap), min_overlap_of=min_overlap_of)
    zd = check_zero_division(float(zero_division))
    if judge_credit not in ("accept", "probability"):
        raise OptionError("judge_credit must be accept or probability")
    mapping = _parse_type_map(type_map)
    details: Details | None = None
    text: Text | None = None
    streams = format == "conll" and not keep_details and judge is None
    if counter is not None and not streams:
        raise OptionError("a chunk counter streams CoNLL files: use format='conll', keep_details=False and no judge")
    if streams:
        counts = _evaluate_stream(
            reference,
            predicted,
            opts,
            merged=merged,
            labels=labels,
            repair=repair,
            delimiter=delimiter,
            token_column=token_column,
            label_column=label_column,
            mapping=mapping,
            types=types,
            chunk_bytes=chunk_bytes,
            jobs=jobs,
            progress=progress,
            counter=counter,
        )
    else:
        counts, details, text = _evaluate_memory(
            reference,
            predicted,
            opts,
            format=format,
            merged=merged,
            labels=labels,
            repair=repair,
            delimiter=delimiter,
            token_column=token_column,
            label_column=label_column,
            mapping=mapping,
            types=types,
            judge=judge,
            judge_credit=judge_credit,
            keep_details=keep_details,
        )
    options = score_options(
        format=format,
        merged=merged,
        labels=labels,
        repair=repair,
        credit=credit,
        matching=matching,
        min_overlap=min_overlap,
        min_overlap_of=min_overlap_of,
        types=types,
        mapping=mapping,
        zero_division=zd,
    )
    if judge is not None:
        options["judge"] = f"{judge_name}/{judge_credit}"
    return Report(
        counts=counts, signature=signature(options), options=options, zero_division=zd, details=details, text=text
    )


def score_options(
    *,
    format: str,
    merged: bool,
    labels: str,
    repair: str,
    credit: CreditRule,
    matching: str,
    min_overlap: float,
    min_overlap_of: str,
    types: Sequence[str] | None,
    mapping: Mapping[str, str | None],
    zero_division: float,
) -> dict[str, Any]:
    """Every option that can change a number, as the signature records it."""
    token_based = format in ("conll", "labels")
    return {
        "format": format + ("-merged" if merged else ""),
        "labels": labels.upper() if token_based else "spans",
        "repair": repair if token_based else "n/a",
        "credit": credit_label(credit),
        "matching": matching,
        "min-overlap": f"{min_overlap:g}" + (f"/{min_overlap_of}" if min_overlap else ""),
        "types": ",".join(sorted(types)) if types is not None else "all",
        "type-map": ",".join(f"{k}={v or 'O'}" for k, v in sorted(mapping.items())) or "none",
        "zero-division": f"{zero_division:g}",
        "units": "tokens" if token_based else "characters",
    }

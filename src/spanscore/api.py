"""``evaluate``: the one entry point that the CLI, the engines and users call."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .engines import Engine, LocalEngine, PartCounter, run
from .errors import OptionError
from .io import formats
from .io.conll_plan import DEFAULT_CHUNK
from .io.jsonl import Document, read_jsonl, write_jsonl
from .io.load import Loaded
from .io.reading import ANNOTATION_FORMATS, Delimiter, Format, Reading
from .io.sources import ConllSource, JsonlSource, LabelsSource, SpansSource, TypeSelection
from .io.strings import Located, StringPolicy, locate, read_strings
from .report import Report
from .stages.counts import CreditRule, MinOverlapOf, Options, credit_label
from .stages.criteria import CRITERIA
from .stages.judging import Judge, JudgeCredit
from .stages.matching import Method
from .stages.parts import EXAMPLE_LIMIT, JudgeSpec, RowSink, Source, Wanted
from .stages.scores import check_beta, check_zero_division


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
    reading: Reading | None = None,
) -> Loaded:
    """Read a reference and a prediction into two span sets over the same text (the whole corpus
    in memory: ``evaluate`` streams instead)."""
    if reading is None:
        reading = Reading(format, labels, repair, delimiter, token_column, label_column, merged)  # type: ignore[arg-type]
    whole = 1 << 40
    if isinstance(reference, str | Path) and os.path.isfile(reference):
        whole = os.path.getsize(reference) + 1  # one chunk: the planner reads a window this big
    source = open_source(reference, predicted, reading, TypeSelection(), chunk_bytes=whole)
    if isinstance(source, LabelsSource | SpansSource):
        source = dataclasses.replace(source, per_part=max(len(source.reference), 1))
    part = next(iter(source.parts()))
    data = source.load(part)
    return Loaded(data.reference, data.predicted, data.text, max(data.documents, 1), data.sentences, data.tokens)


def open_source(
    reference: Any, predicted: Any, reading: Reading, selection: TypeSelection, chunk_bytes: int = DEFAULT_CHUNK
) -> Source:
    """The source that reads ``reference`` and ``predicted`` as ``reading`` says."""
    if reading.format == "conll":
        return ConllSource.open(reference, predicted, reading, selection, chunk_bytes)
    if reading.format == "jsonl":
        return JsonlSource.open(reference, predicted, reading, selection, chunk_bytes)
    if reading.format == "labels":
        return LabelsSource.open(reference, predicted, reading, selection)
    return SpansSource.open(reference, predicted, selection)


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
    beta: float = 1.0,
    delimiter: Delimiter = "auto",
    token_column: int = 0,
    label_column: int = -1,
    reading: Reading | None = None,
    judge: Judge | None = None,
    judge_credit: JudgeCredit = "accept",
    judge_name: str = "none",
    keep_details: bool = True,
    documents: bool = False,
    document_types: bool = False,
    rows: RowSink | None = None,
    chunk_bytes: int = DEFAULT_CHUNK,
    jobs: int = 1,
    engine: Engine | None = None,
    progress: Callable[[int, int], None] | None = None,
    predicted_format: str | None = None,
    strings: StringPolicy | None = None,
    reference_options: Mapping[str, Any] | None = None,
    predicted_options: Mapping[str, Any] | None = None,
) -> Report:
    """Score predicted mentions against reference mentions under every criterion.

    ``format`` says what ``reference`` and ``predicted`` are: ``"conll"`` and ``"jsonl"`` take file
    paths, ``"labels"`` takes lists of label lists (one per sentence), ``"spans"`` takes lists of
    ``(start, end, label)`` per document. Nothing is guessed from Python types. ``reading`` may
    give every reading option at once (a ``spanscore.io.reading.Reading``) instead.

    Every input is read and counted in chunks (``chunk_bytes`` of reference for files) in bounded
    memory, in this process, in ``jobs`` forked worker processes, or by ``engine`` (a Dask
    cluster: ``spanscore.engines.dask_engine.DaskEngine``); the numbers never depend on which.
    ``keep_details`` keeps each chunk's matched pairs and text for ``Report.pair_rows`` and the
    error examples; ``documents`` keeps every statistic per document (``Report.document_rows``,
    and the macro average over documents), and ``document_types`` per document and type too (the
    per-type intervals of ``significance.bootstrap_types``); ``rows`` receives the rendered report
    rows of each chunk in corpus order (``spanscore.presentation.ReportWriter``).

    ``format`` may also name an annotation tool's export (``brat``, ``label-studio``, ``doccano``,
    ``prodigy``, ``hf-datasets``: ``spanscore.io.formats``, options for its reader in
    ``reference_options`` and ``predicted_options``), and ``predicted_format`` the prediction's
    format where it differs; documents are paired by id, and what the readers skipped and every
    predicted boundary inside a reference token are in ``Report.read``. ``predicted_format=
    "strings"`` reads ``predicted`` as mentions given as strings, as language models return them
    (``spanscore.io.strings``): each is located in the reference document's text under the
    ``strings`` policy, and the report says how each was found (``Report.located``).

    >>> r = evaluate(reference=[["B-ORG", "I-ORG", "I-ORG", "I-ORG"]],
    ...              predicted=[["O", "B-ORG", "I-ORG", "I-ORG"]], format="labels")
    >>> r.metrics["strict"]["f1"], r.metrics["overlap"]["f1"]
    (0.0, 0.5)
    """
    if reading is None:
        reading = Reading(format, labels, repair, delimiter, token_column, label_column, merged)  # type: ignore[arg-type]
    text_formats = ("jsonl", *ANNOTATION_FORMATS)
    if predicted_format is not None or reading.format in ANNOTATION_FORMATS:
        side = predicted_format or reading.format
        if side not in ("strings", *text_formats) or reading.format not in text_formats:
            raise OptionError(
                f"mentions with character offsets are read from {', '.join(text_formats)} (and predictions also as"
                f" strings); not {reading.format} against {side}"
            )
        ref_docs, notes = _documents(reading.format, reference, reference_options)
        located = None
        if side == "strings":
            policy = strings if strings is not None else StringPolicy()
            located = Located(policy)
            placed_ref, placed_pred = locate(
                ref_docs, read_strings(str(predicted)), policy, located, path=str(predicted)
            )
        else:
            pred_docs, pred_notes = _documents(side, predicted, predicted_options)
            placed_ref, placed_pred = ref_docs, pred_docs
            notes = {"reference": notes, "predicted": pred_notes}
            notes["misaligned"] = _misaligned(ref_docs, pred_docs)
        with tempfile.TemporaryDirectory(prefix="spanscore-documents-") as folder:
            ref_path, pred_path = Path(folder) / "reference.jsonl", Path(folder) / "predicted.jsonl"
            write_jsonl(placed_ref, ref_path)
            write_jsonl(placed_pred, pred_path)
            report = evaluate(
                reference=ref_path,
                predicted=pred_path,
                reading=dataclasses.replace(reading, format="jsonl"),
                credit=credit,
                matching=matching,
                min_overlap=min_overlap,
                min_overlap_of=min_overlap_of,
                types=types,
                type_map=type_map,
                zero_division=zero_division,
                beta=beta,
                judge=judge,
                judge_credit=judge_credit,
                judge_name=judge_name,
                keep_details=keep_details,
                documents=documents,
                document_types=document_types,
                rows=rows,
                chunk_bytes=chunk_bytes,
                jobs=jobs,
                engine=engine,
                progress=progress,
            )
        if reading.format in ANNOTATION_FORMATS:
            report.options["format"] = reading.format
        if side != reading.format:
            report.options["predicted-format"] = side
        if located is not None:
            report.options["locate"] = located.policy.signature().removeprefix("strings:")
            report.located = located.to_dict()
        else:
            report.read = notes
        report.signature = signature(report.options)
        return report
    credit = _credit(credit)
    if not isinstance(min_overlap, int | float) or isinstance(min_overlap, bool):
        raise OptionError(f"min_overlap must be a number between 0 and 1, not {min_overlap!r}")
    opts = Options(credit=credit, matching=matching, min_overlap=float(min_overlap), min_overlap_of=min_overlap_of)
    zd = check_zero_division(float(zero_division))
    beta = check_beta(beta)
    if judge_credit not in ("accept", "probability"):
        raise OptionError("judge_credit must be accept or probability")
    if isinstance(types, str):
        raise OptionError(f"types must be a list of type names, not the string {types!r}")
    mapping = _parse_type_map(type_map)
    selection = TypeSelection(tuple(sorted(mapping.items())), None if types is None else tuple(types))
    source = open_source(reference, predicted, reading, selection, chunk_bytes)
    report_rows = rows is not None
    wanted = Wanted(
        documents=documents or document_types,
        document_types=document_types,
        rows=tuple(c.name for c in CRITERIA) + (("learned",) if judge is not None else ()) if report_rows else (),
        rows_dir=rows.rows_dir if rows is not None else None,
        details=keep_details,
        examples=EXAMPLE_LIMIT if keep_details or report_rows else 0,
    )
    counter = PartCounter(source, opts, wanted, JudgeSpec(judge, judge_credit) if judge is not None else None)
    total = run(counter, engine if engine is not None else LocalEngine(jobs), sink=rows, progress=progress)
    _check_selection(selection, total.seen_types)
    options = score_options(
        reading=reading,
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
    if beta != 1.0:
        options["beta"] = f"{beta:g}"
    return Report(
        counts=total.counts,
        signature=signature(options),
        options=options,
        zero_division=zd,
        examples=total.examples if keep_details or report_rows else None,
        kept=total.details if keep_details else None,
        documents=total.docs,
        unit_kind="sentence" if reading.format in ("conll", "labels") else "document",
        repairs=total.repairs,
        beta=beta,
    )


def _documents(name: str, path: Any, options: Mapping[str, Any] | None) -> tuple[list[Document], dict[str, Any]]:
    """The documents of a file (or folder) in a text format, and what its reader skipped."""
    if name == "jsonl" and not options:
        return read_jsonl(path), {}
    docs, notes = formats.read(name, path, **dict(options or {}))
    fragments = sum(1 for d in docs for f in d.fragments if f is not None)
    out: dict[str, Any] = {"skipped": dict(notes.skipped), "misaligned": list(notes.misaligned)[:EXAMPLE_LIMIT]}
    out["misaligned_count"] = len(notes.misaligned)
    if fragments:
        out["discontinuous_mentions"] = fragments
    return [Document(d.id, d.text, d.spans, k + 1) for k, d in enumerate(docs)], out


def _misaligned(reference: Sequence[Document], predicted: Sequence[Document]) -> dict[str, Any]:
    """Predicted boundaries inside a reference token (whitespace tokens), by document id: counted
    and listed, never moved."""
    by_id = {d.id: d for d in reference}
    found: list[dict[str, Any]] = []
    for p in predicted:
        r = by_id.get(p.id)
        if r is None or r.text != p.text:
            continue  # the engine names unpaired documents and differing texts itself
        found += formats.misaligned_boundaries(
            formats.Doc(r.id, r.text, r.spans), formats.Doc(p.id, p.text, p.spans)
        )
    return {"count": len(found), "examples": found[:EXAMPLE_LIMIT]}


def _check_selection(selection: TypeSelection, seen: frozenset[str]) -> None:
    """A type that --type-map or --types names must occur in the input: a misspelt name would
    otherwise score nothing, silently."""
    present = ", ".join(sorted(seen)) or "none"
    unknown = sorted(k for k, _ in selection.type_map if k not in seen)
    if unknown:
        raise OptionError(f"type_map names {', '.join(unknown)}, which neither side has; the types are: {present}")
    if selection.types is not None:
        mapping = dict(selection.type_map)
        kept = {mapping.get(t, t) for t in seen} - {None}
        missing = sorted(t for t in selection.types if t not in kept)
        if missing:
            after = ", ".join(sorted(t for t in kept if t is not None)) or "none"
            raise OptionError(f"types names {', '.join(missing)}, which neither side has; the types are: {after}")


def _credit(credit: Any) -> CreditRule:
    if isinstance(credit, str):
        if credit in ("dice", "iou"):
            return credit  # type: ignore[return-value]
        try:
            return float(credit)
        except ValueError:
            raise OptionError(f"credit must be a number in [0, 1], dice or iou, not {credit!r}") from None
    if not isinstance(credit, int | float) or isinstance(credit, bool):
        raise OptionError(f"credit must be a number in [0, 1], dice or iou, not {credit!r}")
    return float(credit)


def score_options(
    *,
    reading: Reading,
    credit: CreditRule,
    matching: str,
    min_overlap: float,
    min_overlap_of: str,
    types: Sequence[str] | None,
    mapping: Mapping[str, str | None],
    zero_division: float,
) -> dict[str, Any]:
    """Every option that can change a number, as the signature records it."""
    token_based = reading.token_based
    return {
        "format": reading.format + ("-merged" if reading.merged else ""),
        "labels": reading.labels if token_based else "spans",
        "repair": reading.repair if token_based else "n/a",
        "credit": credit_label(credit),
        "matching": matching,
        "min-overlap": f"{min_overlap:g}" + (f"/{min_overlap_of}" if min_overlap else ""),
        "types": ",".join(sorted(types)) if types is not None else "all",
        "type-map": ",".join(f"{k}={v or 'O'}" for k, v in sorted(mapping.items())) or "none",
        "zero-division": f"{zero_division:g}",
        "units": "tokens" if token_based else "characters",
    }

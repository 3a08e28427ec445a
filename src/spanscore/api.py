"""The library's face: ``evaluate``, ``compare`` and ``load``.

Each takes the reference and the prediction(s) by keyword, with the format named (never guessed
from Python types), reading options as a ``Reading`` and scoring options as a ``Scoring`` (or the
fields of either as keywords), and returns a typed result whose ``to_dict`` is exactly what the
command line prints with ``--json``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from . import __version__
from .engines import Engine, LocalEngine, PartCounter, SinkEngine, run
from .errors import OptionError
from .io.conll_plan import DEFAULT_CHUNK, default_chunk
from .io.load import Loaded
from .io.reading import Delimiter, Format, Reading, level_name
from .io.sources import DocumentsSource, LabelsSource, SpansSource, open_source, train_index
from .report import Report
from .stages.counts import credit_label, group_fields
from .stages.criteria import CRITERIA
from .stages.documents import EMPTY_RULES, DocState, Histogram
from .stages.parts import EXAMPLE_LIMIT, JudgeSpec, PartResult, RowSink, Source, Wanted
from .stages.scores import discontinuous_block
from .stages.scoring import SCORING_FIELDS, Scoring, ScoringOptions, TypeSelection

if TYPE_CHECKING:
    from typing_extensions import Unpack

    # Imported where a run asks for them (intervals, groups, buckets, a comparison, strings), so
    # that a plain count starts without them.
    from .analysis import significance
    from .comparison import Comparison
    from .io.strings import StringPolicy
    from .stages import buckets as attributes


class ReadingOptions(TypedDict, total=False):
    """``Reading``'s fields as keywords (``evaluate(labels="IOBES", repair="discard")``)."""

    labels: str
    repair: str
    merged: bool
    delimiter: Delimiter
    token_column: int
    label_column: int
    levels: Sequence[int]
    predicted_format: str | None
    strings: StringPolicy | None
    reference_options: Mapping[str, Any] | None
    predicted_options: Mapping[str, Any] | None


class Options(ReadingOptions, ScoringOptions, total=False):
    """Every reading and scoring option, as keywords."""


READING_FIELDS: tuple[str, ...] = ("format", *ReadingOptions.__annotations__)


def _split(
    format: Format | None, reading: Reading | None, scoring: Scoring | None, options: Mapping[str, Any]
) -> tuple[Reading, Scoring]:
    """One ``Reading`` and one ``Scoring`` from the objects given and the keywords that amend them."""
    unknown = sorted(set(options) - set(READING_FIELDS) - set(SCORING_FIELDS))
    if unknown:
        raise OptionError(f"unknown option {unknown[0]!r}")
    read = {k: v for k, v in options.items() if k in READING_FIELDS}
    if format is not None:
        read["format"] = format
    reading = Reading(**read) if reading is None else dataclasses.replace(reading, **read)
    return reading, Scoring.of(scoring, **{k: v for k, v in options.items() if k in SCORING_FIELDS})


def signature(options: Mapping[str, Any]) -> str:
    """One string naming the version and every option that can change a number."""
    return "|".join([f"spanscore:{__version__}", *(f"{k}:{v}" for k, v in options.items())])


def score_options(reading: Reading, scoring: Scoring) -> dict[str, str]:
    """Every option that can change a number, in the signature's order."""
    return {
        **reading.signature_fields(),
        **scoring.signature_fields(),
        "units": "tokens" if reading.token_based else "characters",
        **scoring.tail_fields(),
        **reading.tail_fields(),
    }


def load(
    *,
    reference: Any,
    predicted: Any,
    format: Format | None = None,
    reading: Reading | None = None,
    **options: Unpack[ReadingOptions],
) -> Loaded:
    """Read a reference and a prediction into two span sets over the same text (the whole corpus
    in memory: ``evaluate`` streams instead)."""
    reading, _ = _split(format, reading, None, options)
    whole = 1 << 40
    if isinstance(reference, str | Path) and os.path.isfile(reference):
        whole = os.path.getsize(reference) + 1  # one chunk: the planner reads a window this big
    source: Source = open_source(reference, predicted, reading, TypeSelection(), chunk_bytes=whole)
    # One part holding everything: the whole corpus is wanted in memory.
    if isinstance(source, LabelsSource | SpansSource):
        source = dataclasses.replace(source, per_part=max(len(source.reference), 1))
    elif isinstance(source, DocumentsSource):
        source = dataclasses.replace(source, per_part=max(len(source.reference), 1), chunk_bytes=whole)
    whole_part: Any = next(iter(source.parts()))
    data = source.load(whole_part)
    return Loaded(data.reference, data.predicted, data.text, max(data.documents, 1), data.sentences, data.tokens)


def evaluate(
    *,
    reference: Any,
    predicted: Any = None,
    format: Format | None = None,
    reading: Reading | None = None,
    scoring: Scoring | None = None,
    ci: float | None = None,
    resamples: int = 1000,
    seed: int = 0,
    by: str | None = None,
    buckets: Sequence[str] = (),
    train: Any = None,
    bucket_edges: Mapping[str, Sequence[float]] | None = None,
    keep_details: bool | None = None,
    documents: bool = False,
    document_types: bool = False,
    empty_documents: str = "skip",
    rows: RowSink | None = None,
    chunk_bytes: int | None = None,
    jobs: int = 1,
    engine: Engine | None = None,
    progress: Callable[[int, int], None] | None = None,
    document_sink: Any = None,
    **options: Unpack[Options],
) -> Report:
    """Score predicted mentions against reference mentions under every criterion.

    ``format`` names what the inputs are, never guessed: ``conll`` (the default) or ``jsonl``
    files, ``labels`` (label lists per sentence), ``spans`` (``(start, end, label)`` per
    document) or an annotation tool's export (``brat``, ``label-studio``, ``doccano``,
    ``prodigy``, ``hf-datasets``, ``docbin``, ``webanno``); ``predicted_format="strings"`` locates mentions given as
    strings (language models' output) in the reference's text. Reading and scoring options come
    as a ``Reading`` and a ``Scoring``, or as keywords amending them.

    ``ci`` adds bootstrap intervals over documents to every score (``Report.intervals``); ``by``
    scores each group of documents sharing a value of that field (``Report.breakdown``);
    ``buckets`` scores mentions by attribute (``length``, ``seen``, ``consistency``,
    ``frequency``, ``sentence-length``, ``density``, ``oov``, ``depth``, or a document field), those that
    compare with a training corpus reading ``train`` (a file in the reference's format), each
    numeric one bucketed by ``bucket_edges[name]`` or its defaults (``Report.buckets``).

    Input is counted in chunks (``chunk_bytes``; by default 1 MiB of reference where one process
    counts, 512 KiB where more may), here, in ``jobs`` processes or by ``engine``, with the same
    numbers. ``keep_details`` keeps the matched pairs (``Report.pair_rows``; by
    default where the counting runs on this machine, not on another ``engine``, whose workers
    would send every chunk's pairs and text back),
    ``documents`` every statistic per document, ``document_types`` per document and type;
    ``empty_documents`` whether the mean over documents leaves out (``"skip"``) or scores
    (``"score"``, as ``zero_division``) those without mentions on either side; ``rows``
    receives each chunk's report rows in corpus order (``presentation.ReportWriter``);
    ``document_sink`` every statistic of each document in corpus order
    (``presentation.documents.DocumentWriter``): as the parts are counted, the report then
    holding the per-document statistics only as additive state; once counted, from the
    per-document counts, where ``documents`` or ``document_types`` is asked for or buckets of
    attributes come with ``ci``.

    ```pycon
    >>> r = evaluate(reference=[["B-ORG", "I-ORG", "I-ORG", "I-ORG"]],
    ...              predicted=[["O", "B-ORG", "I-ORG", "I-ORG"]], format="labels")
    >>> r.metrics["strict"]["f1"], r.metrics["overlap"]["f1"]
    (0.0, 0.5)

    ```
    """
    _check_evaluate(locals())
    if chunk_bytes is None:
        chunk_bytes = default_chunk(engine.jobs if isinstance(engine, LocalEngine) else 0 if engine else jobs)
    if keep_details is None:
        keep_details = engine is None or isinstance(engine, LocalEngine)
    steps = _evaluation(
        reference=reference, predicted=predicted, format=format, reading=reading, scoring=scoring, ci=ci,
        resamples=resamples, seed=seed, by=by, buckets=buckets, train=train, bucket_edges=bucket_edges,
        keep_details=keep_details, documents=documents, document_types=document_types,
        empty_documents=empty_documents, rows=rows, chunk_bytes=chunk_bytes, jobs=jobs, engine=engine,
        options=options, document_sink=document_sink,
    )
    counter = next(steps)
    chosen: Engine = engine or LocalEngine(jobs)
    groups = getattr(counter, "groups", None)
    if groups is not None:  # --by: each part's rows folded into its groups' state as it comes
        from .analysis.breakdown import FieldEngine

        # Rows of every statistic (not narrow) are counted for the sink, as they come.
        chosen = FieldEngine(chosen, groups, sink=None if counter.wanted.narrow else document_sink)
    elif document_sink is not None and not (by or documents or document_types) and _rows_stream(counter, buckets, ci):
        # Each part's rows written as they come, then kept only as additive state.
        chosen = SinkEngine(chosen, document_sink)
    return _finished(steps, run(counter, chosen, sink=rows, progress=progress))


def _rows_stream(counter: PartCounter, buckets: Sequence[str], ci: float | None) -> bool:
    """Whether a run without a grouping by a field streams its per-document rows: buckets only
    of attributes and without intervals (each bucket's totals are then summed part by part)."""
    return not buckets or (ci is None and len(counter.wanted.buckets) == len(buckets))


def _finished(steps: Generator[PartCounter, PartResult, Report], total: PartResult) -> Report:
    """The report of an evaluation (``_evaluation``) given its counted total."""
    try:
        steps.send(total)
    except StopIteration as done:
        report: Report = done.value
        return report
    raise RuntimeError("spanscore bug: an evaluation asked for a second count")


def _evaluation(
    *, reference: Any, predicted: Any, format: Format | None, reading: Reading | None, scoring: Scoring | None,
    ci: float | None, resamples: int, seed: int, by: str | None, buckets: Sequence[str], train: Any,
    bucket_edges: Mapping[str, Sequence[float]] | None, keep_details: bool, documents: bool, document_types: bool,
    empty_documents: str, rows: RowSink | None, chunk_bytes: int, jobs: int, engine: Engine | None,
    options: Mapping[str, Any], document_sink: Any = None,
) -> Generator[PartCounter, PartResult, Report]:
    """``evaluate`` in two steps: it yields the counter of every part, is sent the folded total
    and returns the report (so ``compare`` can count its systems side by side)."""
    reading, scoring = _split(format, reading, scoring, options)
    if empty_documents not in EMPTY_RULES:
        raise OptionError(f"empty_documents is one of {', '.join(EMPTY_RULES)}, not {empty_documents!r}")
    if by is not None:  # the analyses load where a run asks for them (the intervals' once counted, below)
        from .analysis import reliability, significance
    if by is not None or buckets:
        from .analysis import breakdown as breakdowns
    source = open_source(reference, predicted, reading, scoring.selection, chunk_bytes)
    types = document_types or ci is not None
    chosen, fields = _attributes(buckets, bucket_edges, train, reading)
    # Per-document rows for a sink are written as the parts come (``SinkEngine``), or where a
    # grouping by a field streams (its state is made of the rows after the sink has them); with
    # buckets of attributes and intervals they come from the whole per-document table.
    grouping = by is not None or bool(fields)
    sunk = document_sink is not None and not (documents or document_types)
    sunk = sunk and (not chosen or (ci is None and not grouping))
    documents = documents or (document_sink is not None and not sunk)
    # A breakdown and buckets by a document field need each group's per-document statistics
    # only as additive state, unless the per-document rows are asked for themselves.
    streamed = grouping and not (documents or document_types)
    groups = _field_groupings(reference, by, fields, reading) if streamed else None
    values = None if by is None or streamed else breakdowns.group_values(reference, by, reading)
    field_values = {} if streamed else {f: _bucket_field(reference, f, reading) for f in fields}
    wanted = _wanted(scoring, rows, keep_details, documents or types or sunk or grouping, types)
    # Intervals alone need the per-document statistics only as a histogram (additive, small).
    light = ci is not None and not (documents or document_types or by is not None or buckets or sunk)
    wanted = dataclasses.replace(wanted, histogram=light)
    workers = engine.jobs if isinstance(engine, LocalEngine) else jobs
    wanted = dataclasses.replace(wanted, buckets=chosen, train=_train_index(chosen, train, reading, workers))
    counter = PartCounter(source, scoring.options, wanted, _judge_spec(scoring))
    # Bucket intervals alone need each bucket's per-document statistics only as additive state.
    grouped = ci is not None and bool(chosen) and not (documents or document_types or by is not None or fields)
    if grouped:
        from .analysis import buckets as bucket_scores

        inner = dataclasses.replace(wanted, documents=True, document_types=True, histogram=False)
        counter = bucket_scores.GroupCounter(source, scoring.options, inner, _judge_spec(scoring), state=True)
    if groups is not None:
        narrow = dataclasses.replace(wanted, narrow=not sunk)
        counter = breakdowns.FieldCounter(source, scoring.options, narrow, _judge_spec(scoring), groups=groups)
    total = yield counter
    if ci is not None:  # checked before counting (``_check_evaluate``); the command line loads these meanwhile
        from .analysis import reliability, significance
    resampling = None if ci is None else significance.Resampling(level=ci, resamples=resamples, seed=seed)
    if document_sink is not None and not sunk and total.docs is not None:
        document_sink.add(total.docs, 0, total.discontinuous)
    bucket_states: dict[str, Any] | None = None
    if grouped and total.state is not None:
        total.state, bucket_states = bucket_scores.split_state(total.state)
    scoring.selection.check(total.seen_types)
    options_used = score_options(reading, scoring)
    report = Report(
        counts=total.counts,
        signature=signature(options_used),
        options=options_used,
        zero_division=scoring.zero_division,
        examples=total.examples if wanted.examples else None,
        kept=total.details if keep_details else None,
        documents=total.docs,
        unit_kind="sentence" if reading.token_based else "document",
        repairs=total.repairs,
        beta=scoring.beta,
        located=source.located,
        document_classes=getattr(source, "classes", None),
        read=source.read,
        empty_documents=empty_documents,
    )
    if total.docs is not None and values is not None and by is not None:
        report.breakdown = breakdowns.breakdown(
            total.docs,
            values,
            field=by,
            zero_division=scoring.zero_division,
            credit=report.counts.credit,
            beta=scoring.beta,
            resampling=resampling,
        )
    if groups is not None and total.state is not None:
        from .analysis import buckets as bucket_scores

        total.state, bucket_states = bucket_scores.split_state(total.state)
        total.state.types = total.state.types if types else None
        by_groups = groups.get(breakdowns.GROUPING)
        if by is not None and by_groups is not None:
            report.breakdown = breakdowns.state_breakdown(
                bucket_states.get(breakdowns.GROUPING, {}), tuple(by_groups.values), field=by,
                zero_division=scoring.zero_division, credit=report.counts.credit, beta=scoring.beta,
                resampling=resampling,
            )
    report.document_state = total.state
    report.discontinuous_documents = total.discontinuous
    per_document = total.docs if total.docs is not None else total.state
    if per_document is not None and resampling is not None:
        report.intervals = significance.intervals(
            per_document,
            zero_division=scoring.zero_division,
            credit=report.counts.credit,
            resampling=resampling,
            beta=scoring.beta,
        )
        figures = discontinuous_block(
            report.counts, scoring.zero_division, str(options_used.get("discontinuous", "fragments")), report.unit_kind
        )
        if figures is not None:  # the figures of Dai et al. (2020) from the same document bootstrap
            from .analysis import discontinuous

            report.intervals["discontinuous"] = discontinuous.intervals(
                total.discontinuous, documents=report.intervals["count"], figures=figures,
                strict=report.intervals["scores"]["strict"], zero_division=scoring.zero_division,
                resampling=resampling,
            )
        report.signature += significance.interval_signature(resampling, per_document.unit)
        report.warnings = reliability.few_units_warnings(report.intervals["count"], per_document.unit)
        note = reliability.narrow_note(report.intervals["count"], per_document.unit)
        if note is not None:  # what the interval tables' titles say
            report.intervals["note"] = note
        if report.breakdown is not None and by is not None:
            report.warnings += reliability.group_warnings(report.breakdown["groups"], per_document.unit, by)
        reliability.warn(report.warnings)
    if buckets:
        report.buckets = _bucket_results(report, total, chosen, field_values, resampling, bucket_states, groups)
    if len(reading.levels) > 1:  # one JSONL level read alone is the whole report
        report.levels = _level_results(reference, predicted, reading, scoring, chunk_bytes, jobs)
    return report


def _level_results(
    reference: Any,
    predicted: Any,
    reading: Reading,
    scoring: Scoring,
    chunk_bytes: int,
    jobs: int,
) -> dict[str, Any]:
    """Each nesting level scored alone (its own matching: an inner mention never matches an outer
    one), and with two levels GermEval 2014's measures (Benikova et al. 2014): its official
    strict score over both levels and its loose one sum the two levels' exact matches, found and
    gold mentions; loose reads a type's ``deriv`` and ``part`` forms (LOCderiv) as the type."""
    strict = level_reports(reference, predicted, reading, scoring, chunk_bytes=chunk_bytes, jobs=jobs)
    out: dict[str, Any] = {}
    for name, level, report in zip(_names_of_levels(reading), reading.levels, strict, strict=True):
        out[name] = {"metrics": report.metrics}
        if isinstance(level, int):
            out[name] = {"column": level, **out[name]}
    if len(strict) != 2:
        return out
    germeval = {"strict": _summed(strict), "outer": _summed(strict[:1]), "inner": _summed(strict[1:])}
    if not scoring.type_map and scoring.types is None:
        loose = []
        for k, level_report in enumerate(strict):
            coarse = {t: t.removesuffix("deriv").removesuffix("part") for t in level_report.counts.types}
            mapped = {t: c for t, c in coarse.items() if c != t and c}
            loose += level_reports(
                reference, predicted, reading, Scoring.of(scoring, type_map=mapped or None),
                chunk_bytes=chunk_bytes, jobs=jobs, only=k,
            )
        germeval["loose"] = _summed(loose)
    out["germeval"] = germeval
    return out


def _names_of_levels(reading: Reading) -> list[str]:
    """The levels' names in the results: outer, inner, level3... for CoNLL columns; JSONL's own."""
    return [level if isinstance(level, str) else level_name(k) for k, level in enumerate(reading.levels)]


def level_reports(
    reference: Any,
    predicted: Any,
    reading: Reading,
    scoring: Scoring,
    *,
    chunk_bytes: int = DEFAULT_CHUNK,
    jobs: int = 1,
    documents: bool = False,
    only: int | None = None,
) -> list[Report]:
    """Each level's report, its mentions read alone (a CoNLL level as its label column, a JSONL
    level as the mentions with its name); ``only``: that level's alone. A level whose name no
    mention of either side has is refused (a misspelt name would score nothing)."""
    out = []
    levels: tuple[int | str, ...] = reading.levels
    for k, level in enumerate(levels):
        if only is not None and k != only:
            continue
        if isinstance(level, str):
            one = dataclasses.replace(reading, levels=(level,))
        else:
            one = dataclasses.replace(reading, levels=(), label_column=level)
        report = evaluate(
            reference=reference,
            predicted=predicted,
            reading=one,
            scoring=scoring,
            keep_details=False,
            documents=documents,
            chunk_bytes=chunk_bytes,
            jobs=jobs,
        )
        strict = report.metrics["strict"]
        if isinstance(level, str) and strict["reference"] == 0 and strict["predicted"] == 0 and only is None:
            raise OptionError(
                f"levels: no mention of either side is at level {level!r}: name the levels their spans' level"
                " field holds (as convert --levels writes them: outer, inner, level3...)"
            )
        out.append(report)
    return out


def _summed(reports: Sequence[Report]) -> dict[str, Any]:
    """Exact matches, found and gold mentions summed over levels, and the scores they give."""
    found = sum(r.metrics["strict"]["predicted"] for r in reports)
    gold = sum(r.metrics["strict"]["reference"] for r in reports)
    correct = sum(r.metrics["strict"]["full"] for r in reports)
    precision = correct / found if found else 0.0
    recall = correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "correct": correct, "found": found, "gold": gold}


def _attributes(
    names: Sequence[str], edges: Mapping[str, Sequence[float]] | None, train: Any, reading: Reading
) -> tuple[tuple[attributes.Attribute, ...], tuple[str, ...]]:
    """The mention attributes asked for, and the document fields (the other names)."""
    if isinstance(names, str):
        raise OptionError("buckets is a list of attribute names (buckets=['length']), not one string")
    if not names and not edges:
        return (), ()
    from .stages import buckets as attributes

    edges = dict(edges or {})
    if len(set(names)) < len(names):
        raise OptionError(f"buckets names an attribute twice: {', '.join(names)}")
    unknown = sorted(set(edges) - {n for n in names if n in attributes.ATTRIBUTES})
    if unknown:
        raise OptionError(f"bucket edges are given for {unknown[0]!r}, which is not among the buckets asked for")
    needs = [n for n in names if n in attributes.NEEDS_TRAIN]
    if needs and train is None:
        raise OptionError(f"the {needs[0]} buckets compare with a training corpus: give train (--train TRAIN)")
    if needs and reading.format in ("labels", "spans"):
        raise OptionError(
            f"the {needs[0]} buckets compare the words of mentions with the training corpus's, and format"
            f" {reading.format!r} gives no words: give both as files with their tokens (conll, jsonl...)"
        )
    chosen = tuple(
        attributes.attribute(n, edges.get(n), tokens=reading.token_based) for n in names if n in attributes.ATTRIBUTES
    )
    return chosen, tuple(n for n in names if n not in attributes.ATTRIBUTES)


def _field_groupings(reference: Any, by: str | None, fields: tuple[str, ...], reading: Reading) -> Any:
    """``--by``'s groups and each document-field bucket's, read as the reference streams."""
    from .analysis import breakdown as breakdowns
    from .stages import buckets as attributes

    return breakdowns.field_groupings(reference, by, fields, reading, attributes=attributes.ATTRIBUTES)


def _bucket_field(reference: Any, name: str, reading: Reading) -> dict[str, str]:
    """A bucket name that is no attribute is a document field of the reference: refused where no
    document has it (a misspelt attribute), naming the attributes and the fields there are."""
    from .analysis import breakdown as breakdowns
    from .stages import buckets as attributes

    return breakdowns.group_values(reference, name, reading, attributes=attributes.ATTRIBUTES)


def _train_index(
    chosen: Sequence[attributes.Attribute], train: Any, reading: Reading, jobs: int = 1
) -> attributes.TrainIndex | None:
    """The training corpus's index, built once and handed to every chunk (and worker)."""
    if train is None:
        return None
    from .stages import buckets as attributes

    if not any(a.name in attributes.NEEDS_TRAIN for a in chosen):
        return None
    if isinstance(train, attributes.TrainIndex):  # built for another system of the same run (``compare``)
        return train
    # Its words are compared with the reference's: the readers refuse bytes that are not text in
    # the file's encoding (--encoding) rather than read them as replacement characters.
    if isinstance(train, str | os.PathLike) and os.path.isfile(train):
        from .engines.local import processes_for

        # Forked readers pay for themselves over several chunks only (as the count's): a training
        # corpus of a few chunks is read faster here than by two processes forked twice.
        jobs = processes_for(os.path.getsize(train) // DEFAULT_CHUNK + 1, jobs)
    index = train_index(train, reading, jobs)  # CoNLL: read once; other formats as a reference against itself
    if index is not None:
        return index
    as_reference = dataclasses.replace(
        reading, predicted_format=None, strings=None, predicted_options=reading.reference_options
    )
    loaded = load(reference=train, predicted=train, reading=as_reference)
    return attributes.build_index(loaded.reference, loaded.text)


def _bucket_results(
    report: Report,
    total: Any,
    chosen: Sequence[attributes.Attribute],
    fields: Mapping[str, dict[str, str]],
    resampling: significance.Resampling | None,
    states: dict[str, Any] | None = None,
    streamed: Any = None,
) -> dict[str, Any]:
    """Every bucket's scores of each attribute, in the order asked for; intervals from the
    per-document rows, or from each bucket's histogram (``states``, by attribute, and each
    document field's of ``streamed``, ``breakdown.Groupings``)."""
    from .analysis import breakdown as breakdowns
    from .analysis import buckets as bucket_scores

    options = {
        "zero_division": report.zero_division,
        "credit": report.counts.credit,
        "beta": report.beta,
        "docs": total.docs,
        "resampling": resampling,
    }
    names = tuple(c.name for c in CRITERIA) + (("learned",) if "learned" in report.counts.criteria else ())
    out: dict[str, Any] = {}
    report.bucket_rows = {}
    for a in chosen:
        report.bucket_rows[a.name] = total.buckets[a.name]
        found = None if states is None or total.state is None else (states.get(a.name, {}), total.state.documents)
        out[a.name] = bucket_scores.bucket_table(
            total.buckets[a.name], group_fields(names), **options, histograms=found
        )
    for field, values in fields.items():
        rows = report.bucket_rows[field] = bucket_scores.field_rows(total.docs, values, breakdowns.MISSING)
        out[field] = bucket_scores.bucket_table(rows, total.docs.fields, **options)
    del options["docs"]
    documents = 0 if total.state is None else total.state.documents
    for field, groups in [] if streamed is None else streamed.named:
        if field != breakdowns.GROUPING:
            report.bucket_rows[field], out[field] = bucket_scores.field_table(
                (states or {}).get(field, {}), groups.values, documents, **options
            )
    return out


def _judge_spec(scoring: Scoring) -> JudgeSpec | None:
    return JudgeSpec(scoring.judge, scoring.judge_credit) if scoring.judge is not None else None


def _wanted(scoring: Scoring, rows: RowSink | None, details: bool, documents: bool, document_types: bool) -> Wanted:
    """What each chunk produces beyond its counts."""
    criteria = tuple(c.name for c in CRITERIA) + (("learned",) if scoring.judge is not None else ())
    return Wanted(
        documents=documents,
        document_types=document_types,
        rows=criteria if rows is not None else (),
        rows_dir=rows.rows_dir if rows is not None else None,
        details=details,
        examples=EXAMPLE_LIMIT,  # the first few of each kind: cheap, and in every JSON alike
    )


def compare(
    *,
    reference: Any,
    systems: Sequence[Any],
    names: Sequence[str] | None = None,
    format: Format | None = None,
    reading: Reading | None = None,
    scoring: Scoring | None = None,
    ci: float = 0.95,
    resamples: int = 1000,
    trials: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    per_type: bool = False,
    buckets: Sequence[str] = (),
    train: Any = None,
    bucket_edges: Mapping[str, Sequence[float]] | None = None,
    jobs: int = 1,
    engine: Engine | None = None,
    **options: Unpack[Options],
) -> Comparison:
    """Score each system's predictions against one reference, with bootstrap intervals over
    documents (sentences where there are none), and test each system against the first: the
    difference with its paired-bootstrap interval, and paired bootstrap and approximate
    randomisation p-values, under every criterion, SemEval scheme and the token score.

    ``systems`` are predictions in the reference's format (file paths, or Python data for
    ``labels`` and ``spans``); ``names`` default to the files' names (more of the path where two
    are alike) or ``system1``, ``system2``... Options as ``evaluate``'s.

    ```pycon
    >>> c = compare(reference=[["B-PER", "O"], ["B-LOC", "O"]],
    ...             systems=[[["B-PER", "O"], ["B-LOC", "O"]], [["B-PER", "O"], ["O", "O"]]],
    ...             format="labels", resamples=100, trials=100)
    >>> c.names, c.scores(0)["strict"]["f1"]["value"], round(c.difference(1, "strict")["difference"], 4)
    (['system1', 'system2'], 1.0, -0.3333)

    ```
    """
    from .analysis import reliability, significance
    from .comparison import Comparison, system_names
    from .engines.paired import run_paired

    _check_compare(locals())
    if not systems:
        raise OptionError("give at least one system to compare")
    names = system_names(systems) if names is None else [str(n) for n in names]
    if len(names) != len(systems) or len(set(names)) < len(names):
        raise OptionError(f"give one distinct name per system: {len(systems)} systems, names {', '.join(names)}")
    reading, scoring = _split(format, reading, scoring, options)
    resampling = significance.Resampling(level=ci, resamples=resamples, trials=trials, seed=seed)
    if not 0 < alpha < 1:
        raise OptionError(f"alpha is a number between 0 and 1, not {alpha!r}")
    fields = _attributes(buckets, bucket_edges, train, reading)[1] if buckets else ()
    # Buckets by a document field: each part's field values read where it is counted, each
    # document's rows paired into its value's joint histogram as the parts come (no system's
    # per-document table).
    by_field = _field_groupings(reference, None, fields, reading) if fields else None
    steps: list[Generator[PartCounter, PartResult, Report]] = []
    counters: list[PartCounter] = []
    for system in systems:
        step = _evaluation(
            reference=reference, predicted=system, format=None, reading=reading, scoring=scoring, ci=None,
            resamples=resamples, seed=seed, by=None, buckets=[b for b in buckets if b not in fields], train=train,
            bucket_edges=bucket_edges,
            keep_details=False, documents=True, document_types=per_type, empty_documents="skip", rows=None,
            chunk_bytes=DEFAULT_CHUNK, jobs=jobs, engine=engine, options={},
        )
        counters.append(next(step))
        steps.append(step)
        # The training corpus's index is built for the first system and handed to the others.
        train = counters[-1].wanted.train or train
    credit = credit_label(scoring.credit)
    groups: dict[str, list[Any]] | None = None
    joint: Histogram | None
    if per_type or buckets:
        # Counted side by side, each group's joint rows added to its histogram as documents finish.
        from .analysis import breakdown as breakdowns
        from .analysis import buckets as bucket_scores

        kind = functools.partial(breakdowns.LabelledCounter, groups=by_field) if fields else bucket_scores.GroupCounter
        grouped = bucket_scores.run_grouped(
            [kind(**vars(c)) for c in counters], engine or LocalEngine(jobs), names, by_field
        )
        reports = [_finished(s, total) for s, total in zip(steps, grouped.totals, strict=True)]
        joint, unit, groups = grouped.joint, grouped.unit, grouped.groups
        _keep_state(reports, joint, unit)
        _field_buckets(reports, fields, groups, 0 if joint is None else joint.documents)
    else:
        # Counted side by side, each document's rows joined into one histogram as they come.
        paired = run_paired(
            counters, engine or LocalEngine(jobs), names,
            functools.partial(significance.resampled_columns, credit=credit),
        )
        reports = [_finished(s, total) for s, total in zip(steps, paired.totals, strict=True)]
        joint, unit = paired.joint, paired.unit
        _keep_state(reports, joint, unit)
    if joint is None:
        raise OptionError("intervals need at least one document (or sentence)")
    # The corpus's tests and every group's from one call (the numbers of one call each).
    tests, compared = _compared_groups(reports, list(names), per_type, resampling, joint, groups)
    files = [str(s) if isinstance(s, str | os.PathLike) else None for s in systems]
    reliability.warn(
        reliability.few_units_warnings(joint.documents, unit, alpha=alpha, trials=trials)
    )
    return Comparison(
        tests=tests,
        files=files,
        signature=reports[0].signature,
        resampling=resampling,
        unit=unit,
        alpha=alpha,
        reports=reports,
        groups=compared,
        llm_classes=_compared_classes(reports, list(names), resampling),
        levels=_compared_levels(reference, systems, reports, list(names), reading, scoring, resampling, jobs),
    )


def _compared_levels(
    reference: Any, systems: Sequence[Any], reports: list[Report], names: list[str], reading: Reading,
    scoring: Scoring, resampling: significance.Resampling, jobs: int,
) -> dict[str, Any] | None:
    """Each nesting level's paired comparison (each system's level read alone, as ``evaluate``
    scores it, per document), and each system's GermEval 2014 measures with their difference
    from the first system's F1, where there are levels."""
    if len(reading.levels) < 2:
        return None
    from .analysis import significance

    groups = []
    for k, name in enumerate(_names_of_levels(reading)):
        alone = [level_reports(reference, s, reading, scoring, jobs=jobs, documents=True, only=k)[0] for s in systems]
        docs = [r.documents for r in alone if r.documents is not None]
        tests = significance.compare(
            docs, names, zero_division=scoring.zero_division, credit=credit_label(scoring.credit),
            resampling=resampling, beta=scoring.beta,
        )
        groups.append({
            "bucket": name,
            "reference_mentions": alone[0].metrics["strict"]["reference"],
            "systems": [
                {"name": n, "predicted_mentions": r.metrics["strict"]["predicted"], "metrics": m}
                for n, r, m in zip(names, alone, tests.intervals, strict=True)
            ],
            "comparisons": tests.comparisons,
        })
    out: dict[str, Any] = {"levels": groups}
    measures: list[dict[str, Any]] = [(r.levels or {}).get("germeval") or {} for r in reports]
    if all(measures):
        out["germeval"] = {
            key: [
                {"name": n, **m[key], "difference": None if j == 0 else m[key]["f1"] - measures[0][key]["f1"]}
                for j, (n, m) in enumerate(zip(names, measures, strict=True))
            ]
            for key in measures[0]
        }
    return out


def _compared_classes(
    reports: list[Report], names: list[str], resampling: significance.Resampling
) -> dict[str, Any] | None:
    """Each system's LLM error classes with intervals, and each against the first, where the
    mentions were given as strings."""
    classes = [r.document_classes for r in reports]
    if any(c is None for c in classes):
        return None
    from .analysis.llm_classes import compare_classes

    return compare_classes([c for c in classes if c is not None], names, resampling)


def _field_buckets(
    reports: list[Report], fields: Sequence[str], groups: Mapping[str, list[Any]], documents: int
) -> None:
    """Each system's buckets by a document field, after its buckets of attributes, from its
    columns of each bucket's joint histogram."""
    from .analysis import buckets as bucket_scores
    from .analysis import significance

    for k, report in enumerate(reports):
        for field in fields:
            found = groups.get(field, [])
            hists = {label: significance.system_histogram(hist, k) for label, hist in found}
            rows, table = bucket_scores.field_table(
                hists, [label for label, _ in found], documents, zero_division=report.zero_division,
                credit=report.counts.credit, beta=report.beta,
            )
            report.buckets = {**(report.buckets or {}), field: table}
            report.bucket_rows = {**(report.bucket_rows or {}), field: rows}


def _keep_state(reports: list[Report], joint: Histogram | None, unit: str) -> None:
    """How each system's per-document state is made out of the systems' joint histogram, made
    only if asked for (two sorts a system, which ``compare``'s own results never read)."""
    if joint is not None:
        for k, report in enumerate(reports):
            report.document_state = functools.partial(_system_state, joint, k, unit)


def _system_state(joint: Histogram, k: int, unit: str) -> DocState:
    """System ``k``'s per-document state, out of the systems' joint histogram."""
    from .analysis import significance

    return DocState.of_histogram(significance.system_histogram(joint, k), unit)


def _compared_groups(
    reports: list[Report], names: list[str], per_type: bool, resampling: significance.Resampling,
    joint: Histogram, groups: dict[str, list[Any]] | None = None,
) -> tuple[significance.Comparison, dict[str, Any]]:
    """The corpus's paired comparison (``joint``) and each type's (``per_type``) and each bucket's,
    by ``per_type`` or attribute, from each group's joint histogram (``groups``, by grouping) or
    the systems' whole rows: every histogram tested by one call."""
    from .analysis import buckets as bucket_scores

    first = reports[0]
    credit = first.counts.credit
    found: dict[str, list[Any]] = {}

    def add(grouping: str, systems: list[tuple[Any, Any]]) -> None:
        found[grouping] = bucket_scores.joint_groups(systems, credit) if groups is None else groups.get(grouping, [])

    if per_type:
        add("per_type", [(r.documents, r.documents.type_rows) for r in reports if r.documents])
    for attribute in first.bucket_rows or {}:
        add(attribute, [(r.documents, (r.bucket_rows or {})[attribute]) for r in reports])
    # Consumed: each group's histogram goes as its tests are queued (``groups``' lists emptied).
    tests, out = bucket_scores.compare_groupings(
        joint, found, names, zero_division=first.zero_division, credit=credit, resampling=resampling, beta=first.beta,
        consume=True,
    )
    assert tests is not None  # a joint histogram was given
    return tests, out


def evaluate_dask(
    *, scheduler: str | None = None, n_workers: int = 2, partition_bytes: int | None = None, **options: Any
) -> Report:
    """``evaluate(..., keep_details=False)`` counted on a Dask cluster (the ``dask`` extra).

    ``options`` are ``evaluate``'s; the report, and so its JSON, equals the local engine's. Files
    must be readable at the same path on every worker."""
    from .engines.dask_engine import DEFAULT_PARTITION, DaskEngine

    size = DEFAULT_PARTITION if partition_bytes is None else partition_bytes
    engine = DaskEngine(scheduler=scheduler, n_workers=n_workers, partition_bytes=size)
    options.setdefault("keep_details", False)
    return evaluate(**options, engine=engine)


MAX_RESAMPLES = 1_000_000
"""The most bootstrap resamples and randomisation trials (``resamples``, ``trials``): a million
already gives intervals and p-values far finer than their noise; more would run for hours."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_resampling(*, resamples: Any = 1000, trials: Any = 1000, seed: Any = 0, prefix: str = "") -> None:
    """``resamples`` and ``trials`` whole numbers from 1 to ``MAX_RESAMPLES``, ``seed`` one from
    0; ``prefix`` ("--") names them as flags."""
    for name, value in (("resamples", resamples), ("trials", trials)):
        if not _is_int(value) or not 1 <= value <= MAX_RESAMPLES:
            raise OptionError(f"{prefix}{name} is a whole number from 1 to {MAX_RESAMPLES:,}, not {value!r}")
    if not _is_int(seed) or seed < 0:
        raise OptionError(f"{prefix}seed is a whole number of at least 0, not {seed!r}")


def _check_common(given: Mapping[str, Any]) -> None:
    """The keywords ``evaluate`` and ``compare`` share, beside the options of ``Reading`` and ``Scoring``."""
    if given["reading"] is not None and not isinstance(given["reading"], Reading):
        raise OptionError(f"reading is a Reading (spanscore.Reading(...)), not {given['reading']!r}")
    if given["scoring"] is not None and not isinstance(given["scoring"], Scoring):
        raise OptionError(f"scoring is a Scoring (spanscore.Scoring(...)), not {given['scoring']!r}")
    if given["format"] is not None and not isinstance(given["format"], str):
        raise OptionError(f"format names a format (conll, jsonl, labels, spans...), not {given['format']!r}")
    ci = given["ci"]
    if ci is not None and (not _is_number(ci) or not 0 < ci < 1):
        raise OptionError(f"ci is a confidence level between 0 and 1 (0.95), not {ci!r}")
    buckets = given["buckets"]
    if isinstance(buckets, str) or not isinstance(buckets, Sequence) or not all(isinstance(b, str) for b in buckets):
        raise OptionError(f"buckets is a list of attribute names (buckets=['length']), not {buckets!r}")
    train = given["train"]
    if train is not None and not isinstance(train, str | os.PathLike | Sequence):
        raise OptionError(f"train is a file, or Python data in the reference's format, not {train!r}")
    edges = given["bucket_edges"]
    if edges is not None:
        if not isinstance(edges, Mapping):
            raise OptionError(f"bucket_edges maps attribute names to edges ({{'length': [2, 4]}}), not {edges!r}")
        for name, values in edges.items():
            if (
                not isinstance(name, str)
                or isinstance(values, str)
                or not isinstance(values, Sequence)
                or not all(_is_number(v) for v in values)
            ):
                raise OptionError(f"bucket_edges[{name!r}] is a list of numbers ([2, 4]), not {values!r}")
    if not _is_int(given["jobs"]) or given["jobs"] < 1:
        raise OptionError(f"jobs is a whole number of at least 1, not {given['jobs']!r}")
    engine = given["engine"]
    if engine is not None and not callable(getattr(engine, "results", None)):
        raise OptionError(f"engine is an engine (LocalEngine, DaskEngine), not {engine!r}")


def _check_evaluate(given: Mapping[str, Any]) -> None:
    _check_common(given)
    check_resampling(resamples=given["resamples"], seed=given["seed"])
    by = given["by"]
    if by is not None and (not isinstance(by, str) or not by):
        raise OptionError(f"by names a document field (source, or meta.year), not {by!r}")
    for name in ("keep_details", "documents", "document_types"):
        if not isinstance(given[name], bool) and not (name == "keep_details" and given[name] is None):
            raise OptionError(f"{name} is True or False, not {given[name]!r}")
    sink = given["document_sink"]
    if sink is not None and not callable(getattr(sink, "add", None)):
        raise OptionError(f"document_sink receives each document's rows (a DocumentWriter), not {sink!r}")
    rows = given["rows"]
    if rows is not None and (not callable(rows) or not hasattr(rows, "rows_dir")):
        raise OptionError(f"rows receives each chunk's rows (a presentation.ReportWriter), not {rows!r}")
    if given["chunk_bytes"] is not None and (not _is_int(given["chunk_bytes"]) or given["chunk_bytes"] < 1):
        raise OptionError(f"chunk_bytes is a whole number of bytes of at least 1, not {given['chunk_bytes']!r}")
    if given["progress"] is not None and not callable(given["progress"]):
        raise OptionError(f"progress is a function of (done, total), not {given['progress']!r}")


def _check_compare(given: Mapping[str, Any]) -> None:
    _check_common(given)
    check_resampling(resamples=given["resamples"], trials=given["trials"], seed=given["seed"])
    systems, names = given["systems"], given["names"]
    if isinstance(systems, str | os.PathLike) or not isinstance(systems, Sequence):
        raise OptionError(f"systems is a list of predictions (files or Python data), not {systems!r}")
    if names is not None and (
        isinstance(names, str) or not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names)
    ):
        raise OptionError(f"names is a list of strings, one per system, not {names!r}")
    alpha = given["alpha"]
    if not _is_number(alpha) or not 0 < alpha < 1:
        raise OptionError(f"alpha is a number between 0 and 1, not {alpha!r}")
    if not isinstance(given["per_type"], bool):
        raise OptionError(f"per_type is True or False, not {given['per_type']!r}")
    seen: set[str] = set()
    for system in systems:
        if isinstance(system, str | os.PathLike):
            if os.path.realpath(system) in seen:
                raise OptionError(f"the prediction file {system} is given twice: give each system once")
            seen.add(os.path.realpath(system))


__all__ = ["MAX_RESAMPLES", "Options", "ReadingOptions", "compare", "evaluate", "evaluate_dask", "load", "signature"]

"""spaCy: a scorer for a pipeline's config (and ``spacy benchmark accuracy``), and Docs and DocBin
files scored under every criterion.

spaCy's own NER scorer maps each predicted entity onto the reference's tokens and ignores a
prediction over reference tokens without entity annotation; a prediction whose boundary falls
inside a reference token is snapped to whole tokens. Here mentions are compared by their
character offsets, so a prediction that does not line up with the reference's tokens is a
boundary error (or a spurious mention), never silence.

In a config::

    [components.ner]
    scorer = {"@scorers":"spanscore.ner_scorer.v1"}

The scorer is found through the entry point ``spacy_scorers`` once spanscore is installed with
the extra ``spacy``. It returns spaCy's keys (``ents_p``, ``ents_r``, ``ents_f``,
``ents_per_type``; strict match, so the default ``score_weights`` keep working) and one key per
spanscore score: ``spanscore_overlap_f``, ``spanscore_semeval_partial_p``, ``spanscore_token_r``...
Name any of them in ``[training.score_weights]`` to select checkpoints by it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..api import evaluate
from ..errors import MissingExtra, OptionError
from ..report import Report
from ..runtime.optional import module


def _spacy() -> Any:
    try:
        return module("spacy")
    except ImportError as exc:
        raise MissingExtra.of(exc, "the spaCy integration (spaCy)", "spacy") from None


def doc_spans(doc: Any, spans_key: str | None = None) -> list[tuple[int, int, str]]:
    """A Doc's mentions as character offsets: ``doc.ents``, or the span group ``spans_key``."""
    spans = doc.ents if spans_key is None else doc.spans.get(spans_key, [])
    return [(int(s.start_char), int(s.end_char), str(s.label_)) for s in spans]


def evaluate_docs(
    *, reference: Iterable[Any], predicted: Iterable[Any], spans_key: str | None = None, **options: Any
) -> Report:
    """Score predicted Docs against reference Docs of the same texts, under every criterion.

    ``options`` are those of ``spanscore.evaluate`` (credit, matching, ...); the mentions are
    compared by character offsets, whatever the two Docs' tokenisations."""
    ref_docs, pred_docs = list(reference), list(predicted)
    if len(ref_docs) != len(pred_docs):
        raise OptionError(f"{len(ref_docs)} reference Docs but {len(pred_docs)} predicted: give one prediction per Doc")
    for k, (r, p) in enumerate(zip(ref_docs, pred_docs, strict=True)):
        if r.text != p.text:
            raise OptionError(f"Doc {k}: the predicted Doc's text differs from the reference's; score Docs of one text")
    return evaluate(
        reference=[doc_spans(d, spans_key) for d in ref_docs],
        predicted=[doc_spans(d, spans_key) for d in pred_docs],
        format="spans",
        **options,
    )


def read_docbin(path: str | Path, vocab: Any = None) -> list[Any]:
    """The Docs of a DocBin file (``.spacy``), with a blank vocabulary unless one is given."""
    spacy = _spacy()
    tokens = module("spacy.tokens")
    target = Path(path)
    if not target.is_file():
        raise OptionError(f"{target}: no such DocBin file")
    try:
        docbin = tokens.DocBin().from_disk(target)
    except (ValueError, KeyError, OSError, TypeError) as exc:
        raise OptionError(f"{target}: not a DocBin (.spacy) file ({type(exc).__name__})") from None
    return list(docbin.get_docs(vocab if vocab is not None else spacy.blank("xx").vocab))


def evaluate_docbins(
    *, reference: str | Path, predicted: str | Path, spans_key: str | None = None, **options: Any
) -> Report:
    """``evaluate_docs`` of two DocBin files, Doc by Doc in file order."""
    return evaluate_docs(
        reference=read_docbin(reference), predicted=read_docbin(predicted), spans_key=spans_key, **options
    )


def _flat(report: Report) -> dict[str, Any]:
    data = report.to_dict()
    out: dict[str, Any] = {}
    blocks: dict[str, Any] = dict(data["metrics"])
    blocks.update({f"semeval_{k}": v for k, v in data["semeval"].items()})
    for name, block in blocks.items():
        for key, short in (("precision", "p"), ("recall", "r"), ("f1", "f")):
            out[f"spanscore_{name}_{short}"] = block[key]
    return out


def score_examples(examples: Iterable[Any], **options: Any) -> dict[str, Any]:
    """A scorer for spaCy's NER: spaCy's keys under the strict criterion, and every spanscore score.

    Examples whose reference has no entity annotation are left out, as spaCy's scorer does."""
    kept = [eg for eg in examples if eg.reference.has_annotation("ENT_IOB")]
    if not kept:
        return {"ents_p": None, "ents_r": None, "ents_f": None, "ents_per_type": None}
    report = evaluate_docs(
        reference=[eg.reference for eg in kept], predicted=[eg.predicted for eg in kept], keep_details=False, **options
    )
    data = report.to_dict()
    strict = data["metrics"]["strict"]
    mentions = strict["reference"] + strict["predicted"]
    out: dict[str, Any] = {
        "ents_p": strict["precision"] if mentions else None,
        "ents_r": strict["recall"] if mentions else None,
        "ents_f": strict["f1"] if mentions else None,
        "ents_per_type": {
            label: {
                "p": entry["metrics"]["strict"]["precision"],
                "r": entry["metrics"]["strict"]["recall"],
                "f": entry["metrics"]["strict"]["f1"],
            }
            for label, entry in data["per_type"].items()
        },
    }
    out.update(_flat(report))
    return out


def make_ner_scorer() -> Any:
    """The factory registered as ``spanscore.ner_scorer.v1`` in spaCy's ``scorers`` registry."""

    def scorer(examples: Iterable[Any], **kwargs: Any) -> dict[str, Any]:
        del kwargs  # spaCy passes the component's settings; the criteria need none
        return score_examples(examples)

    return scorer


def register() -> None:
    """Register the scorer in spaCy's registry (the entry point does this for spaCy itself; this is
    for code that loads a config before spanscore is installed as a package)."""
    _spacy().registry.scorers("spanscore.ner_scorer.v1")(make_ner_scorer)

"""spaCy: the registered scorer in a real pipeline and in ``spacy benchmark accuracy``, DocBin files
the test writes, and predictions that do not line up with the reference's tokens."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

spacy = pytest.importorskip("spacy")
from spacy.tokens import Doc, DocBin, Span  # noqa: E402
from spacy.training import Example  # noqa: E402

import spanscore  # noqa: E402
from spanscore.errors import OptionError  # noqa: E402
from spanscore.integrations.spacy import evaluate_docbins, evaluate_docs, score_examples  # noqa: E402

TEXTS = [
    ("I love New York City today .", [(7, 20, "LOC")]),
    ("Bank of America hired John Smith .", [(0, 15, "ORG"), (22, 32, "PER")]),
    ("nothing here", []),
]


def with_ents(doc: Any, spans: list[tuple[int, int, str]]) -> Any:
    made = [doc.char_span(s, e, label=label, alignment_mode="strict") for s, e, label in spans]
    assert all(m is not None for m in made)
    doc.ents = made
    return doc


@pytest.fixture(scope="module")
def nlp() -> Any:
    return spacy.blank("en")


def test_docs_score_as_their_character_offsets(nlp: Any) -> None:
    gold = [with_ents(nlp(t), s) for t, s in TEXTS]
    pred_spans = [[(11, 20, "LOC")], [(0, 15, "ORG"), (22, 26, "PER")], [(0, 7, "MISC")]]
    pred = [with_ents(nlp(t), s) for (t, _), s in zip(TEXTS, pred_spans, strict=True)]
    ours = evaluate_docs(reference=gold, predicted=pred).to_dict()
    direct = spanscore.evaluate(reference=[s for _, s in TEXTS], predicted=pred_spans, format="spans").to_dict()
    assert ours["metrics"] == direct["metrics"] and ours["semeval"] == direct["semeval"]
    with pytest.raises(OptionError, match="text differs"):
        evaluate_docs(reference=gold[:1], predicted=[nlp("another text")])


def test_a_prediction_inside_a_reference_token_is_an_error_not_snapped(nlp: Any) -> None:
    # The prediction is tokenised differently ("N" + "ew") and its entity starts inside the
    # reference's token "New": spaCy's scorer snaps it to whole reference tokens and counts it
    # correct; by character offsets it is a boundary error.
    text = "I love New York City today ."
    gold = with_ents(nlp(text), [(7, 20, "LOC")])
    words = ["I", "love", "N", "ew", "York", "City", "today", "."]
    pred = Doc(nlp.vocab, words=words, spaces=[True, True, False, True, True, True, True, False])
    assert pred.text == text
    pred.ents = [Span(pred, 3, 6, label="LOC")]  # "ew York City"
    example = Example(pred, gold)
    theirs = spacy.scorer.get_ner_prf([example])
    ours = score_examples([example])
    assert theirs["ents_f"] == 1.0  # snapped: silently right
    assert ours["ents_f"] == 0.0 and ours["spanscore_strict_f"] == 0.0
    assert ours["spanscore_overlap_f"] == 0.5  # a partial match earns half its credit


def test_the_registered_scorer_in_a_pipeline(nlp: Any) -> None:
    scorer = spacy.registry.scorers.get("spanscore.ner_scorer.v1")  # found through the entry point
    assert callable(scorer())
    pipe = spacy.blank("en")
    ruler = pipe.add_pipe("entity_ruler", config={"scorer": {"@scorers": "spanscore.ner_scorer.v1"}})
    ruler.add_patterns([{"label": "LOC", "pattern": "New York"}, {"label": "ORG", "pattern": "Bank of America"}])
    examples = [Example(pipe.make_doc(t), with_ents(pipe.make_doc(t), s)) for t, s in TEXTS]
    scores = pipe.evaluate(examples)
    predicted = [pipe(t) for t, _ in TEXTS]
    expected = evaluate_docs(reference=[e.reference for e in examples], predicted=predicted).to_dict()
    assert scores["ents_f"] == pytest.approx(expected["metrics"]["strict"]["f1"])
    assert scores["spanscore_overlap_f"] == pytest.approx(expected["metrics"]["overlap"]["f1"])
    assert scores["spanscore_semeval_partial_r"] == pytest.approx(expected["semeval"]["partial"]["recall"])
    assert set(scores["ents_per_type"]) == {"LOC", "ORG", "PER"}


def test_docbin_files_and_spacy_benchmark_accuracy(nlp: Any, tmp_path: Path) -> None:
    gold_docs = [with_ents(nlp(t), s) for t, s in TEXTS]
    pred_docs = [with_ents(nlp(t), s[:1]) for t, s in TEXTS]
    DocBin(docs=gold_docs, store_user_data=True).to_disk(tmp_path / "gold.spacy")
    DocBin(docs=pred_docs, store_user_data=True).to_disk(tmp_path / "pred.spacy")
    from_files = evaluate_docbins(reference=tmp_path / "gold.spacy", predicted=tmp_path / "pred.spacy").to_dict()
    in_memory = evaluate_docs(reference=gold_docs, predicted=pred_docs).to_dict()
    assert from_files["metrics"] == in_memory["metrics"]
    (tmp_path / "notes.spacy").write_bytes(b"not msgpack at all")
    with pytest.raises(OptionError, match="not a DocBin"):
        evaluate_docbins(reference=tmp_path / "notes.spacy", predicted=tmp_path / "pred.spacy")

    pipe = spacy.blank("en")
    ruler = pipe.add_pipe("entity_ruler", config={"scorer": {"@scorers": "spanscore.ner_scorer.v1"}})
    ruler.add_patterns([{"label": "LOC", "pattern": "New York City"}])
    pipe.to_disk(tmp_path / "model")
    out = tmp_path / "scores.json"
    done = subprocess.run(
        [sys.executable, "-m", "spacy", "benchmark", "accuracy", str(tmp_path / "model"), str(tmp_path / "gold.spacy"),
         "--output", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    scores = json.loads(out.read_text())
    assert scores["ents_f"] == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))  # 1 of 1 predicted, 1 of 3 found
    assert scores["spanscore_overlap_f"] == pytest.approx(scores["ents_f"])  # the ruler's one match is exact
    assert "spanscore_semeval_partial_f" in scores

"""Flair: a real SequenceTagger (one-hot embeddings built from the corpus, nothing downloaded),
scored by spanscore, as a Result Flair's ModelTrainer uses.

flair 0.15 pins transformers below 5, which the other extras need, so this file runs in a venv
of its own: ``.ci/run`` makes ``.venv-flair`` (flair, torch 2.13.0 CPU, spanscore) and runs it
there, failing if it skips."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

flair = pytest.importorskip("flair")
from flair.data import Corpus, Sentence  # noqa: E402
from flair.embeddings import OneHotEmbeddings  # noqa: E402
from flair.models import SequenceTagger  # noqa: E402
from flair.trainers import ModelTrainer  # noqa: E402

import spanscore  # noqa: E402
from spanscore.integrations.flair import evaluate_model, evaluate_sentences, use_spanscore  # noqa: E402

ROWS = [
    ("John Smith lives in New York .", [(0, 2, "PER"), (4, 6, "LOC")]),
    ("Mary met Bob in Paris .", [(0, 1, "PER"), (2, 3, "PER"), (4, 5, "LOC")]),
    ("The Bank of America is big .", [(1, 4, "ORG")]),
    ("Nothing to see here .", []),
    ("Anna Lee flew to Berlin .", [(0, 2, "PER"), (4, 5, "LOC")]),
    ("IBM hired Tom .", [(0, 1, "ORG"), (2, 3, "PER")]),
]


def sentences(rows: list[tuple[str, list[tuple[int, int, str]]]]) -> list[Any]:
    out = []
    for text, spans in rows:
        s = Sentence(text, use_tokenizer=False)
        for start, end, label in spans:
            s[start:end].add_label("ner", label)
        out.append(s)
    return out


@pytest.fixture(scope="module")
def tagger_and_corpus() -> tuple[Any, Any]:
    flair.set_seed(1)
    corpus = Corpus(train=sentences(ROWS), dev=sentences(ROWS[:3]), test=sentences(ROWS[3:]))
    tags = corpus.make_label_dictionary("ner", add_unk=False)
    embeddings = OneHotEmbeddings.from_corpus(corpus, embedding_length=8)
    tagger = SequenceTagger(
        hidden_size=8,
        embeddings=embeddings,
        tag_dictionary=tags,
        tag_type="ner",
        use_crf=False,
        reproject_embeddings=False,
    )
    return tagger, corpus


def test_evaluate_model_scores_the_predictions_it_made(tagger_and_corpus: tuple[Any, Any]) -> None:
    tagger, _ = tagger_and_corpus
    data = sentences(ROWS)
    result = evaluate_model(tagger, data, gold_label_type="ner", criterion="overlap")
    # the predictions it left on the sentences, scored independently
    gold = [[(lab.data_point.start_position, lab.data_point.end_position, lab.value) for lab in s.get_labels("ner")]
            for s in data]
    pred = [[(lab.data_point.start_position, lab.data_point.end_position, lab.value)
             for lab in s.get_labels("predicted")] for s in data]
    expected = spanscore.evaluate(reference=gold, predicted=pred, format="spans").to_dict()
    assert result.main_score == pytest.approx(expected["metrics"]["overlap"]["f1"])
    assert result.scores["spanscore_strict_f1"] == pytest.approx(expected["metrics"]["strict"]["f1"])
    assert "loss" in result.scores and result.loss >= 0
    assert result.classification_report["micro avg"]["f1-score"] == pytest.approx(result.main_score)
    again = evaluate_sentences(data, gold_label_type="ner").to_dict()
    assert again["metrics"] == expected["metrics"]


def test_gold_as_predictions_score_one_and_flairs_own_strict_f1_agrees(tagger_and_corpus: tuple[Any, Any]) -> None:
    tagger, corpus = tagger_and_corpus
    data = sentences(ROWS)
    for s in data:
        for lab in s.get_labels("ner"):
            lab.data_point.add_label("predicted", lab.value)
    assert evaluate_sentences(data).to_dict()["metrics"]["strict"]["f1"] == 1.0
    ours = evaluate_model(tagger, corpus.test, gold_label_type="ner")
    theirs = tagger.evaluate(corpus.test, gold_label_type="ner", mini_batch_size=4)
    assert ours.scores["spanscore_strict_f1"] == pytest.approx(theirs.main_score, abs=1e-9)


def test_the_trainer_selects_by_spanscore(tagger_and_corpus: tuple[Any, Any], tmp_path: Path) -> None:
    tagger, corpus = tagger_and_corpus
    use_spanscore(tagger, criterion="overlap")
    result = tagger.evaluate(corpus.dev, gold_label_type="ner")
    assert "spanscore_overlap_f1" in result.scores and result.main_score == result.scores["spanscore_overlap_f1"]
    out = ModelTrainer(tagger, corpus).train(
        tmp_path,
        max_epochs=2,
        mini_batch_size=2,
        learning_rate=0.1,
        save_final_model=False,
        use_final_model_for_eval=True,
    )
    assert "test_score" in out

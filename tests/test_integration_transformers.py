"""spanscore as the Hugging Face Trainer's compute_metrics, and as an ``evaluate`` metric.

The Trainer tests build a one-layer BERT from a config (nothing is downloaded) and evaluate it for
real, with and without ``batch_eval_metrics``; the rest need only numpy.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spanscore
from spanscore.errors import InputError, OptionError
from spanscore.integrations.transformers import ALL_CRITERIA, flat_metrics, make_compute_metrics

LABELS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC")
ID2LABEL = dict(enumerate(LABELS))
L2I = {label: i for i, label in enumerate(LABELS)}
IGNORE = -100


def expected(
    reference: list[list[str]], predicted: list[list[str]], criteria: tuple[str, ...] = ALL_CRITERIA, **options: Any
) -> dict[str, float]:
    """The metrics that spanscore.evaluate gives for the same labels."""
    report = spanscore.evaluate(
        reference=reference, predicted=predicted, format="labels", keep_details=False, **options
    )
    return flat_metrics(report.scores, criteria)


def random_bio(rng: random.Random, n: int) -> list[str]:
    out, i = ["O"] * n, 0
    while i < n:
        if rng.random() < 0.3:
            typ = rng.choice(("PER", "ORG", "LOC", "MISC"))
            length = rng.choice((1, 1, 2, 3))
            for k in range(i, min(n, i + length)):
                out[k] = ("B-" if k == i else "I-") + typ
            i += length
        i += 1
    return out


def padded(rows: list[list[int]], fill: int = IGNORE) -> np.ndarray[Any, np.dtype[np.int64]]:
    width = max(map(len, rows)) + 2  # room for [CLS] and [SEP], labelled -100 like them
    out = np.full((len(rows), width), fill, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, 1 : 1 + len(row)] = row
    return out


# --------------------------------------------------------------------------------------------------
# The compute_metrics callable on arrays


@pytest.fixture(scope="module")
def corpus() -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(7)
    gold = [random_bio(rng, rng.randint(0, 14)) for _ in range(300)]
    # Predictions: the gold labels with a few changed at random, invalid transitions included.
    pred = [[label if rng.random() < 0.85 else rng.choice(LABELS) for label in sent] for sent in gold]
    return gold, pred


def test_whole_set_equals_spanscore_evaluate(corpus: tuple[list[list[str]], list[list[str]]]) -> None:
    gold, pred = corpus
    g = padded([[L2I[x] for x in s] for s in gold])
    p = padded([[L2I[x] for x in s] for s in pred], fill=0)
    for options in ({}, {"credit": "dice"}, {"repair": "discard"}, {"type_map": {"MISC": "O"}}, {"types": ["PER"]}):
        metrics = make_compute_metrics(ID2LABEL, **options)((p, g))
        assert metrics == expected(gold, pred, **options), options
        assert set(metrics) == {f"{c}_{s}" for c in ALL_CRITERIA for s in ("precision", "recall", "f1")}


def test_batches_equal_the_whole_set(corpus: tuple[list[list[str]], list[list[str]]]) -> None:
    gold, pred = corpus
    g = padded([[L2I[x] for x in s] for s in gold])
    p = padded([[L2I[x] for x in s] for s in pred], fill=0)
    whole = make_compute_metrics(ID2LABEL, per_type=True, credit="iou")
    want = whole((p, g))
    batched = make_compute_metrics(ID2LABEL, per_type=True, credit="iou")
    for _ in range(2):  # the state starts afresh after each result
        for start in range(0, len(gold) - 7, 7):
            assert batched((p[start : start + 7], g[start : start + 7]), compute_result=False) == {}
        last = (len(gold) - 1) // 7 * 7
        assert batched((p[last:], g[last:]), compute_result=True) == want
    # The Trainer's eval_do_concat_batches=False: lists of per-batch arrays.
    listed = make_compute_metrics(ID2LABEL, per_type=True, credit="iou")
    assert listed(([p[:100], p[100:]], [g[:100], g[100:]])) == want


def test_logits_ids_and_trimmed_widths_agree(corpus: tuple[list[list[str]], list[list[str]]]) -> None:
    gold, pred = corpus
    g = padded([[L2I[x] for x in s] for s in gold])
    ids = padded([[L2I[x] for x in s] for s in pred], fill=0)
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(*ids.shape, len(LABELS))).astype(np.float32)
    np.put_along_axis(logits, ids[..., None], 10.0, axis=-1)
    cm = make_compute_metrics(ID2LABEL)
    want = expected(gold, pred)
    assert cm((logits, g)) == want
    assert cm(((logits, logits[..., :2]), g)) == want  # a model with several outputs: logits first
    assert cm((ids.astype(np.float64), g)) == want
    # A -100 position's prediction is never read, whatever it holds.
    garbage = ids.copy()
    garbage[g == IGNORE] = 12345
    assert cm((garbage, g)) == want


CHOSEN = ("strict", "token")


def test_first_subword_and_label_all_tokens() -> None:
    # "Angela Merkel visited Baden-Württemberg": Merkel and Baden-Württemberg split into subwords.
    words = [["B-PER", "I-PER", "O", "B-LOC"]]
    first_subword = np.array([[IGNORE, 1, 2, IGNORE, 0, 5, IGNORE, IGNORE, IGNORE]])
    # The prediction at continuation subwords (here an O and an I-LOC) is never read.
    predicted = np.array([[0, 1, 2, 0, 0, 5, 0, 6, 0]])
    cm = make_compute_metrics(ID2LABEL, criteria=CHOSEN)
    assert cm((predicted, first_subword)) == expected(words, [["B-PER", "I-PER", "O", "B-LOC"]], CHOSEN)
    # label_all_tokens: every subword labelled, the recipe copying B- onto continuations. Each
    # labelled subword is a token: the LOC mention of one word is three mentions of one subword.
    all_tokens = np.array([[IGNORE, 1, 2, 2, 0, 5, 5, 5, IGNORE]])
    subword_pred = np.array([[0, 1, 2, 2, 0, 5, 6, 6, 0]])
    metrics = cm((subword_pred, all_tokens))
    subword_gold = [["B-PER", "I-PER", "I-PER", "O", "B-LOC", "B-LOC", "B-LOC"]]
    assert metrics == expected(subword_gold, [["B-PER", "I-PER", "I-PER", "O", "B-LOC", "I-LOC", "I-LOC"]], CHOSEN)
    assert metrics["strict_recall"] == 0.25  # PER found; of the three one-subword LOC mentions, none
    assert metrics["token_f1"] == 1.0  # every entity subword has the right type


def test_per_type_keys_cover_every_type_of_id2label() -> None:
    g = np.array([[1, 2, 0, IGNORE]])
    p = np.array([[1, 2, 0, 0]])
    metrics = make_compute_metrics(ID2LABEL, per_type=True, criteria=["strict", "semeval_partial"])((p, g))
    assert metrics["strict_f1_PER"] == 1.0
    assert metrics["semeval_partial_f1_PER"] == 1.0
    assert metrics["strict_f1_LOC"] == 0.0  # no mention on either side: zero_division
    types = ("LOC", "MISC", "ORG", "PER")
    scores = ("precision", "recall", "f1")
    keys = {f"{c}_{s}" for c in ("strict", "semeval_partial") for s in scores}
    keys |= {f"{c}_{s}_{t}" for c in ("strict", "semeval_partial") for s in scores for t in types}
    assert set(metrics) == keys
    nan = make_compute_metrics(ID2LABEL, per_type=True, criteria=["strict"], zero_division=float("nan"))((p, g))
    assert np.isnan(nan["strict_f1_LOC"])
    # After type_map, the per-type keys are the mapped types.
    mapped = make_compute_metrics(ID2LABEL, per_type=True, criteria=["strict"], type_map={"MISC": "O", "ORG": "PER"})
    assert {k.rsplit("_", 1)[1] for k in mapped((p, g)) if k.count("_") == 2} == {"LOC", "PER"}


def test_reset_and_an_empty_evaluation() -> None:
    cm = make_compute_metrics(ID2LABEL, criteria=["strict"])
    g = np.array([[1, 2, 0]])
    cm((np.array([[0, 0, 0]]), g), compute_result=False)
    cm.reset()
    assert cm((np.array([[1, 2, 0]]), g))["strict_f1"] == 1.0
    assert cm.counts.sentences == 0  # the result started the counts afresh
    empty = np.zeros((0, 5), dtype=np.int64)
    assert cm((empty, empty)) == {"strict_precision": 0.0, "strict_recall": 0.0, "strict_f1": 0.0}


def test_id2label_as_list_and_with_string_keys() -> None:
    g = np.array([[1, 2, 0, 3]])
    p = np.array([[1, 2, 0, 4]])
    want = make_compute_metrics(ID2LABEL)((p, g))
    assert make_compute_metrics(list(LABELS))((p, g)) == want
    assert make_compute_metrics({str(k): v for k, v in ID2LABEL.items()})((p, g)) == want
    assert make_compute_metrics(ID2LABEL, scheme="IOB2")((p, g)) == want


@pytest.mark.parametrize(
    ("make", "call", "message"),
    [
        ({"bogus": 1}, None, "unknown option 'bogus'"),
        ({"criteria": ["strict", "exact"]}, None, "unknown criterion 'exact'"),
        ({"criteria": "strict"}, None, "criteria must be a list"),
        ({"labels": "BIOX"}, None, "unknown label encoding"),
        ({"labels": "BIOES", "scheme": "BIO"}, None, "name two encodings"),
        ({"credit": 2}, None, "credit must be between 0 and 1"),
        ({"zero_division": "1"}, None, "zero_division must be 0, 1 or nan"),
        ({"types": "PER"}, None, "types must be a list"),
        ({"types": ["PERSON"]}, None, "types names PERSON"),
        ({"type_map": {"GPE": "LOC"}}, None, "type_map names GPE"),
        ({}, (np.array([[1, 9]]), np.array([[1, 2]])), "predictions holds the label id 9"),
        ({}, (np.array([[1, 2]]), np.array([[1, -1]])), "label_ids holds the label id -1"),
        ({}, (np.zeros((2, 3, 9)), np.zeros((2, 4), dtype=np.int64)), "do not match label_ids"),
        ({}, (np.array([[1.5, 2]]), np.array([[1, 2]])), "must hold label ids"),
        ({}, (np.array([1, 2]), np.array([1, 2])), "label_ids must be [batch, length]"),
        ({}, (np.array([[1, 2]]), None), "label_ids is None"),
        ({}, "not an EvalPrediction", "expected an EvalPrediction"),
    ],
)
def test_bad_input_is_one_clear_option_error(make: dict[str, Any], call: Any, message: str) -> None:
    with pytest.raises(OptionError) as err:
        cm = make_compute_metrics(ID2LABEL, **make)
        cm(call)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_bad_id2label() -> None:
    with pytest.raises(OptionError, match=r"id2label\[1\] is 'PER'"):
        make_compute_metrics({0: "O", 1: "PER"})
    with pytest.raises(OptionError, match="id2label names no label"):
        make_compute_metrics({})
    with pytest.raises(OptionError, match="id2label must map integer"):
        make_compute_metrics({"zero": "O"})
    # An id that id2label skips is refused where it occurs, not decoded as O.
    cm = make_compute_metrics({0: "O", 2: "B-PER"})
    with pytest.raises(OptionError, match="label id 1"):
        cm((np.array([[1]]), np.array([[0]])))


def test_repair_none_refuses_an_invalid_transition() -> None:
    cm = make_compute_metrics(ID2LABEL, repair="none")
    with pytest.raises(InputError, match="predictions, sentence 1 of the batch, labelled position 0: I-PER cannot"):
        cm((np.array([[0, 0], [2, 0]]), np.array([[0, 0], [0, 0]])))


# --------------------------------------------------------------------------------------------------
# A real Trainer


def _trainer_pieces() -> tuple[Any, Any]:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("accelerate")  # the Trainer needs it
    return torch, transformers


def ours(metrics: dict[str, float]) -> dict[str, float]:
    """The Trainer's metrics that compute_metrics gave (not the loss nor the timings), unprefixed."""
    names = {c.split("_")[0] for c in ALL_CRITERIA}
    stripped = {k.removeprefix("eval_"): v for k, v in metrics.items()}
    return {k: v for k, v in stripped.items() if k.split("_")[0] in names}


def _dataset(n: int, seed: int) -> list[dict[str, list[int]]]:
    """Sentences as a tokenizer would give them with first-subword labelling: [CLS] and [SEP] and the
    continuation subwords of a word labelled -100."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        words = random_bio(rng, rng.randint(1, 10))
        ids, labels = [1], [IGNORE]
        for word_label in words:
            pieces = rng.choice((1, 1, 2, 3))
            ids += [rng.randrange(5, 60) for _ in range(pieces)]
            labels += [L2I[word_label]] + [IGNORE] * (pieces - 1)
        ids.append(2)
        labels.append(IGNORE)
        rows.append({"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels})
    return rows


def _collate(torch: Any, batch: list[dict[str, list[int]]]) -> dict[str, Any]:
    width = max(len(row["input_ids"]) for row in batch)
    pad = {"input_ids": 0, "attention_mask": 0, "labels": IGNORE}
    return {
        key: torch.tensor([row[key] + [fill] * (width - len(row[key])) for row in batch]) for key, fill in pad.items()
    }


def test_trainer_evaluate_batched_equals_whole_and_spanscore(tmp_path: Path) -> None:
    torch, transformers = _trainer_pieces()
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=60,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=len(LABELS),
        id2label=ID2LABEL,
        label2id=L2I,
    )
    model = transformers.BertForTokenClassification(config)
    data = _dataset(23, seed=5)  # 23 sentences in batches of 4: six batches, the last one of 3
    batch = 4

    def collate(rows: list[dict[str, list[int]]]) -> dict[str, Any]:
        return _collate(torch, rows)

    # The predictions, made here with the model on the batches the Trainer makes, decoded by hand.
    gold_labels: list[list[str]] = []
    pred_labels: list[list[str]] = []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(data), batch):
            inputs = collate(data[start : start + batch])
            labels = inputs.pop("labels")
            predicted = model(**inputs).logits.argmax(-1)
            for row_labels, row_pred in zip(labels.tolist(), predicted.tolist(), strict=True):
                keep = [k for k, label in enumerate(row_labels) if label != IGNORE]
                gold_labels.append([LABELS[row_labels[k]] for k in keep])
                pred_labels.append([LABELS[row_pred[k]] for k in keep])
    want = expected(gold_labels, pred_labels)
    assert 0 < want["overlap_f1"] < 1  # the random model gets some mentions right, not all

    def evaluate(**arguments: Any) -> dict[str, float]:
        args = transformers.TrainingArguments(
            output_dir=str(tmp_path),
            per_device_eval_batch_size=batch,
            report_to="none",
            use_cpu=True,
            disable_tqdm=True,
            remove_unused_columns=False,
            **arguments,
        )
        metrics = make_compute_metrics(model.config.id2label, per_type=True)
        calls.clear()

        def compute_metrics(eval_pred: Any, compute_result: bool = True) -> dict[str, float]:
            calls.append((len(eval_pred.label_ids), compute_result))
            return metrics(eval_pred, compute_result=compute_result)

        trainer = transformers.Trainer(
            model=model, args=args, eval_dataset=data, data_collator=collate, compute_metrics=compute_metrics
        )
        first = ours(trainer.evaluate())
        if arguments.get("batch_eval_metrics"):
            # Called per batch, the last one marked: the whole set is never handed over at once.
            assert calls == [(4, False)] * 5 + [(3, True)]
            assert ours(trainer.evaluate()) == first  # the counts of one evaluation never reach the next
        return first

    calls: list[tuple[int, bool]] = []
    whole = evaluate()
    assert calls == [(len(data), True)]
    batched = evaluate(batch_eval_metrics=True)
    listed = evaluate(eval_do_concat_batches=False)
    assert batched == whole
    assert listed == whole
    assert {k: whole[k] for k in want} == want
    report = spanscore.evaluate(reference=gold_labels, predicted=pred_labels, format="labels")
    per_type = flat_metrics(report.scores, ALL_CRITERIA, report.counts.types)
    assert {k: whole[k] for k in per_type} == per_type
    absent = {t for t in ("PER", "ORG", "LOC", "MISC") if t not in report.counts.types}
    assert all(whole[f"{c}_f1_{t}"] == 0.0 for c in ALL_CRITERIA for t in absent)


def test_torch_tensors_as_the_batched_trainer_gives_them() -> None:
    torch, _ = _trainer_pieces()
    g = np.array([[IGNORE, 1, 2, 0, 5, IGNORE], [IGNORE, 3, 4, 4, IGNORE, IGNORE]])
    ids = np.array([[0, 1, 2, 0, 6, 0], [0, 3, 4, 0, 0, 0]])
    logits = torch.nn.functional.one_hot(torch.tensor(ids), len(LABELS)).float()
    cm = make_compute_metrics(ID2LABEL)
    want = cm((ids, g))
    assert cm((logits, torch.tensor(g))) == want
    assert cm((logits.to(torch.bfloat16), torch.tensor(g))) == want
    assert cm((torch.tensor(ids).to(torch.bfloat16), torch.tensor(g))) == want


# --------------------------------------------------------------------------------------------------
# The evaluate-library metric


def test_evaluate_load_of_the_metric_folder(
    corpus: tuple[list[list[str]], list[list[str]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("datasets")
    # Set before evaluate is imported, which reads them once: the metric loads from its folder, offline.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    evaluate = pytest.importorskip("evaluate")
    from spanscore.integrations.hf_evaluate import METRIC_PATH

    gold, pred = corpus
    metric = evaluate.load(METRIC_PATH, cache_dir=str(tmp_path / "cache"))
    assert type(metric).__name__ == "SpanscoreNer"

    def own(results: dict[str, Any]) -> dict[str, Any]:
        """spanscore's keys, without the seqeval metric's (its types and overall_*)."""
        return {k: v for k, v in results.items() if not isinstance(v, dict) and not k.startswith("overall_")}

    assert own(metric.compute(predictions=pred, references=gold)) == expected(gold, pred)
    assert own(metric.compute(predictions=pred, references=gold, credit="dice", scheme="IOB2")) == expected(
        gold, pred, credit="dice"
    )
    for start in range(0, len(gold), 64):
        metric.add_batch(predictions=pred[start : start + 64], references=gold[start : start + 64])
    report = spanscore.evaluate(reference=gold, predicted=pred, format="labels")
    assert own(metric.compute(per_type=True, criteria=["strict", "token"])) == flat_metrics(
        report.scores, ["strict", "token"], report.counts.types
    )
    with pytest.raises(OptionError, match="unknown option 'average'"):
        metric.compute(predictions=pred, references=gold, average="micro")


def _conll_labels(path: Path) -> list[list[str]]:
    """Each sentence's labels (the last column), -DOCSTART- and comment lines left out."""
    sentences: list[list[str]] = [[]]
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if sentences[-1]:
                sentences.append([])
        elif not line.startswith(("-DOCSTART-", "# ")):
            sentences[-1].append(line.split()[-1])
    return [s for s in sentences if s]


def _seqeval_metric(predictions: list[list[str]], references: list[list[str]], **config: Any) -> dict[str, Any]:
    """What ``evaluate.load("seqeval").compute`` returns, computed with the real seqeval as the
    metric's script computes it (the hub is out of reach here): the classification report's rows
    per type, its micro average as overall_*, and the accuracy."""
    seqeval_metrics = pytest.importorskip("seqeval.metrics")
    import seqeval.scheme

    scheme = config.get("scheme")
    report = seqeval_metrics.classification_report(
        y_true=references,
        y_pred=predictions,
        suffix=config.get("suffix", False),
        output_dict=True,
        scheme=getattr(seqeval.scheme, scheme) if scheme else None,
        mode=config.get("mode"),
        zero_division=config.get("zero_division", "warn"),
    )
    report.pop("macro avg")
    report.pop("weighted avg")
    overall = report.pop("micro avg")
    out: dict[str, Any] = {
        t: {"precision": r["precision"], "recall": r["recall"], "f1": r["f1-score"], "number": r["support"]}
        for t, r in report.items()
    }
    out["overall_precision"] = overall["precision"]
    out["overall_recall"] = overall["recall"]
    out["overall_f1"] = overall["f1-score"]
    out["overall_accuracy"] = seqeval_metrics.accuracy_score(y_true=references, y_pred=predictions)
    return out


def _run_ner_compute_metrics(metric: Any, label_list: list[str], entity_level: bool, **config: Any) -> Any:
    """compute_metrics of Hugging Face's token-classification example (run_ner.py), as written there."""

    def compute_metrics(p: tuple[Any, Any]) -> dict[str, Any]:
        predictions, labels = p
        predictions = np.argmax(predictions, axis=2)
        true_predictions = [
            [label_list[p] for (p, lab) in zip(prediction, label, strict=True) if lab != -100]
            for prediction, label in zip(predictions, labels, strict=True)
        ]
        true_labels = [
            [label_list[lab] for (p, lab) in zip(prediction, label, strict=True) if lab != -100]
            for prediction, label in zip(predictions, labels, strict=True)
        ]
        results = metric(predictions=true_predictions, references=true_labels, **config)
        if entity_level:
            final_results = {}
            for key, value in results.items():
                if isinstance(value, dict):
                    for n, v in value.items():
                        final_results[f"{key}_{n}"] = v
                else:
                    final_results[key] = value
            return final_results
        return {
            "precision": results["overall_precision"],
            "recall": results["overall_recall"],
            "f1": results["overall_f1"],
            "accuracy": results["overall_accuracy"],
        }

    return compute_metrics


SAMPLES = Path(spanscore.__file__).parent / "programs" / "sample_data"


@pytest.mark.parametrize(
    "config",
    [{}, {"mode": "strict", "scheme": "IOB2"}, {"zero_division": 1}, {"suffix": False, "zero_division": 0}],
    ids=["default", "strict-IOB2", "zero-division-1", "zero-division-0"],
)
@pytest.mark.parametrize("system", ["pred.conll", "alt.conll", "btc"])
def test_run_ner_compute_metrics_as_with_seqeval(
    system: str, config: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: Any
) -> None:
    """run_ner.py's compute_metrics gives every figure the seqeval metric gives, on the shipped
    samples' predictions and on BTC's test set with a tenth of its labels changed at random."""
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    evaluate = pytest.importorskip("evaluate")
    from spanscore.integrations.hf_evaluate import METRIC_PATH

    if system == "btc":
        gold = _conll_labels(request.getfixturevalue("btc") / "test.txt")
        rng = random.Random(11)
        types = sorted({lab[2:] for s in gold for lab in s if lab != "O"})
        choices = ["O"] + [f"{p}-{t}" for t in types for p in "BI"]
        pred = [[lab if rng.random() < 0.9 else rng.choice(choices) for lab in s] for s in gold]
    else:
        gold = _conll_labels(SAMPLES / "gold.conll")
        pred = _conll_labels(SAMPLES / system)
    label_list = sorted({lab for s in gold + pred for lab in s})
    index = {lab: i for i, lab in enumerate(label_list)}
    # The Trainer's arrays: logits whose argmax is each predicted label, -100 on padding.
    width = max(map(len, gold)) + 2
    labels = np.full((len(gold), width), -100, dtype=np.int64)
    logits = np.zeros((len(gold), width, len(label_list)), dtype=np.float32)
    for i, (g, p) in enumerate(zip(gold, pred, strict=True)):
        labels[i, 1 : 1 + len(g)] = [index[x] for x in g]
        logits[i, 1 + np.arange(len(p)), [index[x] for x in p]] = 1.0
    metric = evaluate.load(METRIC_PATH, cache_dir=str(tmp_path / "cache"))
    for entity_level in (False, True):
        ours = _run_ner_compute_metrics(metric.compute, label_list, entity_level, **config)((logits, labels))
        theirs = _run_ner_compute_metrics(_seqeval_metric, label_list, entity_level, **config)((logits, labels))
        assert {k: ours[k] for k in theirs} == theirs
        assert list(ours)[: len(theirs)] == list(theirs)

"""Every keyword of ``evaluate`` and ``compare`` (and so of ``Scoring`` and ``Reading``) refuses a
value of the wrong type or out of range with one ``SpanscoreError`` naming the keyword: never a
TypeError from deep inside, never a silently odd result, never a run without end. The tests walk
the signatures, so a keyword added without a check fails here."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.api import MAX_RESAMPLES, READING_FIELDS
from spanscore.cli.main import cli
from spanscore.errors import SpanscoreError
from spanscore.stages.scoring import SCORING_FIELDS

DATA = Path(__file__).parent / "data"
GOLD, PRED = str(DATA / "small.gold.conll"), str(DATA / "small.pred.conll")
LABELS: dict[str, Any] = {"reference": [["B-X", "O"], ["B-Y"]], "predicted": [["B-X", "O"], ["O"]], "format": "labels"}


class Odd:
    """A value of no type any keyword takes."""

    def __repr__(self) -> str:
        return "Odd()"


ODD = Odd()

# Keyword: wrong values (each must be refused; the message must name the keyword, or its value).
BAD: dict[str, list[Any]] = {
    "format": [ODD, 3, "conl"],
    "reading": [ODD, "conll"],
    "scoring": [ODD, {"credit": 1}],
    "ci": [ODD, "0.95", 0, 1, 1.5, True, float("nan")],
    "resamples": [ODD, "100", 0, -5, 2.5, True, MAX_RESAMPLES + 1, 10**12],
    "trials": [ODD, "100", 0, -5, 2.5, True, MAX_RESAMPLES + 1, 10**10],
    "seed": [ODD, "1", -1, -7, 1.5, True],
    "alpha": [ODD, "0.05", 0, 1, float("nan")],
    "by": [ODD, 3, ["source"], ""],
    "buckets": [ODD, "length", [3], ["lenght"]],
    "train": [ODD, 3],
    "bucket_edges": [ODD, "length=2", {"length": "2,4"}, {"length": 2}, {"length": [ODD]}, {3: [2]}],
    "keep_details": [ODD, "yes", 1],
    "documents": [ODD, "yes", 1],
    "empty_documents": [ODD, 3, "never"],
    "document_types": [ODD, "yes", 1],
    "per_type": [ODD, "yes", 1],
    "rows": [ODD, "rows"],
    "document_sink": [ODD, "out.jsonl"],
    "chunk_bytes": [ODD, "1000", 0, -1, 2.5, True],
    "jobs": [ODD, "2", 0, -1, 2.5, True],
    "engine": [ODD, "local"],
    "progress": [ODD, "bar"],
    "names": [ODD, "a", [ODD]],
    "systems": [ODD, "pred.conll"],
    # reading options
    "labels": [ODD, 3, "BIOX"],
    "repair": [ODD, 3, "fix"],
    "merged": [ODD, "yes", 1],
    "delimiter": [ODD, 3, ";;"],
    "token_column": [ODD, "0", 1.5, True],
    "label_column": [ODD, "-1", 1.5, True],
    "predicted_column": [ODD, "2", 1.5, True],
    "encoding": [ODD, 3, "no-such-codec"],
    "predicted_encoding": [ODD, 3, "no-such-codec"],
    "header": [ODD, "yes", 1],
    "levels": [ODD, "2,3", [2], [2, 2]],
    "predicted_format": [ODD, 3, "csv"],
    "strings": [ODD, "exact"],
    "reference_options": [ODD, "x", {3: 1}],
    "predicted_options": [ODD, "x", {3: 1}],
    # scoring options
    "credit": [ODD, "half", 1.5, -0.1, True],
    "matching": [ODD, 3, "best"],
    "min_overlap": [ODD, "0.5", 1.5, -0.1, True],
    "min_overlap_of": [ODD, 3, "neither"],
    "types": [ODD, "PER", 3],
    "type_map": [ODD, "PER=PERSON", ["PER"]],
    "zero_division": [ODD, "1", 0.5, True],
    "beta": [ODD, "2", 0, -1, True, float("inf")],
    "judge": [ODD, "judge.json"],
    "judge_credit": [ODD, 3, "all"],
    "judge_name": [ODD, 3],
    "discontinuous": [ODD, 3, "gaps", None],
}
INPUTS = {"reference", "predicted", "options"}


def _keywords(function: Any) -> list[str]:
    names = [p for p in inspect.signature(function).parameters if p not in INPUTS]
    return names + ([*READING_FIELDS, *SCORING_FIELDS] if function is spanscore.evaluate else [])


def test_every_keyword_has_bad_values_here() -> None:
    keywords = set(_keywords(spanscore.evaluate)) | set(_keywords(spanscore.compare))
    assert keywords - set(BAD) == set()


def _refused(call: Any, name: str, value: Any) -> None:
    with pytest.raises(SpanscoreError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message, message
    said = message.replace("_", " ").replace("-", " ")
    assert name.replace("_", " ").rstrip("s") in said or repr(value) in message or str(value) in message, (
        name,
        value,
        message,
    )


@pytest.mark.parametrize(
    ("name", "value"), [(n, v) for n in _keywords(spanscore.evaluate) for v in BAD[n]], ids=lambda x: repr(x)[:30]
)
def test_evaluate_refuses_a_wrong_value_of_each_keyword(name: str, value: Any) -> None:
    extra: dict[str, Any] = {}
    if name in ("resamples", "seed"):
        extra["ci"] = 0.9  # refused with or without ci; with it, nothing would end
    if name in ("train", "bucket_edges"):
        extra["buckets"] = ["length"] if name == "bucket_edges" else ["seen"]
    base = {**LABELS}
    if name in ("format", "labels", "delimiter", "token_column", "label_column", "by", "merged", "repair",
                "predicted_column", "encoding", "predicted_encoding", "header", "levels"):
        base = {"reference": GOLD, "predicted": PRED}
    _refused(lambda: spanscore.evaluate(**{**base, **extra, name: value}), name, value)


COMPARE: dict[str, Any] = {
    "reference": [["B-X", "O"], ["B-Y"]],
    "systems": [[["B-X", "O"], ["O"]], [["B-X", "O"], ["B-Y"]]],
    "format": "labels",
    "resamples": 20,
    "trials": 20,
}


@pytest.mark.parametrize(
    ("name", "value"),
    [(n, v) for n in _keywords(spanscore.compare) if n not in READING_FIELDS for v in BAD[n]],
    ids=lambda x: repr(x)[:30],
)
def test_compare_refuses_a_wrong_value_of_each_keyword(name: str, value: Any) -> None:
    extra: dict[str, Any] = {}
    if name in ("train", "bucket_edges"):
        extra["buckets"] = ["length"] if name == "bucket_edges" else ["seen"]
    _refused(lambda: spanscore.compare(**{**COMPARE, **extra, name: value}), name, value)


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["evaluate", GOLD, PRED, "--ci", "0.9", "--resamples", str(MAX_RESAMPLES + 1)], "--resamples"),
        (["evaluate", GOLD, PRED, "--ci", "0.9", "--resamples", "10000000000"], "--resamples"),
        (["compare", GOLD, PRED, "--resamples", "10000000000"], "--resamples"),
        (["compare", GOLD, PRED, "--trials", "10000000000"], "--trials"),
        (["evaluate", GOLD, PRED, "--ci", "0.9", "--seed", "-7"], "--seed"),
        (["compare", GOLD, PRED, "--seed", "-7"], "--seed"),
    ],
)
def test_the_command_line_refuses_unbounded_sizes_and_negative_seeds(args: list[str], flag: str) -> None:
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 2, out.output
    assert flag in out.output
    assert "Traceback" not in out.output


def test_the_bound_itself_is_accepted() -> None:
    """The bound is the most, not one past it (counted with few documents, so it is quick)."""
    r = spanscore.evaluate(**LABELS, ci=0.9, resamples=20, seed=0)
    assert r.intervals is not None
    assert spanscore.api.check_resampling(resamples=MAX_RESAMPLES, trials=MAX_RESAMPLES, seed=0) is None


def test_a_negative_seed_or_huge_count_is_refused_without_ci_too() -> None:
    """Not only where they are used: a wrong value is wrong whether or not ci asks for intervals."""
    for keywords in ({"seed": -1}, {"resamples": 10**12}):
        with pytest.raises(SpanscoreError, match=next(iter(keywords))):
            spanscore.evaluate(**LABELS, **keywords)


def test_a_prediction_file_given_twice_is_named(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["compare", GOLD, PRED, PRED])
    assert out.exit_code == 2, out.output
    assert out.output.strip() == f"spanscore: error: the prediction file {PRED} is given twice: give each system once"
    again = f"{Path(PRED).parent}/./{Path(PRED).name}"  # another spelling of the same file
    with pytest.raises(SpanscoreError, match=r"small\.pred\.conll is given twice"):
        spanscore.compare(reference=GOLD, systems=[PRED, again])

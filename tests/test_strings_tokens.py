"""The corpus line's token count is the reference's own, whatever the locating policy and the
prediction: strings found nowhere and invalid entries are appended to the text after a marker so
that every criterion counts them as spurious, but their words are no tokens of the reference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import spanscore
from spanscore.io.strings import StringPolicy
from spanscore.programs.samples import write_samples


def own_tokens(gold: Path) -> int:
    """The reference scored against itself: no string located, nothing appended."""
    return spanscore.evaluate(reference=gold, predicted=gold, format="jsonl").to_dict()["corpus"]["tokens"]


@pytest.mark.parametrize(
    "policy", [StringPolicy(False, None), StringPolicy(normalised=True, fuzzy=None), StringPolicy()]
)
def test_the_samples_tokens_do_not_depend_on_the_policy(tmp_path: Path, policy: StringPolicy) -> None:
    write_samples(tmp_path / "s")
    gold, llm = tmp_path / "s" / "llm" / "gold.jsonl", tmp_path / "s" / "llm" / "llm.jsonl"
    # An independent count: whitespace-separated words of each reference text.
    words = sum(len(json.loads(line)["text"].split()) for line in gold.read_text(encoding="utf-8").splitlines())
    assert own_tokens(gold) == words
    report = spanscore.evaluate(reference=gold, predicted=llm, format="jsonl", predicted_format="strings",
                                strings=policy)
    data = report.to_dict()
    assert data["located"]["not_found"] + data["located"]["invalid"] > 0  # something was appended
    assert data["corpus"]["tokens"] == words


def test_tokens_do_not_depend_on_the_prediction(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "d", "text": "Ann Lee met Bob .", "spans": [
        {"start": 0, "end": 7, "label": "PER"}]}) + "\n", encoding="utf-8")
    counts = []
    for mentions in ([], [{"text": "Ann Lee", "label": "PER"}],
                     [{"text": "Dana Maria White of Springfield", "label": "PER"}, {"text": "", "label": "PER"}]):
        llm = tmp_path / "llm.jsonl"
        llm.write_text(json.dumps({"id": "d", "mentions": mentions}) + "\n", encoding="utf-8")
        counts.append(spanscore.evaluate(reference=gold, predicted=llm, format="jsonl",
                                         predicted_format="strings").to_dict()["corpus"]["tokens"])
    assert counts == [5, 5, 5]

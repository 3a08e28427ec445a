"""``compare``'s floor lowered without changing a byte: each system's per-document state is made
out of the systems' joint histogram only when something asks for it (its report's macro over
documents, ``Report.document_state``), since the comparison's own results never read it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore import api
from spanscore.stages.documents import DocState


@pytest.fixture(scope="module")
def runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("floor")
    gold = sentences(btc / "test.txt")
    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": write_conll(folder / "b.conll", perturb(gold, 2, 0.35)),
    }


@pytest.mark.parametrize("grouped", [False, True])
def test_each_systems_state_is_made_only_when_asked_for(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, grouped: bool
) -> None:
    made: list[int] = []
    real = api._system_state

    def spy(joint: Any, k: int, unit: str) -> DocState:
        made.append(k)
        return real(joint, k, unit)

    monkeypatch.setattr(api, "_system_state", spy)
    options: dict[str, Any] = {"per_type": True, "buckets": ["length"]} if grouped else {}
    c = spanscore.compare(
        reference=str(runs["gold"]), systems=[str(runs["a"]), str(runs["b"])], format="conll",
        resamples=30, trials=30, **options,
    )
    json.dumps(c.to_dict())
    assert made == []  # neither the comparison nor its JSON asked
    for k, system in enumerate(("a", "b")):
        alone = spanscore.evaluate(
            reference=str(runs["gold"]), predicted=str(runs[system]), format="conll", ci=0.95, resamples=10
        )
        assert alone.document_state is not None
        macro = c.reports[k].to_dict()["macro_documents"]
        assert made == list(range(k + 1))  # made now, once
        assert macro == alone.to_dict()["macro_documents"]
        state = c.reports[k].document_state
        assert isinstance(state, DocState) and made == list(range(k + 1))  # kept, not made again
        assert state.closed.documents == alone.document_state.closed.documents

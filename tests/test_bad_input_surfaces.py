"""Bad input on the library's face and the commands around it: one line, exit 2, nothing made."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import OptionError

DATA = Path(__file__).parent / "data"
GOLD, PRED = str(DATA / "small.gold.conll"), str(DATA / "small.pred.conll")


@pytest.mark.parametrize("beta", ["1e200", "1e-200", "0", "-1", "inf", "nan"])
def test_a_beta_out_of_range_is_refused_not_scored_as_null(beta: str) -> None:
    out = CliRunner().invoke(cli, ["evaluate", GOLD, PRED, "--beta", beta, "--json"])
    assert out.exit_code == 2 and "--beta must be a positive number" in out.output
    assert len(out.output.strip().splitlines()) == 1


def test_a_large_beta_within_range_gives_recall() -> None:
    r = spanscore.evaluate(reference=GOLD, predicted=PRED, beta=1e6)
    data = r.to_dict()
    for name, block in data["metrics"].items():
        assert block["f_beta"] == pytest.approx(block["recall"], abs=1e-9), name


@pytest.mark.parametrize("command", [["stats"], ["export", "-o", "{tmp}/out.jsonl"], ["add-reviewer", "ann"]])
def test_reading_a_review_store_that_does_not_exist_makes_none(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "typo.db"
    args = ["review", *[a.replace("{tmp}", str(tmp_path)) for a in command], "--db", str(db)]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 2, out.output
    assert "no such review store" in out.output and str(db) in out.output
    assert not db.exists()


@pytest.mark.parametrize(
    "keywords, message",
    [
        ({"credit": "half"}, "credit takes a number"),
        ({"zero_division": "1"}, "zero_division must be 0, 1 or nan"),
        ({"types": "PER"}, "types must be a list"),
        ({"type_map": ["PER"]}, "type_map must be a mapping"),
        ({"matching": "best"}, "matching must be optimal or greedy"),
        ({"judge_credit": "all"}, "judge_credit must be accept or probability"),
        ({"min_overlap": "0.5"}, "min_overlap must be a number"),
        ({"colour": "red"}, "unknown option 'colour'"),
    ],
)
def test_scoring_options_are_refused_once_with_their_name(keywords: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        spanscore.evaluate(reference=[["B-X"]], predicted=[["B-X"]], format="labels", **keywords)  # type: ignore[arg-type]


def test_compare_refuses_what_it_cannot_pair() -> None:
    labels = [["B-PER", "O"]]
    with pytest.raises(OptionError, match="at least one system"):
        spanscore.compare(reference=labels, systems=[], format="labels")
    with pytest.raises(OptionError, match="alpha"):
        spanscore.compare(reference=labels, systems=[labels], format="labels", alpha=2.0)
    with pytest.raises(OptionError, match="confidence level"):
        spanscore.compare(reference=labels, systems=[labels], format="labels", ci=95)

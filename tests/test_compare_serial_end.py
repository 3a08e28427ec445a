"""What ``spanscore compare`` does once the systems are counted, made shorter: it imports what it
needs after the count (numpy.random for the paired tests, the groupings' tests, the terminal's
tables or the HTML page) on a thread once the evaluating process has counted its last part and
waits for its workers' last results, so they are ready when the count ends; and it takes each
system's discontinuous figures without making the system's whole report dict. Checked here: the
thread starts before the paired tests, imports the modules the output needs and no others, the
output is the same, and the discontinuous figures are each report's."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_compare import perturb, sentences, write_conll
from test_discontinuous import worked  # noqa: F401  (a fixture)

import spanscore
from spanscore import api
from spanscore.analysis import buckets, significance
from spanscore.cli import compare as compare_cli
from spanscore.cli.main import cli
from spanscore.errors import FewUnitsWarning
from spanscore.runtime import workers


@pytest.fixture(scope="module")
def runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("imports")
    gold = sentences(btc / "test.txt")
    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": write_conll(folder / "b.conll", perturb(gold, 2, 0.35)),
    }


@pytest.mark.parametrize("as_json", [True, False])
def test_what_compare_imports_after_the_count_starts_on_a_thread_before_the_tests(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, as_json: bool
) -> None:
    monkeypatch.setattr(api, "DEFAULT_CHUNK", 6000)  # tens of parts: two processes count them
    events: list[tuple[str, Any]] = []
    real_imports, real_tests = compare_cli._import_all, significance.compare_histograms

    def imports(modules: list[str]) -> None:
        events.append(("imports", (threading.current_thread() is threading.main_thread(), list(modules))))
        real_imports(modules)

    def tests(*args: Any, **kwargs: Any) -> Any:
        events.append(("tests", None))
        return real_tests(*args, **kwargs)

    monkeypatch.setattr(compare_cli, "_import_all", imports)
    monkeypatch.setattr(buckets, "compare_histograms", tests)
    args = ["compare", str(runs["gold"]), str(runs["a"]), str(runs["b"]), "--jobs", "2"]
    args += ["--resamples", "50", "--trials", "50", *(["--json"] if as_json else [])]
    got = CliRunner().invoke(cli, args)
    assert got.exit_code == 0, got.output
    assert [e for e, _ in events] == ["imports", "tests"]
    on_main, modules = events[0][1]
    assert not on_main
    expected = ["numpy.random", "spanscore.analysis.buckets"]
    assert modules == expected + ([] if as_json else ["spanscore.presentation.terminal"])
    assert not workers._WHEN_WAITING  # nothing left for a later run in this process


def test_compare_json_is_the_same_whether_or_not_the_imports_wait(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["compare", str(runs["gold"]), str(runs["a"]), str(runs["b"]), "--json", "--seed", "3"]
    args += ["--resamples", "100", "--trials", "100", "--per-type"]
    out = []
    for jobs in ("1", "2"):
        got = CliRunner().invoke(cli, [*args, "--jobs", jobs])
        assert got.exit_code == 0, got.output
        out.append(json.loads(got.output))
    monkeypatch.setattr(compare_cli, "AFTER_THE_COUNT", ())
    got = CliRunner().invoke(cli, [*args, "--jobs", "2"])
    assert got.exit_code == 0, got.output
    assert out[0] == out[1] == json.loads(got.output)


def test_the_discontinuous_figures_are_each_reports_own(
    worked: tuple[Path, Path],  # noqa: F811
    runs: dict[str, Path],
) -> None:
    gold, pred = worked
    for options in ({}, {"beta": 2.0}, {"discontinuous": "extent"}):
        with pytest.warns(FewUnitsWarning):
            c = spanscore.compare(reference=gold, systems=[pred, gold], names=["a", "b"], format="brat", **options)
        figures = c.to_dict()["discontinuous"]
        assert figures == {n: r.to_dict()["discontinuous"] for n, r in zip(c.names, c.reports, strict=True)}
        assert figures["b"]["mentions"]["f1"] == 1.0  # the reference against itself
        # The prediction gives an extent for a discontinuous mention: wrong unless read as extents.
        assert (figures["a"]["mentions"]["f1"] == 1.0) == (options.get("discontinuous") == "extent")
    c = spanscore.compare(reference=runs["gold"], systems=[runs["a"], runs["b"]], resamples=20, trials=20)
    assert "discontinuous" not in c.to_dict()
    assert all("discontinuous" not in r.to_dict() for r in c.reports)

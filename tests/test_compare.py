"""Intervals and paired tests over documents (issue 12): checked against evaluations of resampled
and swapped corpora written out as files, enumerated by hand, and against ``evaluate`` itself."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import spanscore
from spanscore.analysis.significance import (
    Draws,
    Resampling,
    _rng,
    _Table,
    bootstrap,
    compare,
    histogram_of,
    score_totals,
)
from spanscore.cli.main import cli
from spanscore.errors import OptionError
from spanscore.stages.documents import DocCounts, Histogram

DATA = Path(__file__).resolve().parent / "data"
SCORE_NAMES = ("strict", "overlap", "semeval_partial", "token")


def sentences(path: Path) -> list[list[str]]:
    return [block.split("\n") for block in path.read_text(encoding="utf-8").strip("\n").split("\n\n")]


def write_conll(path: Path, blocks: list[list[str]]) -> Path:
    path.write_text("".join("\n".join(b) + "\n\n" for b in blocks), encoding="utf-8")
    return path


def perturb(blocks: list[list[str]], seed: int, rate: float) -> list[list[str]]:
    """A system's output: some mentions dropped, shrunk from the left, or relabelled."""
    rng = random.Random(seed)
    out = []
    for block in blocks:
        rows = [line.rsplit("\t", 1) for line in block]
        tags = [t for _, t in rows]
        for i, tag in enumerate(tags):
            if not tag.startswith("B-") or rng.random() > rate:
                continue
            end = i + 1
            while end < len(tags) and tags[end] == "I-" + tag[2:]:
                end += 1
            what = rng.choice(["drop", "shrink", "relabel"])
            if what == "drop":
                tags[i:end] = ["O"] * (end - i)
            elif what == "shrink" and end - i > 1:
                tags[i] = "O"
                tags[i + 1] = "B-" + tag[2:]
            elif what == "relabel":
                new = "MISC" if tag[2:] != "MISC" else "PER"
                tags[i:end] = ["B-" + new] + ["I-" + new] * (end - i - 1)
        out.append([f"{tok}\t{t}" for (tok, _), t in zip(rows, tags, strict=True)])
    return out


@pytest.fixture(scope="module")
def btc_runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("compare")
    gold = sentences(btc / "test.txt")
    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": write_conll(folder / "b.conll", perturb(gold, 2, 0.35)),
        "small_gold": write_conll(folder / "small_gold.conll", gold[:200]),
        "small_a": write_conll(folder / "small_a.conll", perturb(gold, 1, 0.45)[:200]),
    }


def docs_of(gold: Path, pred: Path) -> Any:
    return spanscore.evaluate(reference=gold, predicted=pred, documents=True, keep_details=False)


def per_document(hist: Histogram, docs: DocCounts, weights: np.ndarray) -> list[int]:
    """A resample of the histogram's rows as a resample of documents: each distinct row's draws
    all go to the first document that holds it (any spread sums to the same counts)."""
    index = {tuple(row): k for k, row in enumerate(hist.rows.tolist())}
    cols = [docs.fields.index(f) for f in hist.fields]
    out = [0] * docs.stats.shape[0]
    given = set()
    for i, row in enumerate(docs.stats[:, cols].tolist()):
        k = index[tuple(row)]
        if k not in given:
            out[i] = int(weights[k])
            given.add(k)
    assert sum(out) == docs.stats.shape[0]
    return out


def test_a_system_compared_with_itself_differs_by_nothing(btc_runs: dict[str, Path]) -> None:
    r = docs_of(btc_runs["gold"], btc_runs["a"])
    result = compare([r.documents, r.documents], ["a", "a2"], zero_division=0.0, credit="0.5",
                     resampling=Resampling(resamples=200, trials=200))
    assert result.comparisons
    for c in result.comparisons:
        assert c["difference"] == 0.0 and c["low"] == 0.0 and c["high"] == 0.0
        assert c["p_bootstrap"] == 1.0 and c["p_randomization"] == 1.0


def test_same_seed_same_numbers_and_the_interval_holds_the_estimate(btc_runs: dict[str, Path]) -> None:
    r = docs_of(btc_runs["gold"], btc_runs["a"])
    one = bootstrap(r.documents, zero_division=0.0, credit="0.5", resampling=Resampling(resamples=300, seed=7))
    two = bootstrap(r.documents, zero_division=0.0, credit="0.5", resampling=Resampling(resamples=300, seed=7))
    other = bootstrap(r.documents, zero_division=0.0, credit="0.5", resampling=Resampling(resamples=300, seed=8))
    assert one == two and one != other
    report = r.to_dict()
    for name in SCORE_NAMES:
        for metric in ("precision", "recall", "f1"):
            entry = one[name][metric]
            assert entry["low"] <= entry["value"] <= entry["high"]
            # the point estimate is the evaluation's own score
            if name.startswith("semeval_"):
                expected = report["semeval"][name.removeprefix("semeval_")][metric]
            else:
                expected = report["metrics"][name][metric]
            assert entry["value"] == pytest.approx(expected, abs=1e-12)


def test_the_interval_narrows_as_the_corpus_grows(btc_runs: dict[str, Path]) -> None:
    small = docs_of(btc_runs["small_gold"], btc_runs["small_a"]).documents
    large = docs_of(btc_runs["gold"], btc_runs["a"]).documents
    assert small.stats.shape[0] == 200 and large.stats.shape[0] > 2000 - 10
    for name in SCORE_NAMES:
        widths = []
        for docs in (small, large):
            f1 = bootstrap(docs, zero_division=0.0, credit="0.5", resampling=Resampling(resamples=500))[name]["f1"]
            widths.append(f1["high"] - f1["low"])
        assert widths[1] < widths[0] / 2  # about sqrt(10) narrower


def test_a_resample_scores_as_the_resampled_corpus_evaluates(tmp_path: Path) -> None:
    # The weighted sum of per-sentence counts is the evaluation of the corpus with each sentence
    # written as often as the resample drew it: checked by writing those corpora out.
    gold = sentences(DATA / "small.gold.conll")
    pred = sentences(DATA / "small.pred.conll")
    r = docs_of(DATA / "small.gold.conll", DATA / "small.pred.conll")
    hist = histogram_of(r.documents, "0.5")
    table = _Table(hist.rows, hist.counts, hist.fields)
    weights = Draws(hist.counts).bootstrap(np.random.default_rng(3), 4)
    scores = score_totals(table.sums(weights), table.fields, 0.0, "0.5")
    for k in range(4):
        counts = per_document(hist, r.documents, weights[k])
        g = write_conll(tmp_path / f"g{k}", [b for b, n in zip(gold, counts, strict=True) for _ in range(n)])
        p = write_conll(tmp_path / f"p{k}", [b for b, n in zip(pred, counts, strict=True) for _ in range(n)])
        again = spanscore.evaluate(reference=g, predicted=p).to_dict()
        for name in ("strict", "left", "right", "overlap", "boundary"):
            assert scores[name]["f1"][k] == pytest.approx(again["metrics"][name]["f1"], abs=1e-12)
        assert scores["semeval_partial"]["f1"][k] == pytest.approx(again["semeval"]["partial"]["f1"], abs=1e-12)


def test_exact_randomisation_equals_every_swap_evaluated(tmp_path: Path) -> None:
    # Two systems on five sentences; each of the 2^5 swaps is written out and evaluated, and the
    # share of swaps whose |difference| reaches the observed one is the exact p-value.
    gold = sentences(DATA / "small.gold.conll")
    sys_a = perturb(gold, 11, 0.6)
    sys_b = sentences(DATA / "small.pred.conll")
    g = write_conll(tmp_path / "g", gold)
    pa, pb = write_conll(tmp_path / "a", sys_a), write_conll(tmp_path / "b", sys_b)
    result = compare(
        [docs_of(g, pa).documents, docs_of(g, pb).documents], ["a", "b"], zero_division=0.0, credit="0.5",
        resampling=Resampling(resamples=50), exact=True,
    )

    def f1s(pred_a: list[list[str]], pred_b: list[list[str]], name: str) -> float:
        ra = spanscore.evaluate(reference=g, predicted=write_conll(tmp_path / "sa", pred_a)).to_dict()
        rb = spanscore.evaluate(reference=g, predicted=write_conll(tmp_path / "sb", pred_b)).to_dict()
        return float(rb["metrics"][name]["f1"] - ra["metrics"][name]["f1"])

    for name in ("strict", "overlap"):
        observed = f1s(sys_a, sys_b, name)
        hits = 0
        for swap in itertools.product([False, True], repeat=len(gold)):
            new_a = [b if s else a for a, b, s in zip(sys_a, sys_b, swap, strict=True)]
            new_b = [a if s else b for a, b, s in zip(sys_a, sys_b, swap, strict=True)]
            hits += abs(f1s(new_a, new_b, name)) >= abs(observed) - 1e-12
        entry = next(c for c in result.comparisons if c["criterion"] == name and c["metric"] == "f1")
        assert entry["difference"] == pytest.approx(observed, abs=1e-12)
        assert entry["p_randomization"] == pytest.approx(hits / 2 ** len(gold), abs=1e-12)


def test_compare_scores_each_system_as_evaluate_does(btc_runs: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "systems"
    folder.mkdir()
    for name in ("a", "b"):
        (folder / f"{name}.conll").write_bytes(btc_runs[name].read_bytes())
    html = tmp_path / "compare.html"
    out = CliRunner().invoke(
        cli,
        ["compare", str(btc_runs["gold"]), str(folder), "--resamples", "200", "--trials", "200", "--json",
         "--html", str(html)],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert [s["name"] for s in data["systems"]] == ["a.conll", "b.conll"]
    for system, name in zip(data["systems"], ("a", "b"), strict=True):
        args = ["evaluate", str(btc_runs["gold"]), str(btc_runs[name]), "--json"]
        ev = json.loads(CliRunner().invoke(cli, args).stdout)
        for crit, block in system["metrics"].items():
            for metric in ("precision", "recall", "f1"):
                if crit.startswith("semeval_"):
                    expected = ev["semeval"][crit.removeprefix("semeval_")][metric]
                else:
                    expected = ev["metrics"][crit][metric]
                assert block[metric]["value"] == pytest.approx(expected, abs=1e-12)
                assert set(block[metric]) == {"value", "low", "high"}
    keys = {"a", "b", "criterion", "metric", "difference", "low", "high", "p_bootstrap", "p_randomization"}
    assert data["comparisons"] and all(set(c) == keys for c in data["comparisons"])
    assert all(1 / 201 <= c["p_randomization"] <= 1 for c in data["comparisons"])
    assert "ci:0.95|resamples:200|trials:200|seed:0" in data["signature"]
    assert set(data["rankings"]) == set(data["systems"][0]["metrics"])
    page = html.read_text(encoding="utf-8")
    assert "<script" not in page and "a.conll" in page and "Rankings" in page


def test_bad_comparisons_are_one_line(btc_runs: dict[str, Path], tmp_path: Path) -> None:
    r_small = docs_of(btc_runs["small_gold"], btc_runs["small_a"])
    r_large = docs_of(btc_runs["gold"], btc_runs["a"])
    with pytest.raises(OptionError, match="documents"):
        compare([r_large.documents, r_small.documents], ["x", "y"], zero_division=0.0, credit="0.5")
    with pytest.raises(OptionError, match="between 0 and 1"):
        Resampling(level=1.5)
    with pytest.raises(OptionError, match="at most"):
        compare([r_large.documents, r_large.documents], ["x", "y"], zero_division=0.0, credit="0.5", exact=True)
    runner = CliRunner()
    out = runner.invoke(cli, ["compare", str(btc_runs["gold"]), str(btc_runs["a"]), str(btc_runs["small_a"])])
    assert out.exit_code == 2 and "spanscore: error:" in out.output and "Traceback" not in out.output
    out = runner.invoke(cli, ["compare", str(btc_runs["gold"]), str(tmp_path / "nothing")])
    assert out.exit_code == 2 and "no such file or folder" in out.output
    out = runner.invoke(cli, ["evaluate", str(btc_runs["gold"]), str(btc_runs["a"]), "--ci", "95"])
    assert out.exit_code == 2 and "between 0 and 1" in out.output


def test_evaluate_ci_adds_intervals_to_the_json_and_the_signature(btc_runs: dict[str, Path]) -> None:
    out = CliRunner().invoke(
        cli, ["evaluate", str(btc_runs["gold"]), str(btc_runs["a"]), "--ci", "0.9", "--resamples", "100", "--json"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    ci = data["intervals"]
    assert (ci["level"], ci["resamples"], ci["unit"]) == (0.9, 100, "sentence")
    assert ci["scores"]["strict"]["f1"]["value"] == data["metrics"]["strict"]["f1"]
    assert data["signature"].endswith("|ci:0.9|resamples:100|seed:0|resampled:sentences")
    tables = CliRunner().invoke(
        cli, ["evaluate", str(btc_runs["gold"]), str(btc_runs["a"]), "--ci", "0.9", "--resamples", "100"]
    )
    assert tables.exit_code == 0 and "90% intervals" in tables.output
    assert "Micro and macro over" in tables.output  # the mean and std over documents beside micro F1
    assert data["macro_documents"]["strict"]["f1_std"] >= 0


def test_scores_by_a_field_equal_each_group_evaluated_alone(tmp_path: Path) -> None:
    docs = [
        ("d1", "news", "Ann Lee met Bob in Paris", [(0, 7, "PER"), (12, 15, "PER"), (19, 24, "LOC")],
         [(0, 3, "PER"), (12, 15, "PER"), (19, 24, "ORG")]),
        ("d2", "web", "New York Times said so", [(0, 14, "ORG")], [(4, 14, "ORG")]),
        ("d3", "news", "Berlin Wall fell", [(0, 11, "LOC")], [(0, 11, "LOC")]),
        ("d4", None, "nothing here", [], [(0, 7, "MISC")]),
    ]

    def line(doc_id: str, source: str | None, text: str, spans: list[tuple[int, int, str]], meta: bool) -> str:
        obj: dict[str, Any] = {"id": doc_id, "text": text,
                               "spans": [{"start": s, "end": e, "label": t} for s, e, t in spans]}
        if meta and source is not None:
            obj["meta"] = {"source": source}
        return json.dumps(obj)

    def files(selected: list[Any], name: str) -> tuple[Path, Path]:
        g, p = tmp_path / f"{name}.gold.jsonl", tmp_path / f"{name}.pred.jsonl"
        g.write_text("".join(line(d[0], d[1], d[2], d[3], True) + "\n" for d in selected), encoding="utf-8")
        p.write_text("".join(line(d[0], d[1], d[2], d[4], False) + "\n" for d in selected), encoding="utf-8")
        return g, p

    gold, pred = files(docs, "all")
    out = CliRunner().invoke(cli, ["evaluate", str(gold), str(pred), "--by", "meta.source", "--json"])
    assert out.exit_code == 0, out.output
    groups = {g["value"]: g for g in json.loads(out.stdout)["breakdown"]["groups"]}
    assert {k: g["documents"] for k, g in groups.items()} == {"news": 2, "web": 1, "(missing)": 1}
    for value, members in (("news", [docs[0], docs[2]]), ("web", [docs[1]]), ("(missing)", [docs[3]])):
        g, p = files(members, value.strip("()"))
        alone = spanscore.evaluate(reference=g, predicted=p, format="jsonl").to_dict()
        for name in ("strict", "left", "right", "overlap", "token"):
            assert groups[value]["scores"][name]["f1"] == pytest.approx(alone["metrics"][name]["f1"], abs=1e-12)
        assert groups[value]["scores"]["semeval_partial"]["f1"] == pytest.approx(alone["semeval"]["partial"]["f1"])
    tables = CliRunner().invoke(cli, ["evaluate", str(gold), str(pred), "--by", "meta.source", "--ci", "0.9"])
    assert tables.exit_code == 0 and "F1 by meta.source" in tables.output
    merged = CliRunner().invoke(cli, ["evaluate", str(DATA / "small.gold.conll"), "--merged", "--by", "source"])
    assert merged.exit_code == 2 and "--by" in merged.output


@pytest.mark.parametrize("documents", [True, False], ids=["docstart", "sentences"])
def test_scores_by_a_conll_comment_field(tmp_path: Path, documents: bool) -> None:
    gold, pred = sentences(DATA / "small.gold.conll"), sentences(DATA / "small.pred.conll")
    sources = ["news", "web", "news", None, "web"][: len(gold)]

    def text(blocks: list[list[str]], keep: list[int], comments: bool) -> str:
        out = []
        for k in keep:
            head = []
            if documents:
                head.append("-DOCSTART-\tO\n")
            if comments and sources[k] is not None:
                head.append(f"# source = {sources[k]}\n")
                head.append("# note = a comment line\n")
            out.append("".join(head) + "\n".join(blocks[k]) + "\n\n")
        return "".join(out)

    everything = list(range(len(gold)))
    g, p = tmp_path / "g.conll", tmp_path / "p.conll"
    g.write_text(text(gold, everything, True), encoding="utf-8")
    p.write_text(text(pred, everything, False), encoding="utf-8")
    out = CliRunner().invoke(cli, ["evaluate", str(g), str(p), "--by", "source", "--json"])
    assert out.exit_code == 0, out.output
    groups = {x["value"]: x for x in json.loads(out.stdout)["breakdown"]["groups"]}
    assert {k: x["documents"] for k, x in groups.items()} == {"news": 2, "web": 2, "(missing)": 1}
    for value in groups:
        keep = [k for k in everything if (sources[k] or "(missing)") == value]
        ga, pa = tmp_path / "ga.conll", tmp_path / "pa.conll"
        ga.write_text(text(gold, keep, True), encoding="utf-8")
        pa.write_text(text(pred, keep, False), encoding="utf-8")
        alone = spanscore.evaluate(reference=ga, predicted=pa).to_dict()
        for name in ("strict", "overlap", "token"):
            assert groups[value]["scores"][name]["f1"] == pytest.approx(alone["metrics"][name]["f1"], abs=1e-12)


def test_per_type_intervals_hold_the_per_type_scores_and_do_not_depend_on_chunks(btc_runs: dict[str, Path]) -> None:
    from spanscore.analysis.significance import bootstrap_types

    resampling = Resampling(resamples=200)
    results = []
    for chunk, jobs in ((1 << 22, 1), (4096, 1), (4096, 2)):
        r = spanscore.evaluate(
            reference=btc_runs["gold"], predicted=btc_runs["a"], document_types=True, keep_details=False,
            chunk_bytes=chunk, jobs=jobs,
        )
        results.append(bootstrap_types(r.documents, zero_division=0.0, credit="0.5", resampling=resampling))
    assert results[0] == results[1] == results[2]
    per_type = r.to_dict()["per_type"]
    assert set(results[0]) == set(per_type)
    for t, block in results[0].items():
        for name in ("strict", "overlap", "semeval_partial", "token"):
            expected = (
                per_type[t]["semeval"][name.removeprefix("semeval_")]
                if name.startswith("semeval_")
                else per_type[t]["metrics"][name]
            )
            for metric in ("precision", "recall", "f1"):
                entry = block[name][metric]
                assert entry["value"] == pytest.approx(expected[metric], abs=1e-12)
                assert entry["low"] <= entry["value"] <= entry["high"]


def test_a_resample_per_type_scores_as_the_resampled_corpus_evaluates(tmp_path: Path) -> None:
    from spanscore.analysis.significance import bootstrap_types

    gold = sentences(DATA / "small.gold.conll")
    pred = sentences(DATA / "small.pred.conll")
    r = spanscore.evaluate(
        reference=DATA / "small.gold.conll", predicted=DATA / "small.pred.conll", document_types=True
    )
    # One resample: its interval is a point, the score of the corpus written as the resample drew
    # it. Each type draws its own resample (over its rows per document, zero where it has none).
    import zlib

    from spanscore.analysis.significance import group_rows

    one = bootstrap_types(r.documents, zero_division=0.0, credit="0.5", resampling=Resampling(resamples=1, seed=5))
    docs = r.documents
    per_type = group_rows(docs.type_rows)
    for t in sorted(per_type):
        mine = np.flatnonzero(docs.type_rows.type_index == docs.type_rows.names.index(t))
        dense = np.zeros_like(docs.stats)
        np.add.at(dense, np.searchsorted(docs.keys, docs.type_rows.keys[mine]), docs.type_rows.stats[mine])
        dense_docs = DocCounts(docs.keys, dense, docs.fields)
        hist = histogram_of(Histogram.of(per_type[t], docs.fields), "0.5").with_zeros(docs.stats.shape[0])
        weights = Draws(hist.counts, quick=True).bootstrap(_rng(5, 2, 0, zlib.crc32(t.encode())), 1)
        counts = per_document(hist, dense_docs, weights[0])
        g = write_conll(tmp_path / f"g{t}", [b for b, n in zip(gold, counts, strict=True) for _ in range(n)])
        p = write_conll(tmp_path / f"p{t}", [b for b, n in zip(pred, counts, strict=True) for _ in range(n)])
        block = spanscore.evaluate(reference=g, predicted=p).to_dict()["per_type"].get(t)
        if block is None:  # the resample drew no document with this type
            assert one[t]["strict"]["f1"]["low"] == 0.0
            continue
        assert one[t]["strict"]["f1"]["low"] == pytest.approx(block["metrics"]["strict"]["f1"], abs=1e-12)
        assert one[t]["overlap"]["recall"]["low"] == pytest.approx(block["metrics"]["overlap"]["recall"], abs=1e-12)


def test_f_beta_beside_f1_everywhere_and_in_the_signature(btc_runs: dict[str, Path]) -> None:
    from fractions import Fraction

    from spanscore.stages.scores import add_f_beta

    r = spanscore.evaluate(reference=btc_runs["gold"], predicted=btc_runs["a"], beta=2.0, keep_details=False)
    data = r.to_dict()
    assert data["beta"] == 2.0 and "|beta:2" in data["signature"]
    m = data["metrics"]["strict"]
    # worked from the counts: P = full / predicted, R = full / reference, F2 = 5PR / (4P + R)
    p, rec = Fraction(m["full"], m["predicted"]), Fraction(m["full"], m["reference"])
    assert m["f_beta"] == pytest.approx(float(5 * p * rec / (4 * p + rec)), abs=1e-12)
    for block in (*data["metrics"].values(), *data["semeval"].values()):
        assert "f_beta" in block
    for entry in data["per_type"].values():
        assert all("f_beta" in b for b in entry["metrics"].values())
    assert data["macro"]["strict"]["f_beta"] == pytest.approx(
        np.mean([e["metrics"]["strict"]["f_beta"] for e in data["per_type"].values()])
    )
    # beta 1 gives F1 back in every block, and an evaluation without beta has no f_beta at all
    plain = spanscore.evaluate(reference=btc_runs["gold"], predicted=btc_runs["a"], keep_details=False).to_dict()
    assert "beta" not in plain and "f_beta" not in plain["metrics"]["strict"] and "beta" not in plain["signature"]
    add_f_beta(plain, 1.0)
    for name, block in plain["metrics"].items():
        assert block["f_beta"] == pytest.approx(block["f1"], abs=1e-12), name
    ci = bootstrap(
        r.documents if r.documents is not None else docs_of(btc_runs["gold"], btc_runs["a"]).documents,
        zero_division=0.0, credit="0.5", resampling=Resampling(resamples=100), beta=2.0,
    )
    assert ci["strict"]["f_beta"]["value"] == pytest.approx(m["f_beta"], abs=1e-12)
    assert ci["strict"]["f_beta"]["low"] <= m["f_beta"] <= ci["strict"]["f_beta"]["high"]
    for bad in ("0", "-1", "nan"):
        out = CliRunner().invoke(cli, ["evaluate", str(btc_runs["gold"]), str(btc_runs["a"]), "--beta", bad])
        assert out.exit_code == 2 and "beta must be a positive number" in out.output, bad


def test_systems_of_equal_f1_are_tied_not_ranked(tmp_path: Path) -> None:
    """Two copies of one prediction have the same F1 under every score: neither is better, and
    no score "ranks them differently" from strict F1 for that."""
    from spanscore.presentation.comparison import ranking_lines

    pred = Path(__file__).parent / "data" / "small.pred.conll"
    a, b = tmp_path / "a.conll", tmp_path / "b.conll"
    a.write_bytes(pred.read_bytes())
    b.write_bytes(pred.read_bytes())
    data = spanscore.compare(
        reference=Path(__file__).parent / "data" / "small.gold.conll", systems=[a, b], resamples=50, trials=50
    ).to_dict()
    lines = ranking_lines(data)
    assert lines and all(" = " in line and " > " not in line for line in lines), lines
    assert not any(c["ranking_changed"] for c in data["changes"])

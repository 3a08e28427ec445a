"""CoNLL files with one label column per nesting level (GermEval 2014's outer and inner columns).

The peer is GermEval 2014's official scorer, ``nereval.perl`` (Benikova et al. 2014), whose licence
does not let us ship it: ``nereval`` below is its counting written again in plain Python from a
reading of the script. Per level and per mode it walks the lines with conlleval's chunk state
(a chunk starts at B, or at I after O; it ends at B or O; the type is not consulted), counts a
chunk correct where gold and guess start together with the same type, keep the same type line by
line and end together; strict compares the whole type (``LOCderiv``), loose the type without its
``deriv``/``part`` ending. Metric 1 (strict, combined; the official one) and metric 2 (loose)
sum the two levels' correct, found and gold chunks; metric 3 is each level alone.

The real excerpt is compared with itself and with a seeded perturbation of both levels.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import OptionError

GERMEVAL = Path(__file__).parent / "data" / "real" / "datasets" / "germeval2014" / "NER-de-dev.tsv"
TAG = re.compile(r"^([^-]*)-(.+?)(deriv|part)?$")


# GermEval 2014's counting, written again from nereval.perl.


def _split(tag: str) -> tuple[str, str, str]:
    m = TAG.match(tag)
    return (m.group(1), m.group(2), m.group(3) or "") if m else (tag, "", "")


def _end(prev: str, tag: str) -> bool:
    return prev in ("B", "I") and tag in ("B", "O")


def _start(prev: str, tag: str) -> bool:
    return tag == "B" or (prev == "O" and tag == "I")


def _level(pairs: list[tuple[str, str]], strict: bool) -> tuple[int, int, int]:
    """(correct, found, gold) of one level: ``pairs`` are the (gold, guess) tags of every token line."""
    correct = found = gold = 0
    in_correct = False
    last_c, last_g = ("O", "", ""), ("O", "", "")
    for c_tag, g_tag in pairs:
        c, g = _split(c_tag), _split(g_tag)
        same = c[1] == g[1] and (not strict or c[2] == g[2])
        last_same = last_c[1] == last_g[1] and (not strict or last_c[2] == last_g[2])
        if in_correct:
            if _end(last_c[0], c[0]) and _end(last_g[0], g[0]) and last_same:
                in_correct = False
                correct += 1
            elif _end(last_c[0], c[0]) != _end(last_g[0], g[0]) or not same:
                in_correct = False
        if _start(last_c[0], c[0]) and _start(last_g[0], g[0]) and same:
            in_correct = True
        gold += _start(last_c[0], c[0])
        found += _start(last_g[0], g[0])
        last_c, last_g = c, g
    # As in nereval.perl, a chunk still open at the end of the input is not counted correct.
    return correct, found, gold


def nereval(lines: list[list[str]]) -> dict[str, tuple[int, int, int]]:
    """The official scorer's counts of merged lines (..., gold outer, gold inner, guess outer, guess inner)."""
    outer = [(f[-4], f[-2]) for f in lines]
    inner = [(f[-3], f[-1]) for f in lines]
    out = {"outer": _level(outer, True), "inner": _level(inner, True)}
    lo, li = _level(outer, False), _level(inner, False)
    out["strict"] = tuple(a + b for a, b in zip(out["outer"], out["inner"], strict=True))  # type: ignore[assignment]
    out["loose"] = tuple(a + b for a, b in zip(lo, li, strict=True))  # type: ignore[assignment]
    return out


# The excerpt and a perturbed prediction.


def _sentences(path: Path, comments: bool = True) -> list[list[list[str]]]:
    """Token lines' fields per sentence (comment lines left out, where the file has them)."""
    out: list[list[list[str]]] = [[]]
    for line in path.read_text(encoding="utf-8").split("\n"):
        if comments and line.startswith("#"):
            continue
        if not line.strip():
            if out[-1]:
                out.append([])
            continue
        out[-1].append(line.split("\t"))
    return [s for s in out if s]


def _chunks(tags: list[str]) -> list[tuple[int, int, str]]:
    spans, start = [], None
    for i, t in enumerate([*tags, "O"]):
        if start is not None and not t.startswith("I-"):
            spans.append((start, i, tags[start][2:]))
            start = None
        if t.startswith("B-") or (t.startswith("I-") and start is None):
            start = i
    return spans


def _tags(n: int, chunks: list[tuple[int, int, str]]) -> list[str]:
    tags = ["O"] * n
    for s, e, t in chunks:
        tags[s:e] = [f"B-{t}"] + [f"I-{t}"] * (e - s - 1)
    return tags


def _perturb(tags: list[str], rng: random.Random) -> list[str]:
    """Chunks dropped, retyped (strict-only errors among them: LOC for LOCderiv), cut or widened,
    and spurious ones added; the result is valid BIO, so both counts read the same chunks."""
    n = len(tags)
    out: list[tuple[int, int, str]] = []
    for s, e, t in _chunks(tags):
        r = rng.random()
        if r < 0.1:
            continue
        if r < 0.2:
            t = t.removesuffix("deriv") if t.endswith("deriv") else t + "deriv"
        elif r < 0.3:
            t = rng.choice(["PER", "LOC", "ORG", "OTH"])
        elif r < 0.4 and e - s > 1:
            e -= 1
        elif r < 0.5:
            e = min(e + 1, n)
        out.append((s, e, t))
    if rng.random() < 0.3:
        i = rng.randrange(n)
        out.append((i, i + 1, "ORG"))
    kept, used = [], [False] * n
    for s, e, t in sorted(out):
        if not any(used[s:e]):
            kept.append((s, e, t))
            used[s:e] = [True] * (e - s)
    return _tags(n, kept)


def _write(path: Path, sentences: list[list[list[str]]]) -> None:
    path.write_text("".join("".join("\t".join(f) + "\n" for f in s) + "\n" for s in sentences), encoding="utf-8")


@pytest.fixture(scope="module")
def germeval_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[list[str]]]:
    """The excerpt, a seeded prediction of both levels, and the merged lines nereval.perl reads."""
    rng = random.Random(2014)
    gold = _sentences(GERMEVAL)
    pred = []
    for sentence in gold:
        outer = _perturb([f[2] for f in sentence], rng)
        inner = _perturb([f[3] for f in sentence], rng)
        pred.append([[f[0], f[1], o, i] for f, o, i in zip(sentence, outer, inner, strict=True)])
    folder = tmp_path_factory.mktemp("germeval")
    _write(folder / "pred.tsv", pred)
    merged = [g + p[2:] for gs, ps in zip(gold, pred, strict=True) for g, p in zip(gs, ps, strict=True)]
    return GERMEVAL, folder / "pred.tsv", merged


def _germeval(reference: Path, predicted: Path) -> dict[str, dict[str, float]]:
    report = spanscore.evaluate(reference=reference, predicted=predicted, token_column=1, levels=(2, 3))
    assert report.levels is not None
    return report.levels["germeval"]  # type: ignore[no-any-return]


def _check(ours: dict[str, dict[str, float]], peer: dict[str, tuple[int, int, int]]) -> None:
    for measure in ("strict", "loose", "outer", "inner"):
        correct, found, gold = peer[measure]
        got = ours[measure]
        assert (got["correct"], got["found"], got["gold"]) == (correct, found, gold), measure
        p = correct / found if found else 0.0
        r = correct / gold if gold else 0.0
        assert got["precision"] == pytest.approx(p)
        assert got["recall"] == pytest.approx(r)
        assert got["f1"] == pytest.approx(2 * p * r / (p + r) if p + r else 0.0)


def test_germeval_excerpt_against_itself_is_perfect_and_counts_both_levels() -> None:
    lines = [f + f[2:] for s in _sentences(GERMEVAL) for f in s]
    peer = nereval(lines)
    assert peer["outer"][2] == 248 and peer["inner"][2] == 22  # counted by the peer, not by spanscore
    ours = _germeval(GERMEVAL, GERMEVAL)
    _check(ours, peer)
    assert ours["strict"]["f1"] == 1.0


def test_germeval_measures_equal_the_official_counting_on_a_perturbed_prediction(germeval_pair) -> None:  # type: ignore[no-untyped-def]
    reference, predicted, merged = germeval_pair
    peer = nereval(merged)
    assert peer["strict"][0] < peer["strict"][2]  # the perturbation made errors
    assert peer["loose"][0] > peer["strict"][0]  # and some only strict counts (LOC for LOCderiv)
    _check(_germeval(reference, predicted), peer)


def test_levels_scored_together_equal_an_independent_count(germeval_pair) -> None:  # type: ignore[no-untyped-def]
    """Both levels as one set of mentions (nested ones overlap): strict full matches are the
    multiset intersection of (sentence, start, end, type), each level's are its own."""
    reference, predicted, _ = germeval_pair

    def mentions(path: Path, columns: tuple[int, ...]) -> Counter[tuple[int, int, int, str]]:
        out: Counter[tuple[int, int, int, str]] = Counter()
        for k, sentence in enumerate(_sentences(path)):
            for c in columns:
                out.update((k, s, e, t) for s, e, t in _chunks([f[c] for f in sentence]))
        return out

    report = spanscore.evaluate(reference=reference, predicted=predicted, token_column=1, levels=(2, 3))
    gold, pred = mentions(reference, (2, 3)), mentions(predicted, (2, 3))
    strict = report.metrics["strict"]
    assert (strict["full"], strict["reference"], strict["predicted"]) == (
        sum((gold & pred).values()),
        sum(gold.values()),
        sum(pred.values()),
    )
    assert report.levels is not None
    for name, column in (("outer", 2), ("inner", 3)):
        g, p = mentions(reference, (column,)), mentions(predicted, (column,))
        level = report.levels[name]
        assert level["column"] == column
        assert level["metrics"]["strict"]["full"] == sum((g & p).values())
        one = spanscore.evaluate(reference=reference, predicted=predicted, token_column=1, label_column=column)
        assert level["metrics"] == one.metrics  # a level alone is that column read alone


def test_cli_levels_json_and_tables_agree(germeval_pair) -> None:  # type: ignore[no-untyped-def]
    reference, predicted, merged = germeval_pair
    runner = CliRunner()
    args = ["evaluate", str(reference), str(predicted), "--token-column", "1", "--levels", "2,3"]
    result = runner.invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    _check(data["levels"]["germeval"], nereval(merged))
    assert data["options"]["format"] == "conll-levels2"
    text = runner.invoke(cli, [*args, "--no-per-type"], terminal_width=100)
    assert text.exit_code == 0
    strict = data["levels"]["germeval"]["strict"]
    assert "GermEval 2014 strict" in text.output
    assert f"{100 * strict['f1']:.2f}" in text.output


def test_hand_worked_nested_levels(tmp_path: Path) -> None:
    """Bank of Berlin: ORG outer, LOC inner on "Berlin". The prediction finds the outer mention
    but puts the LOC at the outer level: together the LOC matches; by level it does not."""
    gold = tmp_path / "gold.tsv"
    pred = tmp_path / "pred.tsv"
    gold.write_text("1\tBank\tB-ORG\tO\n2\tof\tI-ORG\tO\n3\tBerlin\tI-ORG\tB-LOC\n\n", encoding="utf-8")
    pred.write_text("1\tBank\tB-ORG\tO\n2\tof\tO\tO\n3\tBerlin\tB-LOC\tO\n\n", encoding="utf-8")
    report = spanscore.evaluate(reference=gold, predicted=pred, token_column=1, levels=(2, 3))
    assert report.metrics["strict"]["full"] == 1  # LOC "Berlin" against LOC "Berlin"
    assert report.levels is not None
    germeval = report.levels["germeval"]
    assert (germeval["outer"]["correct"], germeval["outer"]["found"], germeval["outer"]["gold"]) == (0, 2, 1)
    assert (germeval["inner"]["correct"], germeval["inner"]["found"], germeval["inner"]["gold"]) == (0, 0, 1)
    assert germeval["strict"]["f1"] == 0.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"levels": (2,)}, "two label columns or more"),
        ({"levels": (2, 2)}, "names a column twice"),
        ({"levels": "2,3"}, "label column indexes"),
        ({"levels": (2, 3), "merged": True}, "not merged files"),
        ({"levels": (2, 3), "format": "jsonl"}, "CoNLL files"),
        ({"levels": (2, 3), "label_column": 2}, "not both"),
    ],
)
def test_bad_levels_are_refused_by_name(options: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        spanscore.Reading(**options)  # type: ignore[arg-type]


def test_cli_bad_levels_one_line() -> None:
    result = CliRunner().invoke(cli, ["evaluate", str(GERMEVAL), str(GERMEVAL), "--levels", "2,x"])
    assert result.exit_code == 2
    assert "--levels takes column indexes" in result.output


# The depth attribute.


def _depths(extents: list[tuple[int, int]]) -> list[int]:
    """Distinct other extents enclosing each one, counted pair by pair."""
    return [len({(a, b) for a, b in extents if a <= s and b >= e and (a, b) != (s, e)}) for s, e in extents]


def _bucket(report: spanscore.Report, label: str) -> dict[str, object]:
    assert report.buckets is not None
    return next(b for b in report.buckets["depth"] if b["bucket"] == label)


def test_depth_buckets_hand_worked_on_jsonl(tmp_path: Path) -> None:
    """University of Berlin Hospital: ORG [0, 30) holds ORG [0, 20) holding LOC [14, 20); a PER
    stands alone. The prediction finds the outer ORG and the LOC but places the middle ORG wrong
    and nests a spurious LOC two deep."""
    text = "University of Berlin Hospital. Anna"
    gold = {"id": "d", "text": text, "spans": [
        {"start": 0, "end": 29, "label": "ORG"}, {"start": 0, "end": 20, "label": "ORG"},
        {"start": 14, "end": 20, "label": "LOC"}, {"start": 31, "end": 35, "label": "PER"},
    ]}
    pred = {"id": "d", "text": text, "spans": [
        {"start": 0, "end": 29, "label": "ORG"}, {"start": 0, "end": 13, "label": "ORG"},
        {"start": 14, "end": 20, "label": "LOC"}, {"start": 0, "end": 10, "label": "LOC"},
        {"start": 31, "end": 35, "label": "PER"},
    ]}
    (tmp_path / "g.jsonl").write_text(json.dumps(gold) + "\n", encoding="utf-8")
    (tmp_path / "p.jsonl").write_text(json.dumps(pred) + "\n", encoding="utf-8")
    report = spanscore.evaluate(reference=tmp_path / "g.jsonl", predicted=tmp_path / "p.jsonl", format="jsonl",
                                buckets=["depth"])
    # Reference depths: ORG 0, ORG 1, LOC 2, PER 0; predicted: ORG 0, ORG 1, LOC 2 (in both ORGs), LOC 2, PER 0.
    assert _depths([(0, 29), (0, 20), (14, 20), (31, 35)]) == [0, 1, 2, 0]
    assert _depths([(0, 29), (0, 13), (14, 20), (0, 10), (31, 35)]) == [0, 1, 1, 2, 0]
    zero, one, deep = (_bucket(report, k) for k in ("0", "1", "2+"))
    assert (zero["reference_mentions"], zero["predicted_mentions"]) == (2, 2)
    assert (one["reference_mentions"], one["predicted_mentions"]) == (1, 2)
    assert (deep["reference_mentions"], deep["predicted_mentions"]) == (1, 1)
    strict = {k: b["metrics"]["strict"] for k, b in (("0", zero), ("1", one), ("2+", deep))}  # type: ignore[index]
    assert (strict["0"]["precision"], strict["0"]["recall"]) == (1.0, 1.0)
    assert strict["1"]["recall"] == 0.0  # the middle ORG is missed
    assert strict["1"]["precision"] == 0.5  # of ORG [0, 13) and LOC [14, 20) (one deep here), the LOC is right
    assert strict["2+"]["recall"] == 1.0  # the LOC, two deep in the reference, is found
    assert strict["2+"]["precision"] == 0.0  # the spurious LOC


def test_depth_buckets_on_germeval_equal_an_independent_count(germeval_pair) -> None:  # type: ignore[no-untyped-def]
    reference, predicted, _ = germeval_pair

    def mentions(path: Path) -> list[tuple[int, int, int, str, int]]:
        out = []
        for k, sentence in enumerate(_sentences(path)):
            found = [c for col in (2, 3) for c in _chunks([f[col] for f in sentence])]
            depth = _depths([(s, e) for s, e, _ in found])
            out += [(k, s, e, t, min(d, 2)) for (s, e, t), d in zip(found, depth, strict=True)]
        return out

    gold, pred = mentions(reference), mentions(predicted)
    report = spanscore.evaluate(reference=reference, predicted=predicted, token_column=1, levels=(2, 3),
                                buckets=["depth"])
    pred_set = Counter(m[:4] for m in pred)
    gold_set = Counter(m[:4] for m in gold)
    for d, label in enumerate(("0", "1", "2+")):
        b = _bucket(report, label)
        ref_d = [m for m in gold if m[4] == d]
        pred_d = [m for m in pred if m[4] == d]
        assert (b["reference_mentions"], b["predicted_mentions"]) == (len(ref_d), len(pred_d))
        # Exact pairs are matched one to one: a key (sentence, extent, type) matches min(gold, predicted)
        # times, and every mention of a key has the key's depth on its side.
        ref_keys = Counter(m[:4] for m in ref_d)
        pred_keys = Counter(m[:4] for m in pred_d)
        recall = sum(min(n, pred_set[k]) for k, n in ref_keys.items()) / len(ref_d) if ref_d else 0.0
        precision = sum(min(n, gold_set[k]) for k, n in pred_keys.items()) / len(pred_d) if pred_d else 0.0
        strict = b["metrics"]["strict"]  # type: ignore[index]
        assert strict["recall"] == pytest.approx(recall), label
        assert strict["precision"] == pytest.approx(precision), label
    assert _bucket(report, "1")["reference_mentions"] == 22  # every inner mention lies in an outer one
    assert max(pred_set.values()) == 2  # the prediction repeats a mention at both levels: counted twice


def test_depth_takes_no_edges() -> None:
    with pytest.raises(OptionError, match="depth has fixed buckets"):
        spanscore.evaluate(reference=GERMEVAL, predicted=GERMEVAL, token_column=1, buckets=["depth"],
                           bucket_edges={"depth": [1, 2]})


# convert.


def test_convert_levels_to_jsonl_keeps_every_level(germeval_pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Both levels written, each mention with its level; scored as JSONL the pair gives the
    combined counts of the CoNLL files read with --levels."""
    reference, predicted, _ = germeval_pair
    runner = CliRunner()
    for name, path in (("gold", reference), ("pred", predicted)):
        args = ["convert", str(path), "-o", str(tmp_path / f"{name}.jsonl"), "--token-column", "1", "--levels", "2,3"]
        result = runner.invoke(cli, [*args, "--to", "JSONL"])
        assert result.exit_code == 0, result.output
    docs = [json.loads(line) for line in (tmp_path / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    levels = Counter(s["level"] for d in docs for s in d["spans"])
    assert levels == {"outer": 248, "inner": 22}
    first_nested = next(d for d in docs if any(s["level"] == "inner" for s in d["spans"]))
    inner = next(s for s in first_nested["spans"] if s["level"] == "inner")
    assert any(  # an inner mention lies inside an outer one, in characters too
        s["level"] == "outer" and s["start"] <= inner["start"] and inner["end"] <= s["end"]
        for s in first_nested["spans"]
    )
    conll = spanscore.evaluate(reference=reference, predicted=predicted, token_column=1, levels=(2, 3))
    jsonl = spanscore.evaluate(reference=tmp_path / "gold.jsonl", predicted=tmp_path / "pred.jsonl", format="jsonl")
    for key in ("full", "predicted", "reference"):
        assert jsonl.metrics["strict"][key] == conll.metrics["strict"][key]


def test_convert_refuses_what_would_lose_a_level(tmp_path: Path) -> None:
    runner = CliRunner()
    nested = tmp_path / "nested.jsonl"
    nested.write_text(
        json.dumps({"id": "a", "text": "Anna", "spans": [{"start": 0, "end": 4, "label": "PER"}]}) + "\n"
        + json.dumps({"id": "b", "text": "Bank of Berlin", "spans": [
            {"start": 0, "end": 14, "label": "ORG"}, {"start": 8, "end": 14, "label": "LOC"}]}) + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.tsv"
    result = runner.invoke(cli, ["convert", str(nested), "--from", "JSONL", "--to", "BIO", "-o", str(out)])
    assert result.exit_code == 2
    assert "document 'b'" in result.output
    assert "LOC 8..14 ('Berlin') nested in ORG 0..14 ('Bank of Berlin')" in result.output
    assert not out.exists()
    args = ["convert", str(GERMEVAL), "-o", str(out), "--token-column", "1", "--levels", "2,3", "--to", "BIOES"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 2 and "levels convert to JSONL" in result.output
    assert not out.exists()
    for command in (["validate", str(GERMEVAL)], ["transform", str(GERMEVAL), "-o", str(out), "--keep-types", "PER"]):
        result = runner.invoke(cli, [*command, "--token-column", "1", "--levels", "2,3"])
        assert result.exit_code == 2 and "one label column at a time" in result.output, command


def test_levels_are_the_same_whatever_the_chunks_and_workers(germeval_pair) -> None:  # type: ignore[no-untyped-def]
    reference, predicted, _ = germeval_pair
    whole = spanscore.evaluate(reference=reference, predicted=predicted, token_column=1, levels=(2, 3),
                               buckets=["depth"], keep_details=False)
    for options in ({"chunk_bytes": 2000}, {"chunk_bytes": 5000, "jobs": 2}):
        other = spanscore.evaluate(reference=reference, predicted=predicted, token_column=1, levels=(2, 3),
                                   buckets=["depth"], keep_details=False, **options)  # type: ignore[arg-type]
        assert other.to_dict() == whole.to_dict(), options


def test_report_folder_pages_show_the_levels(germeval_pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    reference, predicted, _ = germeval_pair
    out = tmp_path / "report"
    args = ["evaluate", str(reference), str(predicted), "--token-column", "1", "--levels", "2,3", "--report", str(out)]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    f1 = json.loads(result.stdout)["levels"]["germeval"]["strict"]["f1"]
    for page in ("summary.md", "report.html"):
        text = (out / page).read_text(encoding="utf-8")
        assert "GermEval 2014 strict (official)" in text, page
        assert f"{100 * f1:.2f}" in text, page


def test_levels_round_trip_through_jsonl(germeval_pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """CoNLL with levels to JSONL and back: every token and every level's label as it was."""
    runner = CliRunner()
    for name, path in zip(("gold", "pred"), germeval_pair[:2], strict=True):
        jsonl, back = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.tsv"
        args = ["convert", str(path), "-o", str(jsonl), "--token-column", "1", "--levels", "2,3", "--to", "JSONL"]
        assert runner.invoke(cli, args).exit_code == 0
        result = runner.invoke(cli, ["convert", str(jsonl), "--from", "JSONL", "--to", "BIO", "-o", str(back)])
        assert result.exit_code == 0, result.output
        # GermEval's lines start with an index; without it, a token "#" starts a line and is no comment.
        assert [[f[1:] for f in s] for s in _sentences(path)] == _sentences(back, comments=False)


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ([{"start": 0, "end": 4, "label": "PER", "level": "middle"}], "level 'middle' is none of outer, inner"),
        ([{"start": 0, "end": 4, "label": "PER", "level": "outer"}, {"start": 0, "end": 4, "label": "LOC"}],
         "span 1 has no level while other spans have one"),
        ([{"start": 0, "end": 9, "label": "ORG", "level": "inner"}, {"start": 5, "end": 9, "label": "LOC",
          "level": "inner"}], "overlapping spans at level inner"),
    ],
)
def test_jsonl_levels_that_cannot_be_written_are_refused(tmp_path: Path, spans: list[object], message: str) -> None:
    source = tmp_path / "levels.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "Anna Bank", "spans": spans}) + "\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    result = CliRunner().invoke(cli, ["convert", str(source), "--from", "JSONL", "--to", "BIO", "-o", str(out)])
    assert result.exit_code == 2
    assert message in result.output
    assert "levels.jsonl:1" in result.output
    assert not out.exists()


def test_a_mention_on_the_last_line_counts_here_not_in_the_official_scorer(tmp_path: Path) -> None:
    """nereval.perl counts a correct chunk when the next line ends it, and after the last line
    there is none: a file whose last token is in a mention found exactly loses that match (perl
    nereval.perl on these lines prints precision and recall 50.00%). spanScore counts it, as
    conlleval does; the difference is pinned here and stated in the docs."""
    gold = "1\tAnna\tB-PER\tO\n2\tsagt\tO\tO\n\n1\tBerlin\tB-LOC\tO\n"
    (tmp_path / "g.tsv").write_text(gold, encoding="utf-8")
    lines = [f + f[2:] for f in (line.split("\t") for line in gold.splitlines() if line)]
    assert nereval(lines)["strict"] == (1, 2, 2)
    ours = _germeval(tmp_path / "g.tsv", tmp_path / "g.tsv")
    assert (ours["strict"]["correct"], ours["strict"]["found"], ours["strict"]["gold"]) == (2, 2, 2)


# JSONL with levels: the level field convert --levels writes.


def _to_jsonl(path: Path, out: Path) -> Path:
    args = ["convert", str(path), "-o", str(out), "--token-column", "1", "--levels", "2,3", "--to", "JSONL"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def germeval_jsonl(germeval_pair, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """The excerpt and its perturbed prediction written to JSONL by convert --levels."""
    folder = tmp_path_factory.mktemp("germeval-jsonl")
    return _to_jsonl(germeval_pair[0], folder / "gold.jsonl"), _to_jsonl(germeval_pair[1], folder / "pred.jsonl")


# Token and character positions give the same matches; only proportional credit (overlap's) and
# the token score are counted in other units.
SAME_UNITS = ("strict", "boundary", "left", "right")


def test_jsonl_levels_give_the_conll_files_per_level_and_germeval_figures(germeval_pair, germeval_jsonl) -> None:  # type: ignore[no-untyped-def]
    reference, predicted, merged = germeval_pair
    conll = spanscore.evaluate(reference=reference, predicted=predicted, token_column=1, levels=(2, 3))
    jsonl = spanscore.evaluate(
        reference=germeval_jsonl[0], predicted=germeval_jsonl[1], format="jsonl", levels=("outer", "inner")
    )
    assert conll.levels is not None and jsonl.levels is not None
    assert jsonl.levels["germeval"] == conll.levels["germeval"]
    _check(jsonl.levels["germeval"], nereval(merged))  # the official counting, through JSONL
    assert list(jsonl.levels) == ["outer", "inner", "germeval"]
    for name in ("outer", "inner"):
        assert "column" not in jsonl.levels[name]
        for criterion in SAME_UNITS:
            ours, theirs = jsonl.levels[name]["metrics"], conll.levels[name]["metrics"]
            assert ours[criterion] == theirs[criterion], (name, criterion)
        for key in ("full", "partial", "predicted", "reference"):
            assert jsonl.levels[name]["metrics"]["overlap"][key] == conll.levels[name]["metrics"]["overlap"][key]
    for criterion in SAME_UNITS:
        assert jsonl.metrics[criterion] == conll.metrics[criterion]
    assert jsonl.options["format"] == "jsonl-levels(outer,inner)"


def test_jsonl_levels_table_has_the_conll_tables_figures(germeval_pair, germeval_jsonl) -> None:  # type: ignore[no-untyped-def]
    from spanscore.presentation.levels import levels_table

    conll = spanscore.evaluate(reference=germeval_pair[0], predicted=germeval_pair[1], token_column=1, levels=(2, 3))
    jsonl = spanscore.evaluate(reference=germeval_jsonl[0], predicted=germeval_jsonl[1], format="jsonl",
                               levels=("outer", "inner"))
    ours, theirs = levels_table(jsonl.to_dict()["levels"]), levels_table(conll.to_dict()["levels"])
    assert [r.cells[1:] for r in ours.rows] == [r.cells[1:] for r in theirs.rows]
    assert [r.cells[0] for r in ours.rows][:2] == ["outer", "inner"]
    assert [r.cells[0] for r in theirs.rows][:2] == ["outer (column 2)", "inner (column 3)"]
    args = ["evaluate", str(germeval_jsonl[0]), str(germeval_jsonl[1]), "--format", "jsonl", "--levels", "outer,inner"]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["levels"] == jsonl.to_dict()["levels"]
    text = CliRunner().invoke(cli, [*args, "--no-per-type"], terminal_width=120)
    assert text.exit_code == 0 and "GermEval 2014 strict" in text.output
    assert f"{100 * jsonl.levels['germeval']['strict']['f1']:.2f}" in text.output  # type: ignore[index]


def test_one_jsonl_level_reads_that_levels_mentions_alone(germeval_pair, germeval_jsonl) -> None:  # type: ignore[no-untyped-def]
    inner = spanscore.evaluate(reference=germeval_jsonl[0], predicted=germeval_jsonl[1], format="jsonl",
                               levels=("inner",))
    column = spanscore.evaluate(reference=germeval_pair[0], predicted=germeval_pair[1], token_column=1, label_column=3)
    assert inner.levels is None  # one level is the whole report
    for criterion in SAME_UNITS:
        assert inner.metrics[criterion] == column.metrics[criterion]


def test_jsonl_levels_hand_worked(tmp_path: Path) -> None:
    """Bank of Berlin, as JSONL: the gold ORG is outer and the LOC inner; the prediction finds the
    ORG and puts the LOC at the outer level, and has a level3 mention that levels leave out."""
    text = "Bank of Berlin"
    org, loc = {"start": 0, "end": 14, "label": "ORG"}, {"start": 8, "end": 14, "label": "LOC"}
    gold = {"id": "a", "text": text, "spans": [{**org, "level": "outer"}, {**loc, "level": "inner"}]}
    pred = {"id": "a", "text": text, "spans": [
        {**org, "level": "outer"}, {**loc, "level": "outer"}, {**org, "end": 4, "level": "level3"}]}
    (tmp_path / "g.jsonl").write_text(json.dumps(gold) + "\n", encoding="utf-8")
    (tmp_path / "p.jsonl").write_text(json.dumps(pred) + "\n", encoding="utf-8")
    report = spanscore.evaluate(reference=tmp_path / "g.jsonl", predicted=tmp_path / "p.jsonl", format="jsonl",
                                levels=["outer", "inner"])
    strict = report.metrics["strict"]
    assert (strict["full"], strict["predicted"], strict["reference"]) == (2, 2, 2)  # level3 left out
    assert report.levels is not None
    outer, inner = (report.levels[n]["metrics"]["strict"] for n in ("outer", "inner"))
    assert (outer["full"], outer["predicted"], outer["reference"]) == (1, 2, 1)
    assert (inner["full"], inner["predicted"], inner["reference"]) == (0, 0, 1)
    g = report.levels["germeval"]["strict"]
    assert (g["correct"], g["found"], g["gold"]) == (1, 2, 2)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "conll", "levels": ("outer", "inner")}, "read the level field of JSONL mentions"),
        ({"format": "jsonl", "levels": (2, 3)}, "JSONL's levels go by name"),
        ({"format": "jsonl", "levels": ("outer", "outer")}, "names a level twice"),
        ({"format": "jsonl", "levels": ("outer", "germeval")}, "may not be named germeval"),
        ({"format": "jsonl", "levels": ("outer", "")}, "by a word"),
        ({"format": "jsonl", "levels": ("outer", 3)}, "integer column indexes, or level names"),
        ({"format": "jsonl", "predicted_format": "brat", "levels": ("outer", "inner")}, "both sides JSONL"),
    ],
)
def test_bad_jsonl_levels_are_refused_by_name(options: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        spanscore.Reading(**options)  # type: ignore[arg-type]


def test_jsonl_levels_refuse_a_mention_without_a_level_and_a_level_no_mention_has(tmp_path: Path) -> None:
    doc = {"id": "a", "text": "Anna", "spans": [{"start": 0, "end": 4, "label": "PER"}]}
    (tmp_path / "flat.jsonl").write_text(json.dumps(doc) + "\n", encoding="utf-8")
    runner = CliRunner()
    args = ["evaluate", str(tmp_path / "flat.jsonl"), str(tmp_path / "flat.jsonl"), "--format", "jsonl"]
    result = runner.invoke(cli, [*args, "--levels", "outer,inner"])
    assert result.exit_code == 2
    assert "flat.jsonl:1" in result.output and "span 0 has no level" in result.output
    doc["spans"][0]["level"] = "outer"  # type: ignore[index]
    (tmp_path / "flat.jsonl").write_text(json.dumps(doc) + "\n", encoding="utf-8")
    result = runner.invoke(cli, [*args, "--levels", "outer,iner"])
    assert result.exit_code == 2
    assert "no mention of either side is at level 'iner'" in result.output
    convert = ["convert", str(tmp_path / "flat.jsonl"), "--from", "JSONL", "--to", "BIO", "-o", str(tmp_path / "x.tsv")]
    result = runner.invoke(cli, [*convert, "--levels", "2,3"])
    assert result.exit_code == 2 and "go by name" in result.output


def test_convert_from_jsonl_by_level_names_keeps_a_level_without_mentions(tmp_path: Path) -> None:
    """Named, the levels give their columns in that order, an empty level included; a mention at a
    level not named is refused (it would be lost)."""
    doc = {"id": "a", "text": "Anna in Bonn", "spans": [{"start": 8, "end": 12, "label": "LOC", "level": "outer"}]}
    (tmp_path / "a.jsonl").write_text(json.dumps(doc) + "\n", encoding="utf-8")
    out = tmp_path / "a.tsv"
    args = ["convert", str(tmp_path / "a.jsonl"), "--from", "JSONL", "--to", "BIO", "-o", str(out)]
    result = CliRunner().invoke(cli, [*args, "--levels", "inner,outer"])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == "Anna\tO\tO\nin\tO\tO\nBonn\tO\tB-LOC\n\n"
    out.unlink()
    result = CliRunner().invoke(cli, [*args, "--levels", "inner,middle"])
    assert result.exit_code == 2
    assert "a.jsonl:1" in result.output and "level 'outer' is none of inner, middle" in result.output
    assert not out.exists()


# compare per level.


@pytest.fixture(scope="module")
def two_systems(germeval_pair, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """The seeded prediction, and a second seeded prediction of both levels."""
    rng = random.Random(2015)
    pred = []
    for sentence in _sentences(GERMEVAL):
        outer = _perturb([f[2] for f in sentence], rng)
        inner = _perturb([f[3] for f in sentence], rng)
        pred.append([[f[0], f[1], o, i] for f, o, i in zip(sentence, outer, inner, strict=True)])
    path = tmp_path_factory.mktemp("second") / "second.tsv"
    _write(path, pred)
    return germeval_pair[1], path


def test_compare_per_level_equals_each_systems_per_level_evaluation(two_systems) -> None:  # type: ignore[no-untyped-def]
    comparison = spanscore.compare(reference=GERMEVAL, systems=list(two_systems), names=["a", "b"], token_column=1,
                                   levels=(2, 3), resamples=200, trials=200)
    data = comparison.to_dict()
    evaluations = [spanscore.evaluate(reference=GERMEVAL, predicted=s, token_column=1, levels=(2, 3))
                   for s in two_systems]
    assert [g["bucket"] for g in data["levels"]] == ["outer", "inner"]
    for group in data["levels"]:
        name = group["bucket"]
        ours = [e.levels[name]["metrics"] for e in evaluations]  # type: ignore[index]
        assert group["reference_mentions"] == ours[0]["strict"]["reference"]
        for system, metrics in zip(group["systems"], ours, strict=True):
            assert system["predicted_mentions"] == metrics["strict"]["predicted"]
            for criterion in ("strict", "boundary", "overlap", "token"):
                for metric in ("precision", "recall", "f1"):
                    assert system["metrics"][criterion][metric]["value"] == pytest.approx(metrics[criterion][metric])
        for criterion in ("strict", "overlap"):
            test = next(c for c in group["comparisons"] if c["criterion"] == criterion and c["metric"] == "f1")
            assert (test["a"], test["b"]) == ("a", "b")
            assert test["difference"] == pytest.approx(ours[1][criterion]["f1"] - ours[0][criterion]["f1"])
            assert test["low"] <= test["difference"] <= test["high"]
            assert 0 < test["p_randomization"] <= 1 and 0 < test["p_bootstrap"] <= 1
    for measure in ("strict", "loose", "outer", "inner"):
        got = data["germeval"][measure]
        figures = [e.levels["germeval"][measure] for e in evaluations]  # type: ignore[index]
        assert [{k: v for k, v in s.items() if k not in ("name", "difference")} for s in got] == figures
        assert got[0]["difference"] is None
        assert got[1]["difference"] == pytest.approx(figures[1]["f1"] - figures[0]["f1"])


def test_compare_per_level_in_every_output(two_systems, germeval_pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    args = ["compare", str(GERMEVAL), *map(str, two_systems), "--token-column", "1", "--levels", "2,3",
            "--resamples", "100", "--trials", "100", "--name", "a", "--name", "b"]
    runner = CliRunner()
    result = runner.invoke(cli, [*args, "--json", "--html", str(tmp_path / "compare.html")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    inner = next(g for g in data["levels"] if g["bucket"] == "inner")
    f1 = inner["systems"][1]["metrics"]["strict"]["f1"]["value"]
    official = data["germeval"]["strict"][1]["f1"]
    text = runner.invoke(cli, args, terminal_width=140)
    assert text.exit_code == 0, text.output
    page = (tmp_path / "compare.html").read_text(encoding="utf-8")
    for output in (text.output, page):
        assert "strict F1 by level" in output and "GermEval 2014 strict (official)" in output
        assert f"{100 * f1:.2f}" in output and f"{100 * official:.2f}" in output
    assert "level inner" in page  # a row of the forest plot


def test_compare_jsonl_levels_equal_the_conll_files(two_systems, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    gold = _to_jsonl(GERMEVAL, tmp_path / "gold.jsonl")
    systems = [_to_jsonl(s, tmp_path / f"{k}.jsonl") for k, s in enumerate(two_systems)]
    options = {"resamples": 100, "trials": 100, "names": ["a", "b"]}
    conll = spanscore.compare(reference=GERMEVAL, systems=list(two_systems), token_column=1, levels=(2, 3),
                              **options).to_dict()  # type: ignore[arg-type]
    jsonl = spanscore.compare(reference=gold, systems=systems, format="jsonl", levels=("outer", "inner"),
                              **options).to_dict()  # type: ignore[arg-type]
    assert jsonl["germeval"] == conll["germeval"]
    # The point figures agree; the intervals are drawn from other histograms (the rows of characters
    # and of tokens differ), so they are not compared.
    for ours, theirs in zip(jsonl["levels"], conll["levels"], strict=True):
        assert (ours["bucket"], ours["reference_mentions"]) == (theirs["bucket"], theirs["reference_mentions"])
        for mine, other in zip(ours["systems"], theirs["systems"], strict=True):
            assert mine["metrics"]["strict"]["f1"]["value"] == other["metrics"]["strict"]["f1"]["value"]
        strict = [[c["difference"] for c in g["comparisons"] if c["criterion"] == "strict"] for g in (ours, theirs)]
        assert strict[0] == strict[1]


# Each mention's level in the report's rows.


def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    import csv

    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, restkey="_extra")
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def test_report_rows_give_each_sides_level(germeval_pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every mention of every row is at the level its row names, in an independent decoding of
    that level's column; errors.csv's false negatives and positives leave the missing side empty."""
    reference, predicted, _ = germeval_pair
    out = tmp_path / "report"
    args = ["evaluate", str(reference), str(predicted), "--token-column", "1", "--levels", "2,3", "--report", str(out)]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)

    def at_levels(path: Path) -> dict[tuple[int, int, int, str], set[str]]:
        out: dict[tuple[int, int, int, str], set[str]] = {}
        for k, sentence in enumerate(_sentences(path)):
            for column, name in ((2, "outer"), (3, "inner")):
                for s, e, t in _chunks([f[column] for f in sentence]):
                    out.setdefault((k, s, e, t), set()).add(name)
        return out

    sides = {"reference": at_levels(reference), "predicted": at_levels(predicted)}
    for name in ("strict.csv", "overlap.csv", "errors.csv"):
        fields, rows = _read_csv(out / name)
        assert fields[-2:] == ["reference_level", "predicted_level"], name
        assert rows and all("_extra" not in row and None not in row.values() for row in rows), name
        for row in rows:
            for side, levels in sides.items():
                if not row[f"{side}_type"]:
                    assert row[f"{side}_level"] == "", (name, row)
                    continue
                key = (int(row["sentence"]), int(row[f"{side}_start"]), int(row[f"{side}_end"]), row[f"{side}_type"])
                assert row[f"{side}_level"] in levels[key], (name, row)
    _, strict = _read_csv(out / "strict.csv")
    assert len(strict) == data["metrics"]["strict"]["full"]
    _, errors = _read_csv(out / "errors.csv")
    missed = Counter(row["reference_level"] for row in errors if row["error"] == "false_negative")
    assert sum(missed.values()) == data["errors"]["false_negative"] > 0
    assert set(missed) == {"outer", "inner"}
    spurious = [row for row in errors if row["error"] == "false_positive"]
    assert len(spurious) == data["errors"]["false_positive"] > 0
    assert all(row["reference_level"] == "" and row["predicted_level"] for row in spurious)


def test_report_rows_of_jsonl_levels_name_them(tmp_path: Path) -> None:
    text = "Bank of Berlin"
    org, loc = {"start": 0, "end": 14, "label": "ORG"}, {"start": 8, "end": 14, "label": "LOC"}
    gold = {"id": "a", "text": text, "spans": [{**org, "level": "top"}, {**loc, "level": "nested"}]}
    pred = {"id": "a", "text": text, "spans": [{**org, "level": "top"}, {**loc, "level": "top"}]}
    (tmp_path / "g.jsonl").write_text(json.dumps(gold) + "\n", encoding="utf-8")
    (tmp_path / "p.jsonl").write_text(json.dumps(pred) + "\n", encoding="utf-8")
    out = tmp_path / "report"
    args = ["evaluate", str(tmp_path / "g.jsonl"), str(tmp_path / "p.jsonl"), "--format", "jsonl",
            "--levels", "top,nested", "--report", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    _, rows = _read_csv(out / "strict.csv")
    assert sorted((r["reference_text"], r["reference_level"], r["predicted_level"]) for r in rows) == [
        ("Bank of Berlin", "top", "top"), ("Berlin", "nested", "top")]


def test_report_rows_without_levels_have_no_level_columns(tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = ["evaluate", str(GERMEVAL), str(GERMEVAL), "--token-column", "1", "--label-column", "2"]
    args += ["--report", str(out)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    for name in ("strict.csv", "errors.csv"):
        fields, _ = _read_csv(out / name)
        assert "reference_level" not in fields and fields[-1] == "context"


def test_report_rows_with_levels_are_the_same_whatever_the_chunks_and_workers(germeval_pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    reference, predicted, _ = germeval_pair
    base = ["evaluate", str(reference), str(predicted), "--token-column", "1", "--levels", "2,3"]
    folders = []
    for k, more in enumerate((["--jobs", "1"], ["--jobs", "2", "--chunk-size", "3000"])):
        folders.append(tmp_path / f"r{k}")
        result = CliRunner().invoke(cli, [*base, *more, "--report", str(folders[-1])])
        assert result.exit_code == 0, result.output
    for name in ("strict.csv", "overlap.csv", "errors.csv", "right_label_overlap.csv"):
        assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes(), name


# Review items: each side's level, stored and served to the page.


def test_review_items_carry_each_sides_level(germeval_pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("sqlalchemy")
    from spanscore.review import Store, items_from_run
    from spanscore.review.server import ReviewApp

    reference, predicted, _ = germeval_pair
    reading = spanscore.Reading(token_column=1, levels=(2, 3))
    items = items_from_run(reference, predicted, reading)
    assert items and all(it.gold_level in ("outer", "inner") and it.pred_level in ("outer", "inner") for it in items)
    # An independent check: each item's gold mention is at its level in the reference's column.
    sentences = _sentences(reference)
    for it in items:
        assert it.unit is not None and it.gold_start is not None
        sentence = sentences[it.unit]
        column = 2 if it.gold_level == "outer" else 3
        chunk_texts = [" ".join(f[1] for f in sentence[s:e]) for s, e, _ in _chunks([f[column] for f in sentence])]
        assert it.gold_text in chunk_texts
    plain = items_from_run(reference, predicted, spanscore.Reading(token_column=1, label_column=2))
    assert all(it.gold_level is None and it.pred_level is None for it in plain)
    # An item without levels keeps the key it had before items had levels (stores made then match).
    import dataclasses
    import hashlib

    new_fields = ("probability", "gold_level", "pred_level", "gold_fragments", "pred_fragments")
    old = {k: v for k, v in dataclasses.asdict(plain[0]).items() if k not in new_fields}
    assert plain[0].key() == hashlib.sha256(json.dumps(old, sort_keys=True).encode("utf-8")).hexdigest()
    assert items[0].key() != dataclasses.replace(items[0], gold_level=None, pred_level=None).key()

    store = Store(str(tmp_path / "r.db"))
    store.create_task("levels", "goodbad", items)
    token = store.add_reviewer("r0")
    status, body = ReviewApp(store).handle("GET", "/api/next", {"authorization": f"Bearer {token}"}, b"")
    assert status == 200
    item = body["item"]
    assert (item["reference"]["level"], item["predicted"]["level"]) == (items[0].gold_level, items[0].pred_level)
    page = Path(spanscore.__file__).parent / "review" / "page" / "review.js"
    assert "item.reference.level" in page.read_text(encoding="utf-8")  # the page shows it beside the label


def test_a_store_made_before_levels_is_migrated_and_serves_its_items(tmp_path: Path) -> None:
    sa = pytest.importorskip("sqlalchemy")
    from alembic import command
    from alembic.config import Config

    from spanscore.review import Store
    from spanscore.review.server import ReviewApp

    db = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    config = Config()
    config.set_main_option("script_location", "spanscore.review:migrations")
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        connection.execute(sa.text("INSERT INTO tasks (id, name, scale, created) VALUES (1, 'old', 'goodbad', 0)"))
        connection.execute(sa.text(
            "INSERT INTO items (task_id, key, position, criterion, sentence, gold_text, gold_label, pred_text,"
            " pred_label, credit) VALUES (1, 'k', 0, 'overlap', 'Bank of Berlin', 'Bank of Berlin', 'ORG', 'Bank',"
            " 'ORG', 0.5)"
        ))
    engine.dispose()
    store = Store(str(db))
    token = store.add_reviewer("r0")
    status, body = ReviewApp(store).handle("GET", "/api/next", {"authorization": f"Bearer {token}"}, b"")
    assert status == 200 and body["item"]["reference"] == {"text": "Bank of Berlin", "label": "ORG", "start": None,
                                                           "end": None}


def test_pair_rows_have_the_report_files_level_columns(germeval_pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from spanscore.presentation import ReportWriter

    reference, predicted, _ = germeval_pair
    writer = ReportWriter(tmp_path / "report")
    report = spanscore.evaluate(reference=reference, predicted=predicted, token_column=1, levels=(2, 3), rows=writer)
    writer.finish(report)
    for criterion in ("strict", "overlap"):
        fields, rows = _read_csv(tmp_path / "report" / f"{criterion}.csv")
        ours = [{k: str(v) for k, v in row.items()} for row in report.pair_rows(criterion)]
        assert list(ours[0]) == fields
        assert ours == rows, criterion


@pytest.mark.parametrize("target", ["docbin", "webanno", "brat"])
def test_converting_jsonl_levels_to_a_format_without_levels_is_refused(target: str, tmp_path: Path) -> None:
    if target == "docbin":
        pytest.importorskip("spacy")
    org, loc = {"start": 0, "end": 14, "label": "ORG"}, {"start": 8, "end": 14, "label": "LOC"}
    doc = {"id": "a", "text": "Bank of Berlin", "spans": [{**org, "level": "outer"}, {**loc, "level": "inner"}]}
    (tmp_path / "a.jsonl").write_text(json.dumps(doc) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["convert", str(tmp_path / "a.jsonl"), "--from", "JSONL", "--to", target, "-o", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "a.jsonl:1" in result.output and "span 0 is at level 'outer'" in result.output
    assert not out.exists()
    result = CliRunner().invoke(cli, [*args, "--levels", "outer,inner"])
    assert result.exit_code == 2 and "the annotation formats have none" in result.output


# A spaCy DocBin's span groups as levels.


def _docbin_from_jsonl(jsonl: Path, out: Path, spacy: Any) -> None:
    """Each JSONL document as a Doc of its words, each level's mentions in the span group named
    after it (written by spaCy itself)."""
    from spacy.tokens import Doc, DocBin

    vocab = spacy.vocab.Vocab()
    docbin = DocBin(store_user_data=True)
    for line in jsonl.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        words = d["text"].split(" ")
        doc = Doc(vocab, words=words, spaces=[True] * (len(words) - 1) + [False])
        for level in ("outer", "inner"):
            spans = [doc.char_span(s["start"], s["end"], label=s["label"]) for s in d["spans"] if s["level"] == level]
            assert all(span is not None for span in spans)
            doc.spans[level] = spans
        docbin.add(doc)
    docbin.to_disk(out)


def test_docbin_span_groups_as_levels_score_as_jsonl_levels(germeval_pair, germeval_jsonl, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spacy = pytest.importorskip("spacy")
    gold, pred = tmp_path / "gold.spacy", tmp_path / "pred.spacy"
    _docbin_from_jsonl(germeval_jsonl[0], gold, spacy)
    _docbin_from_jsonl(germeval_jsonl[1], pred, spacy)
    docbin = spanscore.evaluate(reference=gold, predicted=pred, format="docbin", levels=("outer", "inner"))
    jsonl = spanscore.evaluate(reference=germeval_jsonl[0], predicted=germeval_jsonl[1], format="jsonl",
                               levels=("outer", "inner"))
    conll = spanscore.evaluate(reference=germeval_pair[0], predicted=germeval_pair[1], token_column=1, levels=(2, 3))
    assert docbin.levels == jsonl.levels
    assert docbin.metrics == jsonl.metrics
    assert docbin.levels is not None and conll.levels is not None
    assert docbin.levels["germeval"] == conll.levels["germeval"]
    assert docbin.to_dict()["read"]["reference"]["skipped"] == {}  # every group read, no entity left out
    one = spanscore.evaluate(reference=gold, predicted=pred, format="docbin", reference_options={"spans_key": "inner"},
                             predicted_options={"spans_key": "inner"})
    assert one.metrics == docbin.levels["inner"]["metrics"]  # a level alone is its span group read alone
    for name, pair in (("docbin", (gold, pred)), ("jsonl", germeval_jsonl)):
        args = ["evaluate", *map(str, pair), "--format", name, "--levels", "outer,inner"]
        result = CliRunner().invoke(cli, [*args, "--report", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    for name in ("strict.csv", "errors.csv"):  # the same rows, each side's level included
        assert (tmp_path / "docbin" / name).read_bytes() == (tmp_path / "jsonl" / name).read_bytes()
    _, rows = _read_csv(tmp_path / "docbin" / "strict.csv")
    assert {r["reference_level"] for r in rows} == {"outer", "inner"}

#!/usr/bin/env python3
"""Locating mentions given as strings (LLM output): time and memory (a script, not a test).

    python bench/strings_bench.py                          # 10,000 documents, 10 mentions, 10 hallucinations
    python bench/strings_bench.py --before 92fd46d         # and the locator of that revision, on a sample

A synthetic corpus, the same bytes for a given seed: ``--docs`` documents of about ``--words`` words,
each with ``--mentions`` reference mentions (people, places, organisations; some names with accents)
and a strings file giving, per document, the mentions as a model would (most exactly; some lower
case with a full stop, some in NFD, some paraphrased) and ``--hallucinations`` names found nowhere.

Measured, best of ``--repeat``:

- ``locate`` in this process over the whole corpus (the step this script is about);
- ``spanscore evaluate GOLD LLM --predicted-format strings --json`` as a separate process, end to
  end (start, reading, locating, scoring, output), with ``--locate`` fuzzy (the default),
  normalised and exact: wall and CPU seconds, peak RSS;
- two worst cases of the locator before it indexed the text: one name given 1,200 times, and
  2,000 strings found nowhere in a 400-word document.

``--before REV`` also runs the locator of an earlier revision (``src/spanscore/io/strings.py`` at
REV, loaded beside this one) on the first ``--before-docs`` documents, the two alternated so
that both meet the same load (wall and CPU seconds), and on the worst cases, and counts the
documents both place alike within the texts. Writes STRINGS.json and STRINGS.md to ``--out`` (default bench/out/,
which git ignores).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import types
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from run_bench import BIN, compile_bytecode, run_once  # noqa: E402

from spanscore.io.document import Document  # noqa: E402
from spanscore.io.strings import StringDoc, read_strings  # noqa: E402

_COMMON = (
    "the of and to in a is that for on was with as by at from it his an were are which be this has had not but"
    " also its after new first two year years government people said would been more city time over state"
    " during when into some could them other than these there their about most only made later while since"
    " report minister company market team season police court council election week news percent plan"
)
WORDS = tuple(_COMMON.split(" "))
FIRST = ("Anna", "Marco", "Li", "Fatima", "John", "Sofia", "Kenji", "Olga", "Pedro", "Amara", "José", "Zoë", "Björn",
         "Chloé", "Ngozi", "Ravi", "Hannah", "Tomás", "Yusuf", "Elena")
LAST = ("Smith", "Rossi", "Wei", "Khan", "García", "Müller", "Tanaka", "Ivanova", "Silva", "Okafor", "Nowak",
        "Dubois", "Lindström", "Haddad", "Kowalski", "Brown", "Novak", "O'Neill", "Fischer", "Costa")
PLACES = ("Berlin", "São Paulo", "New York", "Zürich", "Lagos", "Osaka", "Kraków", "Montréal", "Cape Town", "Lyon",
          "Bogotá", "Reykjavík", "Nairobi", "Seville", "Hanoi", "Perth", "Quito", "Tbilisi", "Oslo", "Cork")
ORGS = ("Acme Corp", "U.S. Senate", "World Bank", "Red Cross", "Nordic Air", "Global Foods Ltd.", "City Council",
        "Apex Labs", "Union Rail", "Blue Harbor Inc.")
HALLUCINATED = ("Victor Hale", "Imani Brooks", "Felix Ortega", "Mira Sandoval", "Quentin Marsh", "Delphine Ruiz",
                "Harlow Institute", "Eastbridge", "Pelican Bay", "Norvane Group", "Isolde Crane", "Tobias Wren")


def corpus(docs: int, mentions: int, hallucinations: int, words: int, seed: int) -> tuple[list[Any], list[Any]]:
    """Reference documents ({"id", "text", "spans"}) and strings lines ({"id", "mentions"})."""
    rng = random.Random(seed)
    gold, llm = [], []
    for k in range(docs):
        names = []
        for _ in range(mentions):
            kind = rng.random()
            if kind < 0.5:
                names.append((f"{rng.choice(FIRST)} {rng.choice(LAST)}", "PER"))
            elif kind < 0.8:
                names.append((rng.choice(PLACES), "LOC"))
            else:
                names.append((rng.choice(ORGS), "ORG"))
        slots = sorted(rng.sample(range(words), mentions))
        pieces: list[str] = []
        spans = []
        length = 0
        name_at = dict(zip(slots, names, strict=True))
        for w in range(words):
            piece = name_at[w][0] if w in name_at else rng.choice(WORDS)
            if pieces:
                length += 1
            if w in name_at:
                spans.append({"start": length, "end": length + len(piece), "label": name_at[w][1]})
            pieces.append(piece)
            length += len(piece)
            if rng.random() < 0.08:
                pieces[-1] += rng.choice(",.;")
                length += 1
        text = " ".join(pieces)
        given = []
        for name, label in names:
            r = rng.random()
            if r < 0.7:
                shown = name
            elif r < 0.8:
                shown = name.lower() + "."
            elif r < 0.9:
                shown = unicodedata.normalize("NFD", name)
            else:
                shown = name.replace(".", "") if "." in name else name.split()[-1] + " " + name.split()[0]
            given.append({"text": shown, "label": label})
        for _ in range(hallucinations):
            given.append({"text": rng.choice(HALLUCINATED), "label": rng.choice(("PER", "LOC", "ORG"))})
        rng.shuffle(given)
        gold.append({"id": f"d{k}", "text": text, "spans": spans})
        llm.append({"id": f"d{k}", "mentions": given})
    return gold, llm


def write_lines(path: Path, rows: list[Any]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def documents(gold: list[Any]) -> list[Document]:
    return [Document(g["id"], g["text"], tuple((s["start"], s["end"], s["label"]) for s in g["spans"])) for g in gold]


CPU: list[float] = []  # the CPU seconds of each best() call's best run: on a shared machine, steadier than wall


def best(repeat: int, work: Callable[[], Any]) -> tuple[float, list[float], Any]:
    times, cpu, result = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        result = work()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    CPU.append(round(min(cpu), 3))
    return min(times), [round(x, 4) for x in times], result


def run_locate(module: Any, refs: list[Document], strings: list[Any]) -> dict[str, Any]:
    policy = module.StringPolicy()
    located = module.Located(policy)
    docs = [module.StringDoc(s.id, s.mentions, None, s.line) for s in strings]
    _, predicted = module.locate(refs, docs, policy, located)
    return {"located": located.to_dict(), "spans": [d.spans for d in predicted]}


def load_before(rev: str) -> types.ModuleType:
    """``io/strings.py`` of revision ``rev``, importable beside this one (its relative imports
    pointed at this tree's modules, which it shares)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:src/spanscore/io/strings.py"], capture_output=True, text=True,
        check=True,
    ).stdout
    source = source.replace("from ..", "from spanscore.").replace("from .", "from spanscore.io.")
    path = Path(tempfile.mkdtemp()) / "strings_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("strings_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["strings_before"] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def worst_cases() -> dict[str, tuple[list[Document], list[StringDoc]]]:
    rng = random.Random(7)
    text = " ".join(rng.choice(WORDS) if k % 20 else "Obama" for k in range(24_000))
    repeated = ([Document("r", text, ())], [StringDoc("r", [("Obama", "PER")] * 1200, None, 1)])
    text = " ".join(rng.choice(WORDS) for _ in range(400))
    nowhere = [(f"Someone Nobody{k}", "PER") for k in range(2000)]
    unfound = ([Document("u", text, ())], [StringDoc("u", nowhere, None, 1)])
    return {
        "one name given 1,200 times (1,200 occurrences)": repeated,
        "2,000 strings found nowhere, 400 words": unfound,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--mentions", type=int, default=10)
    ap.add_argument("--hallucinations", type=int, default=10)
    ap.add_argument("--words", type=int, default=150)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", help="a git revision whose locator to time too (on a sample)")
    ap.add_argument("--before-docs", type=int, default=200)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--no-evaluate", action="store_true", help="time the locator only, not the command line")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    compile_bytecode()
    gold, llm = corpus(args.docs, args.mentions, args.hallucinations, args.words, args.seed)
    gold_path = write_lines(args.out / f"strings-{args.docs}.gold.jsonl", gold)
    llm_path = write_lines(args.out / f"strings-{args.docs}.llm.jsonl", llm)
    refs = documents(gold)
    strings = list(read_strings(str(llm_path)))
    n_strings = sum(len(s.mentions) for s in strings)
    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "corpus": {"documents": args.docs, "words": args.words, "mentions": args.mentions,
                   "hallucinations": args.hallucinations, "strings": n_strings, "seed": args.seed,
                   "gold_mb": round(gold_path.stat().st_size / 1e6, 1),
                   "llm_mb": round(llm_path.stat().st_size / 1e6, 1)},
        "load1": round(os.getloadavg()[0], 2),
    }
    this = sys.modules["spanscore.io.strings"]
    seconds, runs, found = best(args.repeat, lambda: run_locate(this, refs, strings))
    results["locate"] = {"s": round(seconds, 3), "cpu_s": CPU[-1],
                         "runs": runs, "per_document_ms": round(seconds / args.docs * 1e3, 3),
                         "strings_per_s": round(n_strings / seconds), "located": found["located"]}
    counts = {k: v for k, v in found["located"].items() if k != "examples"}
    print(f"locate, {args.docs} documents, {n_strings} strings: {seconds:.2f} s ({runs}) {counts}")
    results["evaluate"] = {}
    for how in () if args.no_evaluate else ("fuzzy", "normalised", "exact"):
        cmd = [str(BIN / "spanscore"), "evaluate", str(gold_path), str(llm_path), "--predicted-format", "strings",
               "--locate", how, "--json"]
        timed = [run_once(f"spanscore --locate {how}", cmd) for _ in range(args.repeat)]
        top = min(timed, key=lambda r: r["wall_s"])
        results["evaluate"][how] = {**top, "runs": [r["wall_s"] for r in timed]}
        print(f"evaluate --locate {how}: {top['wall_s']:.2f} s wall, {top['cpu_s']:.2f} cpu s, {top['rss_mb']} MB"
              f" ({[r['wall_s'] for r in timed]})")
    before = load_before(args.before) if args.before else None
    results["worst"] = {}
    for name, (w_refs, w_strings) in worst_cases().items():
        seconds, runs, _ = best(args.repeat, lambda w_refs=w_refs, w_strings=w_strings: run_locate(this, w_refs,
                                                                                                  w_strings))
        row: dict[str, Any] = {"s": round(seconds, 4), "runs": runs}
        if before is not None:
            old, _, _ = best(1, lambda w_refs=w_refs, w_strings=w_strings: run_locate(before, w_refs, w_strings))
            row["before_s"] = round(old, 3)
        results["worst"][name] = row
        print(f"{name}: {row}")
    if before is not None:
        sample_refs, sample_strings = refs[: args.before_docs], strings[: args.before_docs]
        # Alternated, so that both meet the same load.
        old = new = float("inf")
        old_cpu = new_cpu = float("inf")
        for _ in range(args.repeat):
            t, _, old_found = best(1, lambda: run_locate(before, sample_refs, sample_strings))
            old, old_cpu = min(old, t), min(old_cpu, CPU[-1])
            t, _, new_found = best(1, lambda: run_locate(this, sample_refs, sample_strings))
            new, new_cpu = min(new, t), min(new_cpu, CPU[-1])
        # Within the texts: strings found nowhere are appended after them, in an order of their own.
        def inside(spans: Any, k: int) -> list[Any]:
            return [sp for sp in spans[k] if sp[1] <= len(sample_refs[k].text)]

        same = sum(inside(old_found["spans"], k) == inside(new_found["spans"], k) for k in range(len(sample_refs)))
        results["before"] = {"revision": args.before, "documents": len(sample_refs),
                             "before_s": round(old, 3), "after_s": round(new, 4),
                             "before_cpu_s": old_cpu, "after_cpu_s": new_cpu,
                             "before_per_document_ms": round(old / len(sample_refs) * 1e3, 2),
                             "after_per_document_ms": round(new / len(sample_refs) * 1e3, 3),
                             "before_located": old_found["located"], "after_located": new_found["located"],
                             "documents_placed_alike": same}
        print(f"before ({args.before}) on {len(sample_refs)} documents: {old:.2f} s ({old_cpu} CPU s); after:"
              f" {new:.3f} s ({new_cpu} CPU s); documents placed alike: {same}")
    (args.out / "STRINGS.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    (args.out / "STRINGS.md").write_text(markdown(results))
    print(markdown(results))


def markdown(r: dict[str, Any]) -> str:
    c = r["corpus"]
    lines = [
        f"{c['documents']:,} documents of {c['words']} words, {c['mentions']} mentions and {c['hallucinations']}"
        f" hallucinations each ({c['strings']:,} strings; {c['gold_mb']} MB reference, {c['llm_mb']} MB strings),"
        f" {r['machine']}, load {r['load1']}",
        "",
        "| step | best (s) | runs (s) | CPU s | peak RSS MB |",
        "|---|---:|---|---:|---:|",
        f"| `locate` in process | {r['locate']['s']:.2f} | {', '.join(map(str, r['locate']['runs']))} |"
        f" {r['locate']['cpu_s']:.2f} | |",
    ]
    for how, e in r["evaluate"].items():
        lines.append(f"| `evaluate --locate {how} --json` (a process) | {e['wall_s']:.2f} |"
                     f" {', '.join(map(str, e['runs']))} | {e['cpu_s']:.2f} | {e['rss_mb']:.0f} |")
    found = {k: v for k, v in r["locate"]["located"].items() if k not in ("policy", "examples")}
    lines += ["", f"Located ({r['locate']['located']['policy']}): {found}", ""]
    lines += ["| worst case | after (s) | before (s) |", "|---|---:|---:|"]
    for name, w in r["worst"].items():
        lines.append(f"| {name} | {w['s']:.4f} | {w.get('before_s', '')} |")
    if "before" in r:
        b = r["before"]
        lines += ["", f"Before ({b['revision']}), first {b['documents']} documents: {b['before_s']} s,"
                      f" {b['before_cpu_s']} CPU s ({b['before_per_document_ms']} ms a document); after:"
                      f" {b['after_s']} s, {b['after_cpu_s']} CPU s ({b['after_per_document_ms']} ms); documents"
                      f" placed alike: {b['documents_placed_alike']}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

"""Sample files to try every command on: a small gold/prediction pair and the same run in every
format spanscore reads.

The pair is 18 sentences in three documents (news, tweets, science; each with a ``# source``
comment) written for spanscore and released with it under the MIT licence, annotated with PER,
ORG, LOC and MISC; the prediction makes the errors a tagger makes (a boundary one token short or
long, a mention split in two, a wrong type, a miss, a spurious mention), so that every criterion
gives a different score. alt.conll is another system's run (every fourth mention one token short,
every fifth of another type, every seventh missed), for comparisons.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     names = [p.name for p in write_samples(folder)]
>>> names[:5]
['gold.conll', 'pred.conll', 'alt.conll', 'gold.jsonl', 'pred.jsonl']
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from ..errors import OptionError
from ..io import formats
from ..io.document import Document
from ..io.files import write_atomic
from ..io.jsonl import read_jsonl
from ..io.reading import Reading
from .corpus import convert

# Annotation formats written for both sides (Hugging Face datasets need the extra: left out).
FORMATS = ("brat", "doccano", "prodigy", "label-studio")


def _sample(name: str) -> bytes:
    return resources.files("spanscore.programs").joinpath("sample_data", name).read_bytes()


def write_samples(folder: str | Path) -> list[Path]:
    """Write the samples into ``folder`` (new, or empty) and return what was written:
    gold.conll and pred.conll, alt.conll (another system's run, to compare), the pair as JSONL,
    one folder per annotation format (brat/gold and brat/pred; doccano/, prodigy/ and
    label-studio/ gold and pred files), llm.jsonl: the prediction's mentions as strings, as a
    language model would give them, llm/ (gold.jsonl, llm.jsonl): a language model's output
    with every slip that locating and its error classes tell apart, and discontinuous/ (gold and
    pred): BRAT folders with discontinuous mentions."""
    out = Path(folder)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OptionError(f"{out}: give a new or empty folder for the samples")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for side in ("gold", "pred", "alt"):
        path = out / f"{side}.conll"
        write_atomic(path, _sample(f"{side}.conll"))
        written.append(path)
    docs = {}
    for side in ("gold", "pred"):
        path = out / f"{side}.jsonl"
        convert(out / f"{side}.conll", path, Reading(), target="JSONL")
        docs[side] = read_jsonl(path)
        written.append(path)
    for name in FORMATS:
        for side in ("gold", "pred"):
            options = {"source": "predictions"} if name == "label-studio" and side == "pred" else {}
            suffix = {"brat": "", "label-studio": ".json"}.get(name, ".jsonl")
            path = out / name / f"{side}{suffix}"
            path.parent.mkdir(exist_ok=True)
            formats.write(name, docs[side], path, **options)
            written.append(path)
    strings = "".join(
        json.dumps({"id": d.id, "mentions": [{"text": d.text[s:e], "label": t} for s, e, t in d.spans]}) + "\n"
        for d in docs["pred"]
    )
    path = out / "llm.jsonl"
    write_atomic(path, strings.encode("utf-8"))
    written.append(path)
    # A language model's output that takes every step of locating and falls in every class of
    # what goes wrong (docs/formats.md's worked example), with its reference.
    (out / "llm").mkdir()
    for name, sample in (("gold.jsonl", "llm-gold.jsonl"), ("llm.jsonl", "llm-strings.jsonl")):
        path = out / "llm" / name
        write_atomic(path, _sample(sample))
        written.append(path)
    # Discontinuous mentions in BRAT (docs/nested.md's worked example): a prediction that joins
    # "left … knee" into its extent, the rest exact.
    sample = json.loads(_sample("discontinuous.json"))
    for side in ("gold", "pred"):
        docs_ = [
            Document(
                d["id"],
                d["text"],
                tuple((m["fragments"][0][0], m["fragments"][-1][1], m["label"]) for m in d["mentions"]),
                tuple(tuple(map(tuple, m["fragments"])) if len(m["fragments"]) > 1 else None for m in d["mentions"]),
            )
            for d in sample[side]
        ]
        path = out / "discontinuous" / side
        path.parent.mkdir(exist_ok=True)
        formats.write("brat", docs_, path)
        written.append(path)
    return written

"""Record Good/Bad verdicts on the BTC test partial matches through the review tool, end to end,
and export them: the held-out set that tests/test_judge_domains.py reads.

1. a review store (SQLite) with one Good/Bad task of the 107 partial (0.5-credit) overlap pairs of
   the founding paper's tagger on BTC test (seed-partial-matches/partial_test_overlap.csv, located
   in BTC test by tests/judge_domains.py), in that order;
2. a reviewer and their token (``spanscore review add-reviewer``);
3. the review server (``spanscore review serve``, a process of its own on a free port), and
   the verdicts through its HTTP API, as the review page sends them: ``GET /api/next`` for the next
   item, ``POST /api/judgements`` with the verdict (Good or Bad, tests/judge_domains.py's
   ``OWN_TEST_VERDICTS``, made under the paper's guidelines);
4. ``spanscore review export`` to JSONL (the judgements format ``spanscore judge`` reads).

    python tools/btc_review.py [--btc ../shared/data/btc] [-o tests/data/btc-review/btc-test-verdicts.jsonl]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from judge_domains import OWN_TEST_VERDICTS, btc_paper_judgements  # noqa: E402

from spanscore.review.store import BAD, GOOD, Item, Store  # noqa: E402

# the command line as the console script runs it, with this checkout's spanscore
CLI = (sys.executable, "-c", "from spanscore.cli.main import main; main()")
TASK = "btc-test-overlap"
REVIEWER = "judge34"


def spanscore(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], check=True, capture_output=True, text=True)


def call(base: str, token: str, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        out: dict[str, Any] = json.loads(response.read())
        return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--btc", type=Path, default=ROOT.parent / "shared" / "data" / "btc")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "tests/data/btc-review/btc-test-verdicts.jsonl")
    args = parser.parse_args()
    rows = btc_paper_judgements(args.btc / "test.txt", OWN_TEST_VERDICTS, "btc-test")
    items = [
        Item(
            criterion="overlap", sentence=str(r["sentence"]), gold_text=str(r["gold_text"]),
            gold_label=str(r["gold_label"]), gold_start=int(str(r["gold_start"])), gold_end=int(str(r["gold_end"])),
            pred_text=str(r["pred_text"]), pred_label=str(r["gold_label"]), pred_start=int(str(r["pred_start"])),
            pred_end=int(str(r["pred_end"])), credit=0.5, unit=int(str(r["sentence_index"])), source_id=str(r["id"]),
        )
        for r in rows
    ]
    verdict_of = {str(r["id"]): GOOD if good else BAD for r, (_, _, good) in zip(rows, OWN_TEST_VERDICTS, strict=True)}
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "review.db")
        _, added = Store(db).create_task(TASK, "goodbad", items)
        token = spanscore("review", "add-reviewer", REVIEWER, "--db", db).stdout.strip()
        server = subprocess.Popen(
            [*CLI, "review", "serve", "--db", db, "--port", "0"],
            stderr=subprocess.PIPE, text=True,
        )
        try:
            assert server.stderr is not None
            line = server.stderr.readline()
            found = re.search(r"on (http://[^ ]+/) ", line)
            if found is None:
                raise SystemExit(f"the review server did not start: {line}")
            base = found.group(1)
            judged = 0
            while (item := call(base, token, "GET", "api/next")["item"]) is not None:
                source = next(it.source_id for it in items if it.sentence == item["sentence"]
                              and it.gold_start == item["reference"]["start"]
                              and it.pred_start == item["predicted"]["start"]
                              and it.pred_end == item["predicted"]["end"])
                call(base, token, "POST", "api/judgements", {"item": item["id"], "verdict": verdict_of[str(source)]})
                judged += 1
            stats = call(base, token, "GET", "api/stats")
        finally:
            server.terminate()
            server.wait(timeout=30)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        spanscore("review", "export", "--db", db, "-o", str(args.output))
    good = sum(v == GOOD for v in verdict_of.values())
    print(f"{added} items, {judged} verdicts through the API ({good} Good, {judged - good} Bad); "
          f"stats {json.dumps(stats)[:200]}; exported to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

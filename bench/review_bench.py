#!/usr/bin/env python3
"""Latency of the review API with a large task (a script, not a test).

    python bench/review_bench.py --items 100000 --requests 2000 [--db postgresql://...]

Builds a store (a new SQLite file, or a new task in the database --db names) of ``--items``
items (the pairs of a small run, repeated as distinct sentences), serves it on loopback in this
process's threads, and times, from a client on one keep-alive connection,
``GET /api/next?after=POSITION`` (as the page asks, from the item just judged) then
``POST /api/judgements`` for ``--requests`` items in turn. Prints the 50th, 95th and 99th
percentiles in milliseconds.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from spanscore.io.reading import Reading
from spanscore.review import Store, items_from_run
from spanscore.review.server import ReviewApp, make_server, serve_in_thread

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--requests", type=int, default=2_000)
    ap.add_argument("--db", help="a database URL (default: a new SQLite file)")
    args = ap.parse_args()
    base = items_from_run(DATA / "small.gold.conll", DATA / "small.pred.conll", Reading(), type5=True)
    items = [
        replace(base[k % len(base)], unit=k, sentence=f"{base[k % len(base)].sentence} #{k}") for k in range(args.items)
    ]
    with tempfile.TemporaryDirectory() as folder:
        t0 = time.perf_counter()
        store = Store(args.db or Path(folder) / "review.db")
        name = f"bench-{time.time_ns()}"
        store.create_task(name, "goodbad", items)
        token = store.add_reviewer(name)
        print(f"{store.engine.dialect.name} store of {args.items} items built in {time.perf_counter() - t0:.1f} s")
        server = make_server(ReviewApp(store, name), "127.0.0.1", 0)
        serve_in_thread(server)
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as browsers do
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        times: dict[str, list[float]] = {"GET /api/next": [], "POST /api/judgements": []}
        after = 0
        for _ in range(args.requests):
            t = time.perf_counter()
            conn.request("GET", f"/api/next?after={after}", headers=headers)
            item = json.loads(conn.getresponse().read())["item"]
            times["GET /api/next"].append(1000 * (time.perf_counter() - t))
            after = item["position"]
            body = json.dumps({"item": item["id"], "verdict": 1})
            t = time.perf_counter()
            conn.request("POST", "/api/judgements", body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            assert response.status == 201
            times["POST /api/judgements"].append(1000 * (time.perf_counter() - t))
        server.shutdown()
        for name, values in times.items():
            q = statistics.quantiles(values, n=100)
            print(f"{name}: p50 {q[49]:.2f} ms, p95 {q[94]:.2f} ms, p99 {q[98]:.2f} ms over {len(values)} requests")


if __name__ == "__main__":
    main()

"""The review API on a real server on loopback: tokens, judgements, undo, stats, bad requests, and
eight reviewers posting at once."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import spanscore

pytest.importorskip("sqlalchemy")

from spanscore.io.reading import Reading
from spanscore.review import Store, items_from_run
from spanscore.review.server import MAX_BODY, ReviewApp, make_server, serve_in_thread

DATA = Path(__file__).resolve().parent / "data"
# The shipped samples: 8 pairs to judge, each answering one or more criteria.
SAMPLES = Path(spanscore.__file__).parent / "programs" / "sample_data"


@pytest.fixture()
def served(review_db: str) -> Iterator[tuple[int, Store, dict[str, str]]]:
    store = Store(review_db)
    items = items_from_run(SAMPLES / "gold.conll", SAMPLES / "pred.conll", Reading(), type5=True)
    store.create_task("small", "goodbad", items)
    tokens = {f"r{k}": store.add_reviewer(f"r{k}") for k in range(8)}
    server = make_server(ReviewApp(store), "127.0.0.1", 0)
    serve_in_thread(server)
    try:
        yield server.server_address[1], store, tokens
    finally:
        server.shutdown()
        server.server_close()


def call(
    port: int, method: str, path: str, token: str | None = None, body: Any = None, raw: bytes | None = None
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    payload = json.loads(response.read() or b"null")
    conn.close()
    return response.status, payload


def test_a_reviewer_judges_undoes_and_sees_stats(served: tuple[int, Store, dict[str, str]]) -> None:
    port, _, tokens = served
    t = tokens["r0"]
    status, first = call(port, "GET", "/api/next", t)
    assert status == 200 and first["item"]["position"] == 1 and (first["judged"], first["total"]) == (0, 8)
    assert first["item"]["sentence"][first["item"]["reference"]["start"] : first["item"]["reference"]["end"]]
    status, made = call(port, "POST", "/api/judgements", t, {"item": first["item"]["id"], "verdict": 1})
    assert status == 201 and made["item"] == first["item"]["id"]
    status, second = call(port, "GET", "/api/next", t)
    assert second["item"]["id"] != first["item"]["id"] and second["judged"] == 1
    status, undone = call(port, "POST", "/api/undo", t)
    assert status == 200 and undone["undone"] == first["item"]["id"]
    assert call(port, "GET", "/api/next", t)[1]["item"]["id"] == first["item"]["id"]  # to judge again
    only_left = call(port, "GET", "/api/next?criterion=left", t)[1]
    assert "left" in only_left["item"]["criterion"].split(",") and only_left["total"] == 5
    by_type = call(port, "GET", "/api/next?type=ORG", t)[1]
    assert by_type["item"]["reference"]["label"] == "ORG"
    for _ in range(8):
        item = call(port, "GET", "/api/next", t)[1]["item"]
        assert call(port, "POST", "/api/judgements", t, {"item": item["id"], "verdict": 0})[0] == 201
    assert call(port, "GET", "/api/next", t)[1]["item"] is None
    status, table = call(port, "GET", "/api/stats", t)
    assert status == 200 and table["criteria"]["overlap"]["judged"] == 8
    history = call(port, "GET", "/api/history", t)[1]["history"]
    assert len(history) == 8 and history[0]["name"] == "Bad"


def test_tokens_are_required_and_reveal_nothing(served: tuple[int, Store, dict[str, str]]) -> None:
    port, _, tokens = served
    for token in (None, "", "wrong", tokens["r0"] + "x"):
        for method, path in (
            ("GET", "/api/next"),
            ("POST", "/api/judgements"),
            ("POST", "/api/undo"),
            ("GET", "/api/stats"),
        ):
            status, payload = call(port, method, path, token, {"item": 1, "verdict": 1})
            assert status == 401 and set(payload) == {"error"}


def test_bad_requests_get_a_4xx_with_a_json_error(served: tuple[int, Store, dict[str, str]]) -> None:
    port, _, tokens = served
    t = tokens["r1"]
    cases: list[tuple[str, str, Any, bytes | None, int]] = [
        ("POST", "/api/judgements", None, b"{not json", 400),
        ("POST", "/api/judgements", None, b"[1, 2]", 400),
        ("POST", "/api/judgements", {"item": "1", "verdict": 1}, None, 400),
        ("POST", "/api/judgements", {"item": 10**6, "verdict": 1}, None, 404),
        ("POST", "/api/judgements", {"item": 1, "verdict": 7}, None, 400),
        ("POST", "/api/judgements", None, b"x" * (MAX_BODY + 1), 413),
        ("GET", "/api/nothing", None, None, 404),
        ("GET", "/../../etc/passwd", None, None, 404),
        ("POST", "/api/next", {}, None, 405),
        # Once each a crash (no answer): past the store's integers, nested past the parser's
        # recursion, and digits that int() takes but are not ASCII.
        ("POST", "/api/judgements", {"item": 2**64, "verdict": 1}, None, 400),
        ("POST", "/api/judgements", {"item": 2**31, "verdict": 1}, None, 404 if served[1].int_max > 2**31 else 400),
        ("POST", "/api/judgements", None, b"[" * (MAX_BODY - 1), 400),
        ("GET", f"/api/next?after={2**64}", None, None, 400),
        ("GET", "/api/next?after=%D9%A1%D9%A2", None, None, 400),
        ("GET", "/api/next?after=%C2%B2", None, None, 400),
        ("POST", "/api/judgements", {"item": True, "verdict": 1}, None, 400),
        ("POST", "/api/judgements", {"item": 1, "verdict": True}, None, 400),
        ("POST", "/api/judgements", {"item": 1, "verdict": 1, "extra": 0}, None, 400),
    ]
    for method, path, body, raw, expected in cases:
        status, payload = call(port, method, path, t, body, raw)
        assert status == expected, (path, body, raw[:20] if raw else None, status, payload)
        assert isinstance(payload, dict) and "error" in payload
    assert call(port, "GET", "/api/next", t)[0] == 200  # still serving


def test_eight_reviewers_at_once_lose_nothing(served: tuple[int, Store, dict[str, str]]) -> None:
    port, store, tokens = served
    errors: list[str] = []

    def review(token: str) -> None:
        while True:
            item = call(port, "GET", "/api/next", token)[1]["item"]
            if item is None:
                return
            status, _ = call(port, "POST", "/api/judgements", token, {"item": item["id"], "verdict": item["id"] % 2})
            if status != 201:
                errors.append(f"{status}")

    threads = [threading.Thread(target=review, args=(t,)) for t in tokens.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    task = store.task()
    verdicts = store.verdicts(task.id)
    assert len(verdicts) == 8 * 8  # every acknowledged judgement is there, once per reviewer and item
    assert {(v.reviewer, v.id) for v in verdicts} == {
        (name, it.id) for name in tokens for it in store.items_of(task.id)
    }


def test_a_killed_server_loses_no_acknowledged_judgement(review_db: str) -> None:
    import os
    import re
    import signal
    import subprocess
    import sys

    db = review_db
    store = Store(db)
    store.create_task("small", "goodbad", items_from_run(SAMPLES / "gold.conll", SAMPLES / "pred.conll", Reading()))
    token = store.add_reviewer("ann")

    def start() -> tuple[subprocess.Popen[str], int]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "spanscore.cli.main", "review", "serve", "--db", str(db), "--port", "0"],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", proc.stderr.readline())
        assert found is not None
        return proc, int(found.group(1))

    proc, port = start()
    acknowledged = []
    for _ in range(3):
        item = call(port, "GET", "/api/next", token)[1]["item"]
        status, made = call(port, "POST", "/api/judgements", token, {"item": item["id"], "verdict": 1})
        assert status == 201
        acknowledged.append(made["item"])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    proc, port = start()
    try:
        assert call(port, "GET", "/api/next", token)[1]["judged"] == 3
        assert sorted(v.id for v in Store(db).verdicts(Store(db).task().id)) == sorted(acknowledged)
    finally:
        proc.kill()
        proc.wait(timeout=10)

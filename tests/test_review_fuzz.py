"""The review API under bad input, on a real server on loopback (a SQLite store): a seeded fuzz of
its bodies, query parameters and headers, and the requests that once crashed its handler.

Every request goes out as raw bytes on a socket, so the fuzz can send what an HTTP library would
refuse to (a non-ASCII request line, a lying Content-Length). The property: every request gets an
HTTP answer below 500, in JSON (the page's own files aside), the server goes on serving, and a
refused request leaves the store as it was.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("sqlalchemy")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spanscore.io.reading import Reading
from spanscore.review import Store, items_from_run
from spanscore.review.server import MAX_BODY, ReviewApp, make_server, serve_in_thread

DATA = Path(__file__).resolve().parent / "data"

# Derandomized and bounded: the same requests on every run, a few seconds in all.
FUZZ = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
PAGE = {"/", "/index.html", "/review.js", "/review.css"}
ROUTES = ["/api/next", "/api/judgements", "/api/undo", "/api/stats", "/api/history", "/api/task"]


class Served:
    def __init__(self, store: Store, port: int, token: str) -> None:
        self.store, self.port, self.token = store, port, token
        self.sent = 0

    def counts(self) -> tuple[int, ...]:
        sa = self.store.sa
        tables = (self.store.tasks, self.store.items, self.store.reviewers, self.store.judgements)
        with self.store.engine.connect() as db:
            current = db.execute(
                sa.select(sa.func.count()).where(self.store.judgements.c.superseded.is_(False))
            ).scalar_one()
            return (*(db.execute(sa.select(sa.func.count()).select_from(t)).scalar_one() for t in tables), current)

    def raw(self, request: bytes, method: str = "GET") -> tuple[int, str, bytes]:
        """Send ``request`` as it is; the answer's status, Content-Type and body."""
        self.sent += 1
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as sock:
            sock.sendall(request)
            response = http.client.HTTPResponse(sock, method=method)
            response.begin()
            return response.status, response.getheader("Content-Type", ""), response.read()

    def request(
        self,
        method: str,
        target: bytes | str,
        body: bytes = b"",
        headers: dict[str, str | None] | None = None,
        token: str | None = "valid",
    ) -> tuple[int, str, bytes]:
        lines = [
            method.encode("latin-1") + b" " + (target.encode() if isinstance(target, str) else target) + b" HTTP/1.1"
        ]
        lines.append(b"Host: 127.0.0.1")
        if token is not None:
            lines.append(b"Authorization: Bearer " + (self.token if token == "valid" else token).encode())
        fields = {"Content-Length": str(len(body)), **(headers or {})}  # None: the header left out
        lines += [f"{k}: {v}".encode() for k, v in fields.items() if v is not None]
        # A body over the limit is refused on its Content-Length alone, and the server closes without
        # reading it: sending it anyway could have the close reset the connection under the answer.
        return self.raw(b"\r\n".join(lines) + b"\r\n\r\n" + (body if len(body) <= MAX_BODY else b""), method)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    store = Store(tmp_path_factory.mktemp("fuzz") / "r.db")
    items = items_from_run(DATA / "small.gold.conll", DATA / "small.pred.conll", Reading(), type5=True)
    store.create_task("small", "goodbad", items)
    token = store.add_reviewer("fuzz")
    server = make_server(ReviewApp(store), "127.0.0.1", 0)
    serve_in_thread(server)
    try:
        yield Served(store, server.server_address[1], token)
    finally:
        server.shutdown()
        server.server_close()


def answered(served: Served, path: str, answer: tuple[int, str, bytes]) -> Any:
    """The property every answer has: a status below 500, and JSON (or one of the page's files)."""
    status, kind, body = answer
    assert 100 <= status < 500, (status, body[:200])
    if status == 200 and path in PAGE:
        return None
    assert kind.startswith("application/json"), (status, kind, body[:200])
    payload = json.loads(body)
    if status >= 400:
        assert set(payload) == {"error"} and isinstance(payload["error"], str) and payload["error"]
    return payload


def still_serving(served: Served) -> None:
    status, _, body = served.request("GET", "/api/next")
    assert status == 200 and "item" in json.loads(body)


# --- the fuzz ------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 2, -1, 2**31, 2**63 - 1, 2**63, 2**64, True, False, 1.0, 1.5, None, "1", [1], {"a": 1}]),
    json_values,
)
judgement_bodies = st.one_of(
    st.builds(lambda i, v: {"item": i, "verdict": v}, numbers, numbers),
    st.dictionaries(st.sampled_from(["item", "verdict", "extra", "Item", ""]), numbers, max_size=3),
    json_values,
).map(lambda value: json.dumps(value).encode())
raw_bodies = st.one_of(
    judgement_bodies,
    st.binary(max_size=64),
    st.integers(1, 3 * MAX_BODY).map(lambda n: b"[" * n),
    st.integers(1, 3000).map(lambda n: b'{"item":' * n),
    st.sampled_from(
        [
            b"NaN",
            b"Infinity",
            b'{"item": NaN, "verdict": 1}',
            b'{"item": 1, "item": 2, "verdict": 1}',
            b'{"item": 1, "verdict": 1}\xff',
            b"\xef\xbb\xbf{}",
            b'{"item": 1' + b"0" * 5000 + b', "verdict": 1}',
        ]
    ),
)
content_types = st.sampled_from(
    [
        None,
        "application/json",
        "application/json; charset=utf-8",
        "application/json; charset=latin-1",
        "text/plain",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
        "",
        ";;;",
        "\u00e9",
    ]
)
digits = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=6),  # ١٢, １２, ², ...
    st.sampled_from(["", " 1", "1 ", "+1", "1_0", "0x10", "1e3", "0" * 30 + "1", "9" * 5000, "١٢", "１２", "²"]),
    st.text(max_size=10),
)
texts = st.one_of(st.sampled_from(["left", "ORG", "", "\x00", "x" * 1000]), st.text(max_size=30))


@FUZZ
@given(body=raw_bodies, kind=content_types, path=st.sampled_from(["/api/judgements", "/api/undo"]))
def test_fuzzed_bodies_are_answered_and_refused_ones_change_nothing(
    served: Served, body: bytes, kind: str | None, path: str
) -> None:
    before = served.counts()
    answer = served.request("POST", path, body, {"Content-Type": kind} if kind is not None else {})
    payload = answered(served, path, answer)
    if answer[0] >= 400:
        assert served.counts() == before, payload
    elif path == "/api/judgements":
        assert answer[0] == 201 and served.counts()[3] == before[3] + 1
    else:
        served.request("POST", "/api/judgements", json.dumps({"item": payload["undone"] or 1, "verdict": 1}).encode())


@FUZZ
@given(
    params=st.lists(
        st.tuples(st.sampled_from(["after", "criterion", "type", "afer", "", "after[]"]), st.one_of(digits, texts)),
        max_size=3,
    ),
    route=st.sampled_from(ROUTES),
    encode=st.booleans(),
)
def test_fuzzed_query_parameters_are_answered(
    served: Served, params: list[tuple[str, str]], route: str, encode: bool
) -> None:
    before = served.counts()
    if encode:
        target = (route + "?" + "&".join(f"{quote(k)}={quote(v)}" for k, v in params)).encode()
    else:  # the bytes as they are, UTF-8 and all, as a careless client sends them
        query = "&".join(f"{k}={v}" for k, v in params).encode("utf-8", "surrogatepass")
        target = route.encode() + b"?" + bytes(b for b in query if b not in b" \r\n#")
    method = "POST" if route in ("/api/judgements", "/api/undo") else "GET"
    answer = served.request(method, target)
    answered(served, route, answer)
    if answer[0] >= 400:
        assert served.counts() == before


@FUZZ
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "FOO"]),
    path=st.one_of(
        st.sampled_from([*ROUTES, *PAGE, "/api", "/api/next/", "//api/next", "*", "http://[x"]),
        st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=20).map(lambda t: "/" + t),
    ),
    length=st.sampled_from([None, "0", "-1", "+5", "٥", "5, 5", "99999999999999999999", str(MAX_BODY + 1), "abc"]),
    token=st.sampled_from(["valid", None, "", "x", "\u00e9\u00e9"]),
)
def test_fuzzed_methods_paths_and_headers_are_answered(
    served: Served, method: str, path: str, length: str | None, token: str | None
) -> None:
    before = served.counts()
    # No body: every length given is refused before the body is read, or is "0" (or absent).
    answer = served.request(method, path, b"", {"Content-Length": length}, token)
    answered(served, path, answer)
    if answer[0] >= 400:
        assert served.counts() == before


def test_the_server_serves_after_the_fuzz(served: Served) -> None:
    still_serving(served)


# --- the requests that crashed the handler (no answer, a traceback in the log) ---------------------


def test_a_deeply_nested_body_is_refused_with_a_400(served: Served) -> None:
    before = served.counts()
    for body in (
        b"[" * 100_000,
        b"[" * (MAX_BODY - 1),
        b'{"a":' * 3000,
        b'{"item": [[[[[[[[[[1]]]]]]]]]], "verdict": 1}',
    ):
        status, _, text = served.request("POST", "/api/judgements", body)
        assert status in (400, 413), text
        assert "at most" in json.loads(text)["error"] or "nests deeper" in json.loads(text)["error"]
    assert served.counts() == before
    still_serving(served)


def test_an_id_of_2_to_the_64_is_refused_naming_the_field(served: Served) -> None:
    before = served.counts()
    for value in (2**64, 2**63, -1, 0, True, 1.0, "1", None):
        body = json.dumps({"item": value, "verdict": 1}).encode()
        status, _, text = served.request("POST", "/api/judgements", body)
        assert status == 400, (value, text)
        assert json.loads(text)["error"].startswith(
            "item is an item's id: a whole number from 1 to 9223372036854775807"
        )
    status, _, text = served.request("POST", "/api/judgements", json.dumps({"item": 1, "verdict": 2**64}).encode())
    assert status == 400 and json.loads(text)["error"].startswith("verdict must be one of 0, 1")
    status, _, text = served.request("GET", f"/api/next?after={2**64}")
    assert status == 400 and json.loads(text)["error"].startswith("after is an item's position")
    assert served.counts() == before
    still_serving(served)


@pytest.mark.parametrize("after", ["١٢", "１２", "²", "12\u0660", "-1", "+1", " 1"])
def test_a_non_ascii_digit_in_a_query_parameter_is_refused(served: Served, after: str) -> None:
    for target in (f"/api/next?after={quote(after)}".encode(), b"/api/next?after=" + after.replace(" ", "").encode()):
        status, _, text = served.request("GET", target)
        if after in ("+1", " 1") and b"%" not in target:
            continue  # "+" is a space in a query, and " 1" went out as "1": both mean other things raw
        assert status == 400, (target, text)
        assert "after is an item's position: a whole number in ASCII digits" in json.loads(text)["error"]
    still_serving(served)


def test_refusals_name_what_is_expected(served: Served) -> None:
    cases: list[tuple[str, str, bytes, dict[str, str | None], int, str]] = [
        ("POST", "/api/judgements", b'{"item": 1, "verdict": 1, "note": "x"}', {}, 400, 'unknown field "note"'),
        ("POST", "/api/judgements", b'{"item": 1}', {}, 400, 'the body needs "verdict"'),
        ("POST", "/api/judgements", b'{"item": 1, "item": 2, "verdict": 1}', {}, 400, 'gives "item" twice'),
        ("POST", "/api/judgements", b'{"item": 1, "verdict": "Good"}', {}, 400, "not a string"),
        ("POST", "/api/judgements", b'{"item": NaN, "verdict": 1}', {}, 400, "not JSON"),
        ("POST", "/api/judgements", b'{"item": 1, "verdict": 1}\xff', {}, 400, "not UTF-8"),
        ("POST", "/api/judgements", b'{"item": 1, "verdict": 1}', {"Content-Type": "text/plain"}, 415, "Content-Type"),
        ("POST", "/api/judgements", b"", {"Transfer-Encoding": "chunked"}, 411, "Content-Length"),
        ("POST", "/api/undo", b'{"item": 1}', {}, 400, "the body takes no fields"),
        ("GET", "/api/next?afer=3", b"", {}, 400, "unknown query parameter 'afer': /api/next takes only criterion"),
        ("GET", "/api/next?after=1&after=2", b"", {}, 400, "after is given twice"),
        ("GET", "/api/stats?x=1", b"", {}, 400, "/api/stats takes no query parameters"),
        ("GET", "/api/next?criterion=%00", b"", {}, 400, "criterion is a name"),
        ("PUT", "/api/next", b"", {}, 405, "no PUT /api/next"),
        ("FOO", "/api/next", b"", {}, 405, "no FOO here"),
    ]
    before = served.counts()
    for method, path, body, headers, expected, words in cases:
        status, kind, text = served.request(method, path, body, headers)
        assert status == expected and kind.startswith("application/json"), (path, body, status, text)
        assert words in json.loads(text)["error"], (path, body, text)
    status, _, text = served.request("POST", "/api/judgements", b"", {"Content-Length": "+25"})
    assert status == 400 and "Content-Length" in json.loads(text)["error"]
    assert served.counts() == before
    still_serving(served)

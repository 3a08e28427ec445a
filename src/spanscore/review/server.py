"""The review tool's JSON API, served by the standard library (threads, loopback by default).

Every request carries the reviewer's token as ``Authorization: Bearer TOKEN``; a missing or wrong
token gets 401 and nothing else. A judgement is answered 201 only once it is committed. Request
bodies are limited in size and nesting, ids and positions are ASCII digits within the store's
integers, no file path is ever taken from a request, and a malformed request gets a 4xx with a
JSON error naming the field or parameter, never a 500. The API is documented in docs/review.md.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..errors import OptionError, shorten
from .store import Store, verdict_names
from .summary import stats

MAX_BODY = 16 * 1024  # bytes: a judgement is a few dozen
MAX_DEPTH = 8  # nesting of a JSON body: a judgement is one flat object
MAX_TEXT = 200  # characters of a text parameter: the store's labels are at most this long
READ_TIMEOUT = 30  # seconds a client may take to send the body it announced

# The query parameters each route takes; any other is refused, so a misspelt one (?afer=3) is
# not silently ignored.
QUERY_PARAMETERS: dict[str, tuple[str, ...]] = {"/api/next": ("criterion", "type", "after")}
# Bodies are JSON. curl -d, as docs/review.md shows it, labels its body form-urlencoded, so that
# label is taken as JSON too; any other type is refused rather than misread.
BODY_TYPES = ("application/json", "application/x-www-form-urlencoded")


class ApiError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def item_json(row: Any, scale: str) -> dict[str, Any]:
    out = {
        "id": row.id,
        "position": row.position + 1,
        "criterion": row.criterion,
        "sentence": row.sentence,
        "reference": {"text": row.gold_text, "label": row.gold_label, "start": row.gold_start, "end": row.gold_end},
        "predicted": {"text": row.pred_text, "label": row.pred_label, "start": row.pred_start, "end": row.pred_end},
        "credit": row.credit,
        "probability": row.probability,
        "verdicts": verdict_names(scale),  # type: ignore[arg-type]
    }
    if row.gold_level is not None:  # each side's nesting level, where the run read levels
        out["reference"]["level"], out["predicted"]["level"] = row.gold_level, row.pred_level
    # A discontinuous side is marked fragment by fragment, never across its gaps.
    for side, fragments in (("reference", row.gold_fragments), ("predicted", row.pred_fragments)):
        if fragments is not None:
            out[side]["fragments"] = json.loads(fragments)
    return out


class ReviewApp:
    """The API over one task of a store; ``handle`` answers one request (method, path, headers, body)."""

    def __init__(self, store: Store, task_name: str | None = None) -> None:
        self.store = store
        self.task = store.task(task_name)

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            return self._route(method, target, headers, body)
        except ApiError as exc:
            return exc.status, {"error": exc.message}
        except OptionError as exc:
            return HTTPStatus.BAD_REQUEST, {"error": str(exc)}
        except self.store.sa.exc.SQLAlchemyError:
            # The database went away or is locked past its timeout: nothing was acknowledged, and
            # the client may try again.
            return HTTPStatus.SERVICE_UNAVAILABLE, {"error": "the review store is not available; try again"}

    def _reviewer(self, headers: dict[str, str]) -> Any:
        auth = headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(HTTPStatus.UNAUTHORIZED, "a reviewer's token is needed: Authorization: Bearer TOKEN")
        reviewer = self.store.reviewer_of(token.strip())
        if reviewer is None:
            raise ApiError(HTTPStatus.UNAUTHORIZED, "a reviewer's token is needed: Authorization: Bearer TOKEN")
        return reviewer

    def _route(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        try:
            url = urlsplit(target)
        except ValueError:
            raise ApiError(HTTPStatus.BAD_REQUEST, "the request's target is not a URL path") from None
        routes: dict[tuple[str, str], Callable[[Any, dict[str, str], bytes], tuple[int, dict[str, Any]]]] = {
            ("GET", "/api/next"): self._next,
            ("POST", "/api/judgements"): self._judge,
            ("POST", "/api/undo"): self._undo,
            ("GET", "/api/stats"): self._stats,
            ("GET", "/api/history"): self._history,
            ("GET", "/api/task"): self._task,
        }
        route = routes.get((method, url.path))
        if route is None:
            known = any(path == url.path for _, path in routes)
            status = HTTPStatus.METHOD_NOT_ALLOWED if known else HTTPStatus.NOT_FOUND
            raise ApiError(status, f"no {_cut(method, 20)} {_cut(url.path, 80)}")
        reviewer = self._reviewer(headers)
        query = _query(url.path, url.query)
        if method == "POST" and body:
            _check_body_type(headers.get("content-type"))
        return route(reviewer, query, body)

    def _next(self, reviewer: Any, query: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        after = query.get("after")
        position = None if after is None else _whole("after", after, 0, self.store.int_max, "an item's position")
        for name in ("criterion", "type"):
            _text(name, query.get(name, ""))
        row, judged, total = self.store.next_item(
            self.task.id,
            reviewer.id,
            criterion=query.get("criterion") or None,
            label=query.get("type") or None,
            after=None if position is None else position - 1,  # positions are shown from 1
        )
        item = None if row is None else item_json(row, self.task.scale)
        return HTTPStatus.OK, {"item": item, "judged": judged, "total": total, "task": self.task.name}

    def _judge(self, reviewer: Any, query: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        data = _json_body(body, ("item", "verdict"))
        for name in ("item", "verdict"):
            if name not in data:
                raise ApiError(HTTPStatus.BAD_REQUEST, f'the body needs "{name}": give {{"item": ID, "verdict": N}}')
        item_id = _json_int("item", data["item"], 1, self.store.int_max, "an item's id")
        allowed = tuple(verdict_names(self.task.scale))
        verdict = data["verdict"]
        if type(verdict) is not int or verdict not in allowed:
            choices = ", ".join(str(v) for v in sorted(allowed))
            raise ApiError(
                HTTPStatus.BAD_REQUEST,
                f"verdict must be one of {choices} on the {self.task.scale} scale, not {_shown(verdict)}",
            )
        row = self.store.item(item_id)
        if row is None or row.task_id != self.task.id:
            raise ApiError(HTTPStatus.NOT_FOUND, f"no item {item_id} in this task")
        judgement = self.store.judge(item_id, reviewer.id, verdict, scale=self.task.scale)
        return HTTPStatus.CREATED, {"judgement": judgement, "item": item_id, "verdict": verdict}

    def _undo(self, reviewer: Any, query: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        if body:
            _json_body(body, ())  # nothing to give: an empty body, or {}
        item_id = self.store.undo(self.task.id, reviewer.id)
        row = None if item_id is None else self.store.item(item_id)
        item = None if row is None else item_json(row, self.task.scale)
        return HTTPStatus.OK, {"undone": item_id, "item": item}

    def _task(self, reviewer: Any, query: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        names = verdict_names(self.task.scale)
        return HTTPStatus.OK, {
            "task": self.task.name,
            "scale": self.task.scale,
            "verdicts": {str(k): v for k, v in names.items()},
            "reviewer": reviewer.name,
            **self.store.facets(self.task.id),
        }

    def _stats(self, reviewer: Any, query: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        return HTTPStatus.OK, stats(self.store, self.task.name)

    def _history(self, reviewer: Any, query: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        names = verdict_names(self.task.scale)
        rows = self.store.history(self.task.id, reviewer.id)
        return HTTPStatus.OK, {
            "history": [
                {
                    "item": r.item_id,
                    "verdict": r.verdict,
                    "name": names.get(r.verdict),
                    "criterion": r.criterion,
                    "reference": r.gold_text,
                    "predicted": r.pred_text,
                }
                for r in rows
            ]
        }


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _query(path: str, text: str) -> dict[str, str]:
    """The query's parameters, each given at most once and each one the route takes."""
    accepted = QUERY_PARAMETERS.get(path, ())
    query: dict[str, str] = {}
    for name, value in parse_qsl(text, keep_blank_values=True, errors="replace"):
        if name not in accepted:
            takes = f"takes only {', '.join(accepted)}" if accepted else "takes no query parameters"
            raise ApiError(HTTPStatus.BAD_REQUEST, f"unknown query parameter {_cut(name, 40)!r}: {path} {takes}")
        if name in query:
            raise ApiError(HTTPStatus.BAD_REQUEST, f"the query parameter {name} is given twice: give it once")
        query[name] = value
    return query


def _whole(name: str, text: str, low: int, high: int, what: str) -> int:
    """A query parameter's whole number: ASCII digits only (``int`` would take ``١٢`` or a full-width
    ``１２``, and ``str.isdigit`` passes ``²``, which ``int`` refuses), within [low, high]."""
    if not text or not text.isascii() or not text.isdigit():
        raise ApiError(HTTPStatus.BAD_REQUEST, f"{name} is {what}: a whole number in ASCII digits, not {shorten(text)}")
    # Counting digits first: int() of thousands of digits is slow, or refused past Python's limit.
    if len(text.lstrip("0")) > len(str(high)) or not low <= int(text) <= high:
        raise ApiError(
            HTTPStatus.BAD_REQUEST, f"{name} is {what}: a whole number from {low} to {high}, not {shorten(text)}"
        )
    return int(text)


def _text(name: str, text: str) -> None:
    # PostgreSQL refuses a NUL in a string, and nothing the store holds is longer.
    if len(text) > MAX_TEXT or any(ord(c) < 32 or c == "\ufffd" for c in text):
        raise ApiError(
            HTTPStatus.BAD_REQUEST,
            f"{name} is a name from /api/task: at most {MAX_TEXT} characters of UTF-8 text without control characters",
        )


def _shown(value: Any) -> str:
    """A JSON value as its type and a short text, for a message."""
    kinds = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}
    if value is None:
        return "null"
    text = json.dumps(value)
    return f"{kinds.get(type(value), 'a value')} {text if len(text) <= 40 else text[:40] + '...'}"


def _json_int(name: str, value: Any, low: int, high: int, what: str) -> int:
    # bool is an int in Python, and 1.0 a float: neither is an id.
    if type(value) is not int or not low <= value <= high:
        raise ApiError(
            HTTPStatus.BAD_REQUEST, f"{name} is {what}: a whole number from {low} to {high}, not {_shown(value)}"
        )
    return value


def _check_body_type(content_type: str | None) -> None:
    if content_type is None:
        return
    kind, _, params = content_type.partition(";")
    kind = kind.strip().lower()
    charset = ""
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
    if (kind not in BODY_TYPES and not kind.endswith("+json")) or charset not in ("", "utf-8", "utf8"):
        raise ApiError(
            HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
            f"Content-Type {shorten(content_type, 40)}: the body is JSON (Content-Type: application/json, UTF-8)",
        )


def _depth(text: str) -> int:
    """How deep a JSON text's arrays and objects nest (brackets inside strings not counted):
    checked before parsing, since the parser recurses once per level."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ApiError(
                HTTPStatus.BAD_REQUEST, f"the body gives {json.dumps(_cut(key, 40))} twice: give each field once"
            )
        data[key] = value
    return data


def _json_body(body: bytes, fields: tuple[str, ...]) -> dict[str, Any]:
    """The body's JSON object, whose fields are all among ``fields``."""
    expected = "{" + ", ".join(f'"{f}": ...' for f in fields) + "}"
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(
            HTTPStatus.BAD_REQUEST, f"the body is not UTF-8 (byte {exc.start}): send JSON, {expected}"
        ) from None
    if _depth(text) > MAX_DEPTH:
        raise ApiError(HTTPStatus.BAD_REQUEST, f"the body nests deeper than {MAX_DEPTH} levels: send {expected}")
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise ApiError(HTTPStatus.BAD_REQUEST, f"the body is not JSON: send {expected}") from None
    if not isinstance(data, dict):
        raise ApiError(HTTPStatus.BAD_REQUEST, f"the body must be a JSON object, {expected}, not {_shown(data)}")
    unknown = [key for key in data if key not in fields]
    if unknown:
        takes = f"only {', '.join(fields)}" if fields else "no fields"
        raise ApiError(
            HTTPStatus.BAD_REQUEST, f"unknown field {json.dumps(_cut(unknown[0], 40))}: the body takes {takes}"
        )
    return data


# The page's files, by the one URL each is served at: a fixed table, so no path is ever taken
# from a request to read a file.
PAGE_FILES = {
    "/": ("index.html", "text/html"),
    "/index.html": ("index.html", "text/html"),
    "/review.js": ("review.js", "text/javascript"),
    "/review.css": ("review.css", "text/css"),
}
# The page runs only its own script and style, talks only to this server, and cannot be framed.
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self';"
    " base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def page_files() -> dict[str, tuple[bytes, str]]:
    """The review page's files (in the package, read once), by URL path."""
    folder = resources.files("spanscore.review") / "page"
    return {url: (folder.joinpath(name).read_bytes(), kind) for url, (name, kind) in PAGE_FILES.items()}


def make_server(app: ReviewApp, host: str = "127.0.0.1", port: int = 8765, page: bool = True) -> ThreadingHTTPServer:
    """A threaded HTTP server for ``app``, with the review page at / unless ``page`` is false."""
    files = page_files() if page else {}

    class Handler(BaseHTTPRequestHandler):
        server_version = "spanscore-review"
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms delayed-ACK stall
        timeout = READ_TIMEOUT  # a client that announces a body and never sends it frees its thread

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the library prints nothing

        def _send(
            self, status: int, payload: dict[str, Any] | bytes, kind: str = "application/json", close: bool = False
        ) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Content-Security-Policy", PAGE_POLICY)
            self.send_header("X-Frame-Options", "DENY")
            if close:
                self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            # The base class answers a malformed request (or a method it has no do_ for) in HTML,
            # with a 501 for the method: here, JSON like every other answer, and a 4xx.
            del explain
            if code == HTTPStatus.NOT_IMPLEMENTED:
                code, message = (
                    HTTPStatus.METHOD_NOT_ALLOWED,
                    f"no {_cut(self.command or '', 20)} here: use GET or POST",
                )
            elif code >= 500:
                code = HTTPStatus.BAD_REQUEST
            self._send(code, {"error": message or HTTPStatus(code).phrase}, close=True)

        def _refuse(self, status: int, message: str) -> None:
            # The rest of the body (if any) was not read, so the connection cannot carry another request.
            self._send(status, {"error": message}, close=True)

        def _body(self) -> bytes | None:
            """The request's body, or None once the request has been answered with an error."""
            if self.headers.get("Transfer-Encoding") is not None:
                self._refuse(HTTPStatus.LENGTH_REQUIRED, "give the body with a Content-Length, not Transfer-Encoding")
                return None
            lengths = {v.strip() for v in self.headers.get_all("Content-Length") or []}
            if not lengths:
                return b""
            text = lengths.pop()
            # ASCII digits only: int() would take "+5", " 5" or "٥", which no HTTP client sends.
            if lengths or not text.isascii() or not text.isdigit():
                self._refuse(HTTPStatus.BAD_REQUEST, "Content-Length must be one number of bytes (ASCII digits)")
                return None
            if len(text) > 9 or int(text) > MAX_BODY:
                self._refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a body is at most {MAX_BODY} bytes")
                return None
            length = int(text)
            try:
                body = self.rfile.read(length) if length else b""
            except TimeoutError:
                self._refuse(HTTPStatus.REQUEST_TIMEOUT, f"the body did not come within {READ_TIMEOUT} s")
                return None
            if len(body) != length:
                self.close_connection = True  # the client closed its side: no one to answer
                return None
            return body

        def _serve(self, method: str) -> None:
            # Read on every method, so that a GET's stray body is not taken for the next request.
            body = self._body()
            if body is None:
                return
            try:
                asset = files.get(urlsplit(self.path).path) if method == "GET" else None
            except ValueError:
                asset = None  # not a URL: the app answers 400
            if asset is not None:
                self._send(HTTPStatus.OK, asset[0], asset[1])
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                status, payload = app.handle(method, self.path, headers, body)
            except Exception:
                # A bug, not the client's doing: the client still gets an answer, and the server
                # (socketserver's handle_error) logs the traceback and goes on serving.
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "the server failed; see its log"}, close=True)
                raise
            self._send(status, payload)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        # Other methods get the API's 405 (or 404) in JSON rather than the base class's 501.
        def do_PUT(self) -> None:
            self._serve("PUT")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

        def do_DELETE(self) -> None:
            self._serve("DELETE")

        def do_OPTIONS(self) -> None:
            self._serve("OPTIONS")

        def do_HEAD(self) -> None:
            self._serve("HEAD")

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def serve_in_thread(server: ThreadingHTTPServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread

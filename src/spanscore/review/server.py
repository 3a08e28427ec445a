"""The review tool's JSON API, served by the standard library (threads, loopback by default).

Every request carries the reviewer's token as ``Authorization: Bearer TOKEN``; a missing or wrong
token gets 401 and nothing else. A judgement is answered 201 only once it is committed. Request
bodies are limited in size, no file path is ever taken from a request, and a malformed request
gets a 4xx with a JSON error, never a 500. The API is documented in docs/review.md.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..errors import OptionError
from .store import Store, verdict_names
from .summary import stats

MAX_BODY = 16 * 1024  # bytes: a judgement is a few dozen


class ApiError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def item_json(row: Any, scale: str) -> dict[str, Any]:
    return {
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
        url = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
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
            raise ApiError(status, f"no {method} {url.path}")
        reviewer = self._reviewer(headers)
        return route(reviewer, query, body)

    def _next(self, reviewer: Any, query: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        after = query.get("after")
        if after is not None and not after.isdigit():
            raise ApiError(HTTPStatus.BAD_REQUEST, "after is an item's position (a whole number)")
        row, judged, total = self.store.next_item(
            self.task.id,
            reviewer.id,
            criterion=query.get("criterion") or None,
            label=query.get("type") or None,
            after=None if after is None else int(after) - 1,  # positions are shown from 1
        )
        item = None if row is None else item_json(row, self.task.scale)
        return HTTPStatus.OK, {"item": item, "judged": judged, "total": total, "task": self.task.name}

    def _judge(self, reviewer: Any, query: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        data = _json_body(body)
        item_id, verdict = data.get("item"), data.get("verdict")
        if type(item_id) is not int or type(verdict) is not int:
            raise ApiError(HTTPStatus.BAD_REQUEST, 'give {"item": ID, "verdict": N} with integers')
        row = self.store.item(item_id)
        if row is None or row.task_id != self.task.id:
            raise ApiError(HTTPStatus.NOT_FOUND, f"no item {item_id} in this task")
        judgement = self.store.judge(item_id, reviewer.id, verdict, scale=self.task.scale)
        return HTTPStatus.CREATED, {"judgement": judgement, "item": item_id, "verdict": verdict}

    def _undo(self, reviewer: Any, query: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
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


def _json_body(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ApiError(HTTPStatus.BAD_REQUEST, "the body must be a JSON object") from None
    if not isinstance(data, dict):
        raise ApiError(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
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

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the library prints nothing

        def _send(self, status: int, payload: dict[str, Any] | bytes, kind: str = "application/json") -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Content-Security-Policy", PAGE_POLICY)
            self.send_header("X-Frame-Options", "DENY")
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> bytes | None:
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                self._send(HTTPStatus.BAD_REQUEST, {"error": "a bad Content-Length"})
                return None
            if length < 0 or length > MAX_BODY:
                self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": f"a body is at most {MAX_BODY} bytes"})
                self.close_connection = True
                return None
            return self.rfile.read(length) if length else b""

        def _serve(self, method: str) -> None:
            asset = files.get(urlsplit(self.path).path) if method == "GET" else None
            if asset is not None:
                self._send(HTTPStatus.OK, asset[0], asset[1])
                return
            body = self._body() if method == "POST" else b""
            if body is None:
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, payload = app.handle(method, self.path, headers, body)
            self._send(status, payload)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def serve_in_thread(server: ThreadingHTTPServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread

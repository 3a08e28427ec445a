"""The review page in a real browser (Debian's chromium driven by Playwright): judging by keyboard,
undo, skip, filters, the token kept out of URLs, and annotation text that never executes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import spanscore

pytest.importorskip("sqlalchemy")

from spanscore.io.reading import Reading
from spanscore.review import Item, Store, items_from_run, stats
from spanscore.review.server import ReviewApp, make_server, serve_in_thread

DATA = Path(__file__).resolve().parent / "data"
# The shipped samples: 8 pairs to judge, each answering one or more criteria.
SAMPLES = Path(spanscore.__file__).parent / "programs" / "sample_data"


class Served:
    def __init__(self, store: Store, port: int) -> None:
        self.store = store
        self.base = f"http://127.0.0.1:{port}/"


@pytest.fixture()
def serve(tmp_path: Path) -> Iterator[Any]:
    servers = []

    def start(store: Store) -> Served:
        server = make_server(ReviewApp(store), "127.0.0.1", 0)
        serve_in_thread(server)
        servers.append(server)
        return Served(store, server.server_address[1])

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def page(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: errors.append(f"a dialog opened: {dialog.message}"))
    page.errors = errors  # type: ignore[attr-defined]
    yield page
    context.close()
    assert not errors, errors


def settle(page: Any) -> None:
    page.wait_for_selector("body[data-ready='1'][data-busy='0']")


def press(page: Any, key: str) -> None:
    page.keyboard.press(key)  # the page marks itself busy as the key goes down, so this waits for its answer
    settle(page)


def shown(page: Any) -> tuple[int, str, str]:
    return (
        int(page.text_content("#position") or 0),
        page.text_content("#ref-text") or "",
        page.text_content("#pred-text") or "",
    )


def verdicts_of(store: Store, name: str) -> dict[int, int]:
    reviewer = store.reviewer_named(name)
    return (
        {row.position + 1: row.verdict for row in store.verdicts(store.task().id) if row.reviewer == name}
        if reviewer
        else {}
    )


def test_a_reviewer_judges_by_keyboard_undoes_skips_and_filters(serve: Any, page: Any, review_db: str) -> None:
    store = Store(review_db)
    items = items_from_run(SAMPLES / "gold.conll", SAMPLES / "pred.conll", Reading(), type5=True)
    store.create_task("small", "goodbad", items)
    token = store.add_reviewer("ann")
    served = serve(store)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))

    page.goto(served.base + "#token=" + token)
    settle(page)
    # the token left the address bar at once and never travels in a URL
    assert token not in page.url
    assert page.evaluate("sessionStorage.getItem('spanscore-review-token')") == token
    assert requests and not [u for u in requests if token in u]

    rows = store.items_of(store.task().id)
    total = len(rows)
    assert page.text_content("#progress-text") == f"0 of {total} judged"
    first = rows[0]
    assert shown(page) == (1, first.gold_text, first.pred_text)
    # the reference and the predicted spans are marked over exactly their characters
    ref = "".join(page.eval_on_selector_all("#sentence [data-span='ref']", "els => els.map(e => e.textContent)"))
    pred = "".join(page.eval_on_selector_all("#sentence [data-span='pred']", "els => els.map(e => e.textContent)"))
    assert (ref, pred) == (first.gold_text, first.pred_text)
    assert page.text_content("#sentence") == first.sentence

    press(page, "g")  # item 1 Good
    assert shown(page)[0] == 2
    press(page, "b")  # item 2 Bad
    assert shown(page)[0] == 3
    press(page, "Backspace")  # item 2 back
    assert shown(page)[0] == 2
    assert page.text_content("#progress-text") == f"1 of {total} judged"
    press(page, "g")  # item 2 Good this time
    press(page, "s")  # skip item 3
    assert shown(page)[0] == 4
    press(page, "b")  # item 4 Bad
    history = page.eval_on_selector_all("#history li .v", "els => els.map(e => e.textContent)")
    assert history == ["Bad", "Good", "Good"]  # newest first; the undone verdict is gone
    assert verdicts_of(store, "ann") == {1: 1, 2: 1, 4: 0}

    # filter by type: only that type's items, with the progress of the filter
    wanted = rows[4].gold_label
    page.select_option("#type", wanted)
    settle(page)
    of_type = [r for r in rows if r.gold_label == wanted]
    done = sum(1 for r in of_type if r.position + 1 in (1, 2, 4))
    assert page.text_content("#progress-text") == f"{done} of {len(of_type)} judged"
    position = shown(page)[0]
    assert rows[position - 1].gold_label == wanted
    press(page, "g")
    assert verdicts_of(store, "ann")[position] == 1
    assert page.evaluate("document.activeElement.tagName") != "SELECT"  # keys went back to judging

    # the guidelines are one key away and close with Escape
    page.keyboard.press("?")
    assert page.is_visible("#guidelines")
    page.keyboard.press("Escape")
    assert not page.is_visible("#guidelines")

    # the stats a script reads agree with what was pressed
    judged = stats(store)["criteria"]  # every sample pair is a Type-5 one
    assert judged["type5"]["judged"] == 4
    assert judged["type5"]["good"] == 3


def test_every_item_judged_then_done(serve: Any, page: Any, tmp_path: Path) -> None:
    store = Store(tmp_path / "r.db")
    store.create_task(
        "five", "five", [_item("a b c", "b c", "LOC", 2, 5, 4, 5, criterion=c) for c in ("left", "right")]
    )
    token = store.add_reviewer("ann")
    served = serve(store)
    page.goto(served.base + "#token=" + token)
    settle(page)
    assert page.eval_on_selector_all("#verdicts button", "els => els.map(e => e.dataset.verdict)") == [
        "1",
        "2",
        "3",
        "4",
        "5",
    ]
    press(page, "4")
    press(page, "g")  # not a key of the five-point scale: nothing happens
    assert shown(page)[0] == 2
    press(page, "2")
    assert page.is_visible("#done") and not page.is_visible("#item")
    assert verdicts_of(store, "ann") == {1: 4, 2: 2}


def test_without_a_good_token_the_page_shows_nothing(serve: Any, page: Any, tmp_path: Path) -> None:
    store = Store(tmp_path / "r.db")
    store.create_task("t", "goodbad", [_item("secret words here", "secret", "PER", 0, 6, 0, 6)])
    store.add_reviewer("ann")
    served = serve(store)
    page.goto(served.base)
    page.wait_for_selector("#signin:not([hidden])")
    page.goto(served.base + "#token=wrong")
    page.wait_for_selector("#signin:not([hidden])")
    assert "secret" not in (page.text_content("body") or "")
    assert page.evaluate("sessionStorage.getItem('spanscore-review-token')") is None


HOSTILE = [
    "<script>window.__pwned = 1</script>",
    '"><img src=x onerror="window.__pwned = 2">',
    "javascript:window.__pwned = 3",
    '<svg onload="window.__pwned = 4"></svg>',
]


def _item(
    sentence: str,
    pred_text: str,
    label: str,
    gs: int,
    ge: int,
    ps: int,
    pe: int,
    criterion: str = "overlap",
    gold_text: str | None = None,
) -> Item:
    return Item(
        criterion=criterion,
        sentence=sentence,
        gold_text=sentence[gs:ge] if gold_text is None else gold_text,
        gold_label=label,
        gold_start=gs,
        gold_end=ge,
        pred_text=pred_text,
        pred_label=label,
        pred_start=ps,
        pred_end=pe,
    )


def test_annotation_text_never_executes(serve: Any, page: Any, tmp_path: Path) -> None:
    store = Store(tmp_path / "r.db")
    items = []
    for k, bad in enumerate(HOSTILE):
        sentence = f"see {bad} and {bad} now"
        start = 4
        end = start + len(bad)
        items.append(_item(sentence, sentence[start + 2 : end], bad, start, end, start + 2, end, criterion=bad))
        items.append(_item(f"plain sentence {k}", bad, "LOC", 0, 5, 6, 14, gold_text=bad))
    store.create_task(HOSTILE[0], "goodbad", items)
    token = store.add_reviewer(HOSTILE[1])
    served = serve(store)
    page.goto(served.base + "#token=" + token)
    settle(page)
    seen = []
    for _ in items:
        seen.append(page.text_content("#sentence"))
        assert page.text_content("#ref-label") in (*HOSTILE, "LOC")
        press(page, "g")
    assert page.is_visible("#done")
    # every hostile string was shown as text, in the sentence, the filters, the history and the header
    assert seen == [it.sentence for it in items]
    options = page.eval_on_selector_all("#type option", "els => els.map(e => e.value)")
    assert set(HOSTILE) <= set(options)
    assert HOSTILE[0] in (page.text_content("#task") or "")
    assert any(
        HOSTILE[2] in (t or "") for t in page.eval_on_selector_all("#history li", "els => els.map(e => e.textContent)")
    )
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('img, svg, iframe').length") == 0
    assert page.evaluate("document.scripts.length") == 1


def test_a_discontinuous_mention_is_marked_fragment_by_fragment(serve: Any, page: Any, tmp_path: Path) -> None:
    # BRAT: "left … knee" (15-19 and 30-34) against the prediction of its extent (15-34).
    sentence = "severe pain in left and right knee"
    for side, offsets, words in (("gold", "15 19;30 34", "left knee"), ("pred", "15 34", "left and right knee")):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "d.txt").write_text(sentence, encoding="utf-8")
        (folder / "d.ann").write_text(f"T1\tADR {offsets}\t{words}\n", encoding="utf-8")
    report = spanscore.evaluate(
        reference=tmp_path / "gold", predicted=tmp_path / "pred", format="brat", keep_details=True
    )
    from spanscore.review.sources import items_from_report

    store = Store(tmp_path / "r.db")
    store.create_task("fragments", "goodbad", items_from_report(report))
    token = store.add_reviewer("ann")
    served = serve(store)
    page.goto(served.base + "#token=" + token)
    settle(page)
    assert shown(page) == (1, "left … knee", "left and right knee")
    assert page.text_content("#sentence") == sentence
    texts = "els => els.map(e => e.textContent)"
    # Two marked fragments of the reference, each with its own outline; the gap's words unmarked.
    ref = page.eval_on_selector_all("#sentence [data-span='ref']", texts)
    assert ref == ["left", "knee"]
    assert page.eval_on_selector_all("#sentence [data-span='ref'].opens", texts) == ["left", "knee"]
    assert page.eval_on_selector_all("#sentence [data-span='ref'].closes", texts) == ["left", "knee"]
    gap = page.eval_on_selector_all(
        "#sentence [data-span='pred']",
        "els => els.filter(e => !e.closest(\"[data-span='ref']\") && !e.querySelector(\"[data-span='ref']\"))"
        ".map(e => e.textContent)",
    )
    assert gap == [" and right "]
    # The continuous prediction is marked over its whole extent.
    assert "".join(page.eval_on_selector_all("#sentence [data-span='pred']", texts)) == "left and right knee"

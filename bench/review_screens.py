"""Screenshots of the review page for docs/review.md, on the paper's own pairs (and MedMentions').

    python bench/review_screens.py [--out docs/img]

Needs ../shared, Debian's chromium (/usr/bin/chromium) and Playwright (the test extras)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from spanscore.review import Store, expert_judgements, paper_judgements
from spanscore.review.server import ReviewApp, make_server, serve_in_thread

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"]


def shoot(store: Store, token: str, out: Path, shots: list[tuple[str, list[str]]]) -> None:
    server = make_server(ReviewApp(store), "127.0.0.1", 0)
    serve_in_thread(server)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(base + "#token=" + token)
        page.wait_for_selector("body[data-ready='1'][data-busy='0']")
        for name, keys in shots:
            for key in keys:
                page.keyboard.press(key)
                page.wait_for_selector("body[data-busy='0']")
            page.screenshot(path=str(out / name))
            print(out / name)
        browser.close()
    server.shutdown()
    server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "paper.db")
        rows = paper_judgements(SHARED / "seed-partial-matches" / "judgements.md")
        store.create_task("paper-dev", "goodbad", [item for item, _ in rows])
        token = store.add_reviewer("you")
        shoot(
            store,
            token,
            args.out,
            [
                ("review-page.png", []),
                ("review-history.png", ["g", "g", "b", "s", "g"]),
                ("review-guidelines.png", ["?"]),
            ],
        )
        store = Store(Path(tmp) / "mm.db")
        scored = expert_judgements(SHARED / "medmentions-expert" / "judgements.jsonl")
        store.create_task("medmentions", "five", [item for item, _ in scored[:200]])
        token = store.add_reviewer("you")
        shoot(store, token, args.out, [("review-five.png", ["4", "3"])])


if __name__ == "__main__":
    main()

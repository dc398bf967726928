#!/usr/bin/env python
"""The page of ``nbsvm serve`` in a real headless browser: type a review, press Classify,
read the label and the shaded words, keep a screenshot (``results/serve_page.png``).

Playwright drives Debian's Chromium (``/usr/bin/chromium``; ``PLAYWRIGHT_CHROMIUM`` to use
another), started with the flags this closed network needs (no background connections).

    python pipelines/serve_page.py [--model models/imdb-3gram-24b.npz] [--out results/serve_page.png]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from _harness import script_parser

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("PLAYWRIGHT_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REVIEW = (
    "One of the best films I have seen this year. The acting is superb, the story "
    "moving and the ending perfect; a wonderful, funny and touching movie that I will "
    "watch again."
)


def browse(url: str, text: str, screenshot: Path | None = None) -> dict:
    """Open ``url``, type ``text``, press Classify; return what the page shows: ``label``,
    ``probability`` text, the shaded words (``[(word, background)]``), the classes listed
    under the strongest n-grams."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.goto(url)
            page.wait_for_selector("#strongest h3")
            page.fill("#text", text)
            page.click("#go")
            page.wait_for_selector("#result:not([hidden])")
            spans = page.eval_on_selector_all(
                "#shaded .shaded span", "els => els.map(e => [e.textContent, e.style.background])"
            )
            seen = {
                "label": page.inner_text("#label"),
                "probability": page.inner_text("#probability"),
                "shaded": spans,
                "classes": page.eval_on_selector_all(
                    "#strongest h3", "els => els.map(e => e.textContent)"
                ),
            }
            if screenshot is not None:
                screenshot.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(screenshot), full_page=True)
            return seen
        finally:
            browser.close()


def main(argv=None):
    ap = script_parser(__doc__)
    ap.add_argument("--model", default=str(ROOT / "models" / "imdb-3gram-24b.npz"))
    ap.add_argument("--out", default=str(ROOT / "results" / "serve_page.png"))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).parent))
    from serve_bench import free_port, start_server

    port = free_port()
    log = ROOT / "results" / "tmp" / "serve_page_server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    server = start_server(Path(args.model), port, log)
    try:
        seen = browse(f"http://127.0.0.1:{port}/", REVIEW, Path(args.out))
    finally:
        server.terminate()
        server.wait(30)
    print(
        f"label {seen['label']} ({seen['probability']}), {len(seen['shaded'])} words shaded, "
        f"classes {seen['classes']}; screenshot {args.out}"
    )


if __name__ == "__main__":
    main()

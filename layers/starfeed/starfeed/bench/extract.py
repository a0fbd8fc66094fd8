"""Which article extractor a website source should use: readability-lxml, trafilatura, or the
hand-written one it replaced, measured on article pages built from ../shared/corpora/real-feeds.

Each item with 150 words or more of content becomes a page as a blog serves it: a navigation bar,
the article (its title and content), a sidebar of related posts, comments and a footer. The item's
own text is the truth. Per extractor: the share of the article's words recovered (recall), the
share of what it returned that is the article (precision), the pages where boilerplate leaked in,
and the time per page.

    python -m starfeed.bench.extract [--limit N]

An extractor that is not installed is skipped (pip install readability-lxml==0.9
trafilatura==2.3.1 to compare both).
"""

from __future__ import annotations

import argparse
import html
import re
import time
from collections.abc import Callable
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[4].parent / "shared" / "corpora" / "real-feeds"
MIN_WORDS = 150
BOILERPLATE = ("Subscribe to our newsletter", "Related posts", "Leave a comment", "All rights reserved")
_WORD = re.compile(r"\w+")


def pages(limit: int) -> list[tuple[str, str, str]]:
    """(url, page, the article's text) for each long enough item of the corpus."""
    import feedparser
    import lxml.html

    found = []
    for path in sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in (".xml", ".rss", ".atom", "")):
        parsed = feedparser.parse(path.read_bytes())
        for n, entry in enumerate(parsed.entries):
            content = (entry.get("content") or [{}])[0].get("value") or entry.get("summary") or ""
            try:
                text = " ".join(lxml.html.fromstring(content).itertext()) if content.strip() else ""
            except Exception:  # noqa: BLE001 - an item lxml cannot read is not a test page
                continue
            if len(_WORD.findall(text)) < MIN_WORDS:
                continue
            url = entry.get("link") or f"https://example.org/{path.stem}/{n}"
            found.append((url, _page(entry.get("title") or "Untitled", content), text))
            if len(found) >= limit:
                return found
    return found


def _page(title: str, content: str) -> str:
    nav = "".join(f'<li><a href="/section/{n}">Section {n}</a></li>' for n in range(12))
    related = "".join(f'<li><a href="/post/{n}">Related posts: another story number {n}</a></li>' for n in range(8))
    return (f"<!doctype html><html><head><title>{html.escape(title)} | A Blog</title></head><body>"
            f'<header><nav><ul>{nav}</ul></nav><p>Subscribe to our newsletter for more.</p></header>'
            f'<div class="layout"><div class="content"><h1>{html.escape(title)}</h1>'
            f'<div class="entry-content">{content}</div></div>'
            f'<aside class="sidebar"><h3>Related posts</h3><ul>{related}</ul></aside></div>'
            f'<section class="comments"><h3>Leave a comment</h3><p>Your email address will not be published. '
            f"Required fields are marked. Comment policy applies to every reply posted here.</p></section>"
            f"<footer><p>All rights reserved. Powered by a blogging platform. Privacy. Terms. Contact.</p>"
            f"</footer></body></html>")


def extractors() -> dict[str, Callable[[str, str], str]]:
    found: dict[str, Callable[[str, str], str]] = {}
    try:
        from readability import Document

        found["readability-lxml"] = lambda page, url: _text(Document(page, url=url).summary(html_partial=True))
    except ImportError:
        pass
    try:
        import trafilatura

        found["trafilatura"] = lambda page, url: trafilatura.extract(page, url=url, include_comments=False) or ""
    except ImportError:
        pass
    return found


def _text(fragment: str) -> str:
    import lxml.html

    return " ".join(lxml.html.fromstring(fragment).itertext()) if fragment.strip() else ""


def measure(extract: Callable[[str, str], str], corpus: list[tuple[str, str, str]]) -> dict:
    recall = precision = 0.0
    leaked = 0
    started = time.perf_counter()
    outputs = [extract(page, url) for url, page, _ in corpus]
    elapsed = time.perf_counter() - started
    for (_, _, truth), got in zip(corpus, outputs):
        truth_words, got_words = _WORD.findall(truth.lower()), _WORD.findall(got.lower())
        truth_set, got_set = set(truth_words), set(got_words)
        recall += len(truth_set & got_set) / max(1, len(truth_set))
        precision += sum(1 for w in got_words if w in truth_set) / max(1, len(got_words))
        leaked += any(marker.lower() in got.lower() for marker in BOILERPLATE)
    n = max(1, len(corpus))
    return {"recall": recall / n, "precision": precision / n, "leaked": leaked, "ms": elapsed * 1000 / n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=200)
    args = parser.parse_args()
    if not CORPUS.exists():
        print(f"{CORPUS} is absent: the shared corpora live beside the repository")
        return
    corpus = pages(args.limit)
    print(f"{len(corpus)} article pages from {CORPUS}")
    for name, extract in extractors().items():
        result = measure(extract, corpus)
        print(f"{name:18} recall {result['recall']:.3f}  precision {result['precision']:.3f}  "
              f"boilerplate on {result['leaked']} pages  {result['ms']:.1f} ms/page")


if __name__ == "__main__":
    main()

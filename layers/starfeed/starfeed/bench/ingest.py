"""Ingest CPU time per feed as a ratio to feedparser.parse alone on the same bytes.

    python -m starfeed.bench.ingest [--corpus ../shared/corpora/real-feeds] [--repeat 5]

Ours is what the fetcher does after the download: parse (feedparser, or our JSON Feed parser),
normalize and sanitize every entry (nh3), filter. The target (docs/design.md#target-ingest): at most 1.3x.
"""

from __future__ import annotations

import argparse
import email.utils
import json
import statistics
import time
from pathlib import Path

import feedparser

from starfeed.model import Source
from starfeed.parse.ingest import ingest, read_feed
from starfeed.settings import Settings

TARGET = 1.3
SETTINGS = Settings(max_article_age_days=1_000_000)


def synthetic_feed(items: int = 100) -> bytes:
    """A 100-item RSS feed of about 128 KB with HTML content, like a busy blog's."""
    paragraph = "<p>Lorem ipsum <a href='/x'>dolor</a> sit amet, <em>consectetur</em> adipiscing elit. </p>"
    now = time.time()
    body = "".join(
        f"<item><title>Post {n} &amp; more</title><link>https://blog.example/p/{n}</link>"
        f"<guid isPermaLink='false'>urn:post:{n}</guid>"
        f"<pubDate>{email.utils.formatdate(now - n * 3600, usegmt=True)}</pubDate>"
        f"<author>a@blog.example (Author {n % 7})</author><category>c{n % 5}</category>"
        f"<description><![CDATA[{paragraph * 12}]]></description></item>" for n in range(items))
    return (f"<?xml version='1.0'?><rss version='2.0'><channel><title>Synthetic</title>"
            f"<link>https://blog.example/</link><description>d</description>{body}</channel></rss>").encode()


def cpu(action, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        action()
        best = min(best, time.process_time() - started)
    return best


def measure(body: bytes, url: str, repeat: int) -> tuple[float, float]:
    source = Source(source_id="bench", url=url, created_at=0)
    baseline = cpu(lambda: feedparser.parse(body), repeat)
    ours = cpu(lambda: ingest(read_feed, body, url, None, source, time.time(), SETTINGS), repeat)
    return baseline, ours


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(Path.cwd().parent / "shared" / "corpora" / "real-feeds"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    feeds = {"synthetic-100": synthetic_feed()}
    corpus = Path(args.corpus)
    if corpus.is_dir():
        # feedparser cannot read JSON Feed, so those files have no baseline.
        feeds.update({str(p.relative_to(corpus)): p.read_bytes() for p in sorted(corpus.rglob("*"))
                      if p.is_file() and p.suffix not in (".json", ".tsv", ".txt")
                      and not p.name.startswith("LICENSE")})
    ratios, total_base, total_ours = {}, 0.0, 0.0
    for name, body in feeds.items():
        baseline, ours = measure(body, "https://example.org/feed", args.repeat)
        total_base, total_ours = total_base + baseline, total_ours + ours
        ratios[name] = ours / baseline if baseline else 1.0
    synthetic_base, synthetic_ours = measure(feeds["synthetic-100"], "https://blog.example/feed", args.repeat)
    print(json.dumps({
        "feeds": len(feeds), "target_ratio": TARGET,
        "synthetic_100": {"feedparser_ms": round(synthetic_base * 1000, 2),
                          "ingest_ms": round(synthetic_ours * 1000, 2),
                          "ratio": round(synthetic_ours / synthetic_base, 3)},
        "corpus_total": {"feedparser_ms": round(total_base * 1000, 1), "ingest_ms": round(total_ours * 1000, 1),
                         "ratio": round(total_ours / total_base, 3)},
        "per_feed_ratio_median": round(statistics.median(ratios.values()), 3),
        "per_feed_ratio_p90": round(sorted(ratios.values())[int(len(ratios) * 0.9)], 3),
    }, indent=1))


if __name__ == "__main__":
    main()

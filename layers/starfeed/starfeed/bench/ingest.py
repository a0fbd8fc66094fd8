"""Ingest CPU time per feed as a ratio to feedparser.parse alone on the same bytes, and what
judging the entries with 100 rules adds to it.

    python -m starfeed.bench.ingest [--corpus ../shared/corpora/real-feeds] [--repeat 5]

Ours is what the fetcher does after the download: parse (feedparser, or our JSON Feed parser),
normalize and sanitize every entry (nh3), filter. The target (docs/design.md#target-ingest): at most 1.3x.
With rules (docs/design.md#target-rules): the same ingest, each entry then judged by 100 rules of
every kind and scope, at most 1.05x the ingest judged by none.
"""

from __future__ import annotations

import argparse
import email.utils
import json
import statistics
import time
from pathlib import Path

import feedparser

from starfeed.model import Rule, RuleAction, RuleField, RuleMatch, Source
from starfeed.parse.ingest import ingest, read_feed
from starfeed.rules.grammar import check_book
from starfeed.rules.judge import RuleBook, Subject
from starfeed.settings import Settings

TARGET = 1.3
RULES_TARGET = 1.05
SETTINGS = Settings(max_article_age_days=1_000_000)
SOURCE = Source(source_id="bench", url="https://example.org/feed", created_at=0, collections=["news", "tech"])
NOISE = ["sponsored", "hot deals", "giveaway", "webinar", "black friday", "press release", "advertisement",
         "affiliate link", "limited time offer", "promo code", "coupon", "horoscope", "celebrity gossip",
         "crypto airdrop", "casino", "betting odds", "weight loss", "click here", "you won't believe",
         "top 10", "listicle", "podcast episode", "newsletter", "job opening", "we're hiring"]
TOPICS = {"rust": "rust", "python": "python", "kubernetes": "k8s", "postgres": "databases", "sqlite": "databases",
          "machine learning": "ml", "large language model": "ml", "webassembly": "wasm", "linux kernel": "linux",
          "open source": "oss", "privacy": "privacy", "encryption": "security", "zero-day": "security",
          "ransomware": "security", "climate": "climate", "electric vehicle": "ev", "space": "space",
          "quantum": "quantum"}


def realistic_rules(count: int = 100) -> list[Rule]:
    """What a person who reads many feeds might write: noise blocked by title, topics tagged by
    title or category, CVEs collected in a set, tracking links and bots blocked, an age limit and a
    framing score, per-source and per-collection exceptions (most for other sources), and named
    sets of topics to fill the count."""
    block, keep, tag = RuleAction.BLOCK, RuleAction.KEEP, RuleAction.TAG
    f, m = RuleField, RuleMatch
    rules = [Rule(f"noise{n}", block, (m(f.TITLE, word),)) for n, word in enumerate(NOISE)]
    rules += [Rule(f"topic{n}", tag, (m(f.TITLE, word), m(f.CATEGORY, word)), any=True, tag=topic)
              for n, (word, topic) in enumerate(TOPICS.items())]
    rules += [
        Rule("cve", tag, (m(f.TEXT, r"/CVE-\d{4}-\d{4,}/"),), tag="security"),
        Rule("cves", keep, (m(f.TEXT, r"/CVE-\d{4}-\d{4,}/"),), rule_set="cves"),
        Rule("ghsa", tag, (m(f.TEXT, r"/GHSA(-[23456789cfghjmpqrvwx]{4}){3}/"),), tag="security"),
        Rule("utm", block, (m(f.LINK, r"/[?&]utm_(source|medium)=/"),)),
        Rule("ads", block, (m(f.HOST, r"/(^|\.)(doubleclick|adservice|ads)\./"),)),
        Rule("medium", block, (m(f.HOST, "medium.com"), m(f.TEXT, "member-only story"))),
        Rule("bots", block, (m(f.AUTHOR, r"/(?i)\bbot\b|\[bot\]/"),)),
        Rule("bumps", block, (m(f.TITLE, r"/^Bump [\w.-]+ from/"),)),
        Rule("old", block, (m(f.AGE, "3650"),)),
        Rule("framed", block, (m(f.SCORE, "0.8"),)),
        Rule("release", tag, (m(f.TITLE, r"/\bv?\d+\.\d+(\.\d+)?\b/"), m(f.CATEGORY, "release")), any=True,
             tag="release"),
        Rule("paywall", block, (m(f.TEXT, "subscribe to continue reading"),)),
        Rule("nsfw", block, (m(f.CATEGORY, "nsfw"),)),
        Rule("hn", tag, (m(f.TITLE, r"/^(Ask|Show|Tell) HN:/"),), tag="hn"),
        Rule("video", tag, (m(f.LINK, r"/youtube\.com\/watch|youtu\.be\//"), m(f.TITLE, "video")), any=True,
             tag="video"),
    ]
    for n in range(10):  # a source's exceptions: one for this source, an allowlist of another
        scope = "source:bench" if n == 0 else f"source:{n:012d}"
        rules.append(Rule(f"source{n}", keep if n % 3 == 1 else block, (m(f.TITLE, NOISE[n]),), scope=scope))
    for n in range(10):
        rules.append(Rule(f"collection{n}", block, (m(f.TEXT, NOISE[n + 5]), m(f.SOURCE, "example", True)),
                          scope=f"collection:{['news', 'tech', 'blogs', 'work', 'fun'][n % 5]}"))
    sets = ["rust-news", "postgres", "outages", "releases", "papers"]
    for n in range(count - len(rules)):
        rules.append(Rule(f"set{n}", keep if n % 4 else block,
                          (m(f.TEXT if n % 2 else f.TITLE, list(TOPICS)[n % len(TOPICS)]),),
                          rule_set=sets[n % len(sets)]))
    check_book(rules[:count], Settings())
    return rules[:count]


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
    baseline = cpu(lambda: feedparser.parse(body), repeat)
    ours = cpu(lambda: ingest(read_feed, body, url, None, SOURCE, time.time(), SETTINGS), repeat)
    return baseline, ours


def judging(book: RuleBook, body: bytes, url: str) -> tuple[float, float]:
    """CPU seconds of the ingest, and of judging each kept entry then, as the fetcher judges a
    new one (the entries still warm from the ingest)."""
    now, subject = time.time(), Subject.of(SOURCE)
    started = time.process_time()
    ingested = ingest(read_feed, body, url, None, SOURCE, now, SETTINGS)
    ingested_at = time.process_time()
    for entry in ingested.entries:
        book.judge(entry, subject, now)
    return ingested_at - started, time.process_time() - ingested_at


def measure_rules(feeds: dict[str, bytes], repeat: int) -> dict[str, float]:
    """The corpus ingested, then judged by no rule and by 100: each feed's best ingest and best
    judging of `repeat`, taken apart so that a busy machine's noise in the ingest, twenty times
    longer, does not swamp the judging."""
    books = {"none": RuleBook.of([]), "100": RuleBook.of(realistic_rules(100))}
    ingest_s, judge_s = 0.0, dict.fromkeys(books, 0.0)
    for body in feeds.values():
        best_ingest, best_judge = float("inf"), dict.fromkeys(books, float("inf"))
        for _ in range(repeat):
            for name, book in books.items():
                ingesting, judging_s = judging(book, body, "https://example.org/feed")
                best_ingest, best_judge[name] = min(best_ingest, ingesting), min(best_judge[name], judging_s)
        ingest_s += best_ingest
        judge_s = {name: judge_s[name] + best_judge[name] for name in books}
    return {"ingest_ms": round(ingest_s * 1000, 1), "judge_no_rules_ms": round(judge_s["none"] * 1000, 2),
            "judge_100_rules_ms": round(judge_s["100"] * 1000, 1),
            "ratio": round((ingest_s + judge_s["100"]) / (ingest_s + judge_s["none"]), 3),
            "target_ratio": RULES_TARGET}


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
        "rules_100_vs_none": measure_rules(feeds, args.repeat),
    }, indent=1))


if __name__ == "__main__":
    main()

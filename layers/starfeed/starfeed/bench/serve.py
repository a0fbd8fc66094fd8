"""What readers feel: negotiation, a warm cached request, OPML, the dashboard, rendering, the api
function's cold import, and the cache hit rate over a replay of reader traffic.

    python -m starfeed.bench.serve [--quick]

The serving targets (docs/design.md#target-serving): at the least negotiation < 1 ms, OPML < 10 ms,
dashboard < 100 ms, hit rate > 80%; and the goals: negotiation <= 20 us, a warm cached request <= 1 ms, a cold import
<= 1.5x `import boto3`.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from feedgen.feed import FeedGenerator

from starfeed.model import Entry, Source
from starfeed.parse.normalize import rfc3339
from starfeed.render.feeds import FeedMeta, render
from starfeed.render.opml import published_opml
from starfeed.render.summary import row_of
from starfeed.serve.cache import FeedCache
from starfeed.serve.dashboard import render_dashboard
from starfeed.serve.negotiate import _negotiate, negotiate
from starfeed.store.blobs import FeedObject, NotModified

HEADERS = [
    "application/atom+xml,application/rdf+xml,application/rss+xml,application/x-netcdf,application/xml;q=0.9,text/xml;q=0.2,*/*;q=0.1",
    "application/xml,application/atom+xml,application/rss+xml,application/rdf+xml,application/feed+json,text/html,*/*;q=0.9",
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
    "application/feed+json", "*/*", "application/rss+xml;q=0, */*", "",
]


def per_call(action, repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - started) / repeat


def negotiation(repeat: int = 2000) -> dict:
    def cold():
        _negotiate.cache_clear()
        for header in HEADERS:
            negotiate(header)

    cold_s = per_call(cold, repeat) / len(HEADERS)
    warm_s = per_call(lambda: [negotiate(h) for h in HEADERS], 10 * repeat) / len(HEADERS)
    return {"cold_us": round(cold_s * 1e6, 2), "memoized_us": round(warm_s * 1e6, 3)}


def entries(count: int) -> list[Entry]:
    now = time.time()
    return [Entry(entry_uid=f"urn:{n}", feed_id=f"s{n % 20}", canonical_link=f"https://blog.example/{n}",
                  title=f"Post {n}", summary="A short summary of the post. " * 4,
                  content="<p>" + "Body text of the post. " * 30 + "</p>",
                  authors=[{"name": "Author", "email": "a@blog.example", "uri": None}],
                  categories=["news"], published=rfc3339(now - n * 600),
                  first_seen=rfc3339(now), last_seen=rfc3339(now)) for n in range(count)]


def feedgen_alone(items: list[Entry], fmt: str) -> bytes:
    """The same entries through feedgen with no more than it needs: the baseline."""
    fg = FeedGenerator()
    fg.id("https://feeds.test/feed.xml")
    fg.title("starfeed")
    fg.description("d")
    fg.link(href="https://feeds.test/", rel="alternate")
    for entry in reversed(items):
        fe = fg.add_entry()
        fe.id(entry.entry_uid)
        fe.title(entry.title)
        fe.link(href=entry.canonical_link)
        fe.description(entry.summary)
        fe.content(entry.content, type="CDATA" if fmt == "rss" else "html")
        fe.published(entry.published)
        fe.updated(entry.published)
    return fg.rss_str() if fmt == "rss" else fg.atom_str()


def rendering(repeat: int = 50) -> dict:
    items = entries(50)
    meta = FeedMeta("feed", "starfeed", "d", "https://feeds.test/", "https://feeds.test")
    out = {}
    for fmt in ("rss", "atom", "json"):
        ours = per_call(lambda fmt=fmt: render(fmt, meta, items, time.time()), repeat)
        base = per_call(lambda fmt=fmt: feedgen_alone(items, fmt if fmt != "json" else "atom"), repeat)
        out[fmt] = {"ms": round(ours * 1000, 2), "feedgen_ms": round(base * 1000, 2),
                    "ratio": round(ours / base, 2)}
    return out


def opml_and_dashboard(repeat: int = 50) -> dict:
    now = time.time()
    sources = [Source(source_id=f"{n:012x}", url=f"https://site{n}.example/feed", title=f"Site {n}",
                      status="ok" if n % 9 else "error", last_error=None if n % 9 else "HTTP 500",
                      interval=900, reason="new-entries", next_check_at=now + 60, last_fetch_at=now)
               for n in range(200)]
    days = {f"2026-11-{d:02d}": {"req:rss": 900 + d, "req:atom": 300, "req:json": 120, "ua:Feedly": 400,
                                  "ua:NetNewsWire": 200, "cache:hit": 1200, "cache:miss": 100,
                                  **{f"render:rss:{b}": 10 for b in range(4, 9)}} for d in range(15, 22)}
    opml_s = per_call(lambda: published_opml("https://feeds.test", sources, {"tech": 5, "news": 3}, now), repeat)
    rows = [row_of(source, True) for source in sources]  # what the renderer summarizes for /stats
    dashboard_s = per_call(lambda: render_dashboard(days, {"entries": 12}, rows, now), repeat)
    return {"opml_ms_200_sources": round(opml_s * 1000, 2),
            "dashboard_ms_200_sources": round(dashboard_s * 1000, 2)}


def warm_cached_request(repeat: int = 2000) -> dict:
    """The real api handler on an API Gateway v2 event, the object already in its cache."""
    from starfeed.local.http_bridge import http_api_event
    from starfeed.local.stack import LocalStack

    logging.basicConfig(level=logging.WARNING)
    stack = LocalStack(state=Path(tempfile.mkdtemp()))
    try:
        from starfeed.settings import Settings
        from starfeed.store import Storage

        storage = Storage(Settings.from_env(stack.environment))
        storage.queues.send_render(["feed"])
        stack.drain()
        api = stack.functions["ApiFunction"]
        event = http_api_event("GET", "/feed", {"accept": HEADERS[1], "user-agent": "Miniflux/2.2",
                                                "if-none-match": '"other"'}, b"", "198.51.100.7")
        api.invoke(event)  # warm: the object is now in the cache
        handler, context = api.module.handler, None
        seconds = per_call(lambda: handler(event, context), repeat)
        assert api.module.app.feed_cache.stats["hits"] >= repeat
        return {"warm_cached_request_ms": round(seconds * 1000, 3)}
    finally:
        stack.close()


def cold_import(tries: int = 5) -> dict:
    root = Path(__file__).resolve().parents[4]
    env_code = ("import os;os.environ.update(AWS_REGION='us-east-1',AWS_ACCESS_KEY_ID='x',"
                "AWS_SECRET_ACCESS_KEY='x',POWERTOOLS_METRICS_DISABLED='true');")
    api = f"import sys;sys.path.insert(0,{str(root / 'functions' / 'api')!r});" + env_code

    def best(code: str) -> float:
        times = []
        for _ in range(tries):
            out = subprocess.run([sys.executable, "-c", "import time;t=time.perf_counter();" + code
                                  + ";print(time.perf_counter()-t)"], capture_output=True, text=True, check=True)
            times.append(float(out.stdout.strip().splitlines()[-1]))
        return min(times)

    boto3_s = best("import boto3")
    api_s = best(api + "import app")
    return {"import_boto3_ms": round(boto3_s * 1000, 1), "import_api_function_ms": round(api_s * 1000, 1),
            "ratio": round(api_s / boto3_s, 2)}


def hit_rate_replay(hours: int = 24, readers: int = 60, seed: int = 7) -> dict:
    """A day of reader traffic on one warm function. Readers poll every 15-60 minutes (as
    Miniflux, Feedly and NetNewsWire do); half follow the aggregate, a fifth a collection, the
    rest one source. The aggregate is re-rendered every 30 minutes, a collection hourly, and a
    source when it posts (hourly to every two days). A hit is served from memory, fresh or
    after a 304 from S3; a miss reads the object."""
    rng = random.Random(seed)
    clock = [0.0]
    cache = FeedCache(clock=lambda: clock[0])  # the deployed revalidation window
    sources = [f"s/{n}/feed.xml" for n in range(30)]
    changes = {"feed.xml": 1800, "feed.atom": 1800, "feed.json": 1800, "c/tech/feed.xml": 3600,
               **{key: rng.choice([3600, 3 * 3600, 6 * 3600, 12 * 3600, 24 * 3600, 48 * 3600])
                  for key in sources}}

    def target() -> str:
        roll = rng.random()
        if roll < 0.5:
            return rng.choice(["feed.xml", "feed.xml", "feed.atom", "feed.json"])
        return "c/tech/feed.xml" if roll < 0.7 else rng.choice(sources)

    polls = [(rng.uniform(0, 900), rng.choice([900, 1800, 3600]), target()) for _ in range(readers)]
    events = sorted((start + i * every, key) for start, every, key in polls
                    for i in range(int(hours * 3600 / every)))
    for at, key in events:
        clock[0] = at
        version = int(at // changes[key])

        def load(etag, key=key, version=version, at=at):
            if etag == f'"{key}-{version}"':
                raise NotModified
            return FeedObject(b"x" * 2048, "application/rss+xml", f'"{key}-{version}"', at)

        cache.get(key, load)
    summary = cache.summary()
    return {"requests": len(events), **{k: summary[k] for k in ("hits", "revalidations", "misses")},
            "hit_rate": round(summary["hit_rate"], 3),
            "fresh_hit_rate": round((summary["hits"] - summary["revalidations"]) / len(events), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="each measure once or a few times, a day's replay an "
                        "hour's: that the benchmark runs, not what it measures")
    quick = parser.parse_args().quick
    repeat = 1 if quick else 50
    report = {"negotiation": negotiation(10 if quick else 2000), "render_50_entries": rendering(repeat),
              **opml_and_dashboard(repeat), **warm_cached_request(10 if quick else 2000),
              "cold_import": cold_import(1 if quick else 5), "cache_replay": hit_rate_replay(1 if quick else 24)}
    report["targets"] = {
        "negotiation_us_goal_20": report["negotiation"]["cold_us"] <= 20,
        "warm_request_ms_goal_1": report["warm_cached_request_ms"] <= 1,
        "opml_ms_floor_10": report["opml_ms_200_sources"] < 10,
        "dashboard_ms_floor_100": report["dashboard_ms_200_sources"] < 100,
        "cold_import_goal_1_5x_boto3": report["cold_import"]["ratio"] <= 1.5,
        "hit_rate_floor_0_8": report["cache_replay"]["hit_rate"] > 0.8,
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

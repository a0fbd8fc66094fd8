"""The enricher's overhead per entry, without the analyzer's own latency: on the local stack,
ENTRIES new entries of a deframed source in a collection, their articles and robots.txt on a
loopback origin, analyzed by the mock with no simulated latency.

    python -m starfeed.bench.enrich [--entries 50] [--rounds 3]

Printed: the enricher's time per entry, against a baseline measured in the same run (the same
articles downloaded and extracted, nothing else); and the AWS requests and DynamoDB items
written per entry (every botocore call made while the enricher runs, its render request
included)."""

from __future__ import annotations

import argparse
import json
import time
from http.server import BaseHTTPRequestHandler

from starfeed.bench.aws_requests import counting, stack_with_origin
from starfeed.enrich.job import EnrichMessage, Known, enrich
from starfeed.enrich.mock import MockAnalyzer
from starfeed.fetch.http import fetch
from starfeed.local.loopback import reply
from starfeed.parse.html import extract_article
from starfeed.sources import add_source

ENTRIES = 50
BATCH = 5  # the enricher's SQS batch size (template.yaml)
ROUNDS = 3


def _article(n: int) -> bytes:
    text = "".join(f"<p>Paragraph {p} of story {n}: the council met and voted on the plan, as reported.</p>"
                   for p in range(12))
    return (f"<html><head><title>Story {n}</title></head><body><nav>Home World Sport</nav>"
            f"<article><h1>Story {n}</h1>{text}</article><footer>About us</footer></body></html>").encode()


class _Handler(BaseHTTPRequestHandler):
    entries = ENTRIES  # the feed's items

    def do_GET(self):  # the http.server interface
        if self.path == "/robots.txt":
            body, kind = b"User-agent: *\nDisallow: /private/\n", "text/plain"
        elif self.path == "/feed.xml":
            now = time.time()
            host = self.headers["Host"]
            items = "".join(
                f"<item><title>Story {n}</title><link>http://{host}/story/{n}</link><guid>urn:story:{n}</guid>"
                f"<pubDate>{time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime(now - 60 * n))}</pubDate>"
                f"<description>Story {n} in brief.</description></item>" for n in range(self.entries))
            body = (f'<?xml version="1.0"?><rss version="2.0"><channel><title>Bench desk</title><link>http://{host}/'
                    f"</link><description>d</description>{items}</channel></rss>").encode()
            kind = "application/rss+xml"
        else:
            body, kind = _article(int(self.path.rsplit("/", 1)[-1])), "text/html"
        reply(self, 200, body, kind)

    def log_message(self, *args):
        pass


def run(entries: int = ENTRIES, rounds: int = ROUNDS) -> dict:
    _Handler.entries = entries
    with stack_with_origin(_Handler, "enrich") as (stack, storage, origin):
        source, _ = add_source(storage, f"{origin.url}/feed.xml", time.time() - 3600, ["bench"], backfill=entries)
        storage.sources.change(source.source_id, {"deframe": True})
        stack.tick()
        for queue in stack.queues:  # the fetch stores the entries; their enrichment messages wait
            if queue.function.logical_id == "FetcherFunction":
                while queue.poll():
                    pass
        source = storage.sources.get(source.source_id)
        uids = [f"urn:story:{n}" for n in range(entries)]
        analyzer = MockAnalyzer(latency_ms=0)
        best_enrich, best_baseline, calls = float("inf"), float("inf"), None
        for round_ in range(rounds):
            prompt = f"Round {round_}: be neutral."  # a new prompt: every entry is analyzed again
            storage.sources.change(source.source_id, {"prompt": prompt})
            started = time.perf_counter()
            robots_known: dict[str, dict] = {}  # as an enricher instance keeps it
            with counting() as counted:
                for start in range(0, entries, BATCH):  # as the handler takes them
                    known = Known(robots=robots_known)
                    for uid in uids[start:start + BATCH]:
                        enrich(storage, analyzer, EnrichMessage(source.source_id, uid), time.time(), known)
                    storage.queues.send_render([f"s/{source.source_id}/feed"])
            best_enrich = min(best_enrich, time.perf_counter() - started)
            calls = counted
            started = time.perf_counter()
            for n in range(entries):
                result = fetch(f"{origin.url}/story/{n}", storage.settings)
                extract_article(result.body, result.url)
            best_baseline = min(best_baseline, time.perf_counter() - started)
        return {"entries": entries, "enrich_ms": 1000 * best_enrich / entries,
                "baseline_ms": 1000 * best_baseline / entries, "calls": dict(calls)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=ENTRIES, help="new entries analyzed")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds, the best one reported")
    args = parser.parse_args()
    result = run(args.entries, args.rounds)
    calls = result["calls"]
    totals = ("items written", "attributes updated")
    requests = sum(n for key, n in calls.items() if key not in totals)
    print(f"enricher, mock analyzer without latency: {result['enrich_ms']:.1f} ms per entry; "
          f"downloading and extracting the same article alone: {result['baseline_ms']:.1f} ms "
          f"(ratio {result['enrich_ms'] / result['baseline_ms']:.2f}x)")
    print(f"per entry: {requests / result['entries']:.1f} AWS requests, "
          f"{calls['items written'] / result['entries']:.1f} DynamoDB items written "
          f"({json.dumps({k: v for k, v in sorted(calls.items()) if k not in totals})} for {result['entries']})")


if __name__ == "__main__":
    main()

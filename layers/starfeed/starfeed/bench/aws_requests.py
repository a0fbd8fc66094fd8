"""What a fetch and a render ask of AWS: requests, and DynamoDB items written, counted on the local
stack (moto) for the cases that run all day. At scale these are the bill: a DynamoDB write costs
five times a read, and a feed fetched every 15 minutes is fetched 2,880 times a month.

    python -m starfeed.bench.aws_requests [--json] [--items 50] [--members 200]

Cases, on a 50-item feed in a collection of 200 sources:
- unchanged, 304: the origin answers the conditional GET with 304;
- unchanged, 200: the same items under a new ETag (servers that ignore validators);
- one new entry;
- the source's render; the collection's render;
- one new entry again, with 100 rules saved (the fetch reads them once);
- the rules' sweep after a rule is added that blocks 5 of the 52 entries.

Every botocore call made while the job runs is counted (the fetch's render request and raw
payload included). Run from another checkout's directory, with that checkout's layer on
PYTHONPATH, to measure the code before a change: the job entry points are the same.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from starfeed.fetch.job import fetch_source
from starfeed.local.aws_calls import observed
from starfeed.local.loopback import Loopback
from starfeed.local.stack import LocalStack
from starfeed.model import Rule, RuleAction, RuleField, RuleMatch
from starfeed.render.job import render_targets
from starfeed.rules.sweep import run_sweep
from starfeed.settings import Settings
from starfeed.sources import add_source
from starfeed.store import Storage

ITEMS = 50
MEMBERS = 200
_WRITES = {"PutItem", "UpdateItem", "DeleteItem"}


class _Feed:
    """The origin's document: items posted an hour apart, an ETag, and a revision of the channel
    (other bytes, the same items) that moves when asked."""

    items, etag, revision = ITEMS, '"1"', 0
    first_post = time.time() - 3600 * (ITEMS + 24)  # the newest items added stay in the past

    @classmethod
    def body(cls) -> bytes:
        items = "".join(
            f"<item><title>Post {n}</title><link>https://bench.example/{n}</link><guid>urn:bench:{n}</guid>"
            f"<pubDate>{time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime(cls.first_post + 3600 * n))}"
            f"</pubDate><description>Text of post {n}</description></item>" for n in range(cls.items))
        return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>Bench</title>'
                f"<link>https://bench.example/</link><description>d</description>"
                f"<generator>bench r{cls.revision}</generator>{items}</channel></rss>").encode()


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # the http.server interface
        if self.headers.get("If-None-Match") == _Feed.etag:
            self.send_response(304)
            self.send_header("ETag", _Feed.etag)
            self.end_headers()
            return
        body = _Feed.body()
        self.send_response(200)
        self.send_header("Content-Type", "application/rss+xml")
        self.send_header("ETag", _Feed.etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextmanager
def counting():
    """Every AWS request made inside, by service and operation, the DynamoDB items written, and
    the attributes UpdateItem requests name."""
    calls = Counter()

    def count(service, operation, params):
        calls[f"{service}:{operation}"] += 1
        if service != "dynamodb":
            return
        if operation in _WRITES:
            calls["items written"] += 1
        if operation == "UpdateItem":  # the fetch's outcome on its source, mostly
            calls["attributes updated"] += len(params.get("ExpressionAttributeNames", {}))
        elif operation == "BatchWriteItem":
            calls["items written"] += sum(len(v) for v in params["RequestItems"].values())
        elif operation == "TransactWriteItems":
            calls["items written"] += len(params["TransactItems"])

    with observed(count):
        yield calls


@contextmanager
def stack_with_origin(handler: type[BaseHTTPRequestHandler], name: str):
    """A local stack (its state in a temporary folder, removed after) and a loopback origin."""
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix=f"starfeed-{name}-") as state:
        stack = LocalStack({"STARFEED_ALLOW_PRIVATE_NETWORKS": "1", "STARFEED_PUBLIC_URL": "http://bench.test"},
                           state=Path(state))
        origin = Loopback(handler)
        try:
            yield stack, Storage(Settings.from_env(stack.environment)), origin
        finally:
            origin.close()
            stack.close()


def run(items: int = ITEMS, members: int = MEMBERS) -> dict[str, Counter]:
    _Feed.items, _Feed.first_post = items, time.time() - 3600 * (items + 24)
    with stack_with_origin(_Handler, "aws-requests") as (stack, storage, origin):
        now = time.time()
        source, _ = add_source(storage, f"{origin.url}/feed.xml", now - 3600, ["bench"], backfill=items)
        for n in range(members - 1):  # the rest of the collection: other sites' feeds
            add_source(storage, f"https://member{n}.example/feed.xml", now, ["bench"])
        fetch_source(storage, source.source_id)  # the first fetch stores the items
        render_targets(storage, ["c/bench/feed"])  # a collection rendered once before
        results = {}

        def measure(name, job):
            with counting() as calls:
                job()
            results[name] = calls

        measure("fetch: unchanged, 304", lambda: fetch_source(storage, source.source_id))
        _Feed.etag, _Feed.revision = '"2"', _Feed.revision + 1  # other bytes, the same items
        measure("fetch: unchanged, 200", lambda: fetch_source(storage, source.source_id))
        _Feed.items, _Feed.etag = items + 1, '"3"'
        measure("fetch: one new entry", lambda: fetch_source(storage, source.source_id))
        measure("render: the source", lambda: render_targets(storage, [f"s/{source.source_id}/feed"]))
        measure(f"render: a collection of {members}", lambda: render_targets(storage, ["c/bench/feed"]))
        rules = [Rule(f"bench-{n}", RuleAction.BLOCK, (RuleMatch(RuleField.TITLE, f"unmatched phrase {n}"),))
                 for n in range(100)]
        storage.rules.save(rules, 0, "2026-01-01T00:00:00Z")
        run_sweep(storage, time.time())  # judged by the 100 rules, no entry changes
        _Feed.items, _Feed.etag = items + 2, '"4"'
        measure("fetch: one new entry, 100 rules", lambda: fetch_source(storage, source.source_id))
        five = Rule("bench-five", RuleAction.BLOCK, (RuleMatch(RuleField.TITLE, "/^Post [0-4]$/"),))
        storage.rules.save([*rules, five], 1, "2026-01-01T00:00:01Z")
        measure(f"the rules' sweep: {items + 2} entries, 5 of them blocked",
                lambda: run_sweep(storage, time.time()))
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.add_argument("--items", type=int, default=ITEMS, help="the feed's items")
    parser.add_argument("--members", type=int, default=MEMBERS, help="the sources of its collection")
    args = parser.parse_args()
    results = run(args.items, args.members)
    if args.json:
        print(json.dumps(results, indent=2, sort_keys=True))
        return
    totals = ("items written", "attributes updated")
    for name, calls in results.items():
        requests = sum(count for key, count in calls.items() if key not in totals)
        detail = ", ".join(f"{key} {count}" for key, count in sorted(calls.items()) if key not in totals)
        print(f"{name}: {requests} AWS requests, {calls['items written']} DynamoDB items written, "
              f"{calls['attributes updated']} attributes updated ({detail})")


if __name__ == "__main__":
    main()

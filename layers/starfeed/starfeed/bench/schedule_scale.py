"""The scheduler run at scale: leased sources per second, index items read and DynamoDB requests
per run, against the local stack; with --sizes, how its time grows with the number of sources.

    python -m starfeed.bench.schedule_scale [--sources 100000] [--due 1000]
    python -m starfeed.bench.schedule_scale --sizes 10000,30000,100000 [--due-share 0.0076 | --due N] [--json]

One size (the default): one run over 100,000 sources of which 1,000 are due. The target
(docs/design.md#target-scheduling): the run should read about as many index items as there are due
sources, take that many leases and enqueue that many messages (SendMessageBatch), whatever the total.

Several sizes: each size is filled afresh and run once. By default the due share is
fixed at 2.2 / 288 (schedsim's 2.2 fetches per feed a day at the default settings, over 288 runs a
day at rate(5 minutes)): what a run meets in a deployment of that size, so the 100,000-source run
is a tenth of the 1,000,000-source one. With --due N the due count is fixed instead, which isolates
the index (its reads should not grow with the total). The fit is time ∝ N^b by least squares on
log-log, for the run, each phase and the hourly pace Scan.

Times are moto's (an emulator in this process, over loopback HTTP), not AWS's: they give the
exponent, not the deployed seconds. Deployed, each request is a network round trip instead (a
DynamoDB UpdateItem a few ms, an SQS SendMessageBatch of ten about 20 ms); docs/scale.md turns the
request counts measured here into deployed times.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from starfeed.local.aws_calls import observed
from starfeed.local.snapshot import _backends, _insert
from starfeed.local.stack import LocalStack
from starfeed.model import Source
from starfeed.schedule import tick
from starfeed.schedule.tick import run_tick
from starfeed.settings import Settings
from starfeed.store import Storage
from starfeed.store.sources import source_record

DAY = 86400
RUNS_PER_DAY = 288  # rate(5 minutes)
FETCHES_PER_FEED_PER_DAY = 2.2  # schedsim, default settings (README, Benchmarks)
DUE_SHARE = FETCHES_PER_FEED_PER_DAY / RUNS_PER_DAY
SOURCES_PER_HOST = 20  # hosts in the run's pause read: one per 20 sources (5,000 at 100,000)
PHASES = ("query_s", "leases_s", "pauses_s", "enqueue_s")


def fit_exponent(sizes: list[float], values: list[float]) -> float | None:
    """b in value ∝ size^b: the least-squares slope of log(value) on log(size); None without two
    distinct sizes with positive values."""
    points = [(math.log(n), math.log(v)) for n, v in zip(sizes, values) if n > 0 and v > 0]
    if len({x for x, _ in points}) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def item_bytes(value) -> int:
    """DynamoDB's size of an attribute value in its wire form ({"S": ...}, {"N": ...}, ...), per
    the developer guide's rules: strings and binaries their length, a number about one byte per
    two digits plus one, a list or map 3 bytes plus one per element plus its elements (a map's
    names count as strings); an item is the sum of its names and values."""
    (kind, inner), = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "N":
        return len(inner.strip("-").replace(".", "").lstrip("0")) // 2 + 1
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(1 + item_bytes(v) for v in inner)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + item_bytes(v) for k, v in inner.items())
    return len(str(inner))


def record_bytes(attributes: dict) -> int:
    return sum(len(name.encode()) + item_bytes(value) for name, value in attributes.items())


def _publications(rng: random.Random, now: float) -> list[float]:
    """The latest 20 posts of a feed whose rate is heavy-tailed (median one a day, as schedsim's
    generated populations), ascending."""
    gap = DAY / math.exp(rng.gauss(0.0, 1.3))
    last = now - rng.uniform(0, gap)
    return [round(last - k * gap * rng.uniform(0.5, 1.5)) for k in reversed(range(20))]


def _source(n: int, prefix: str, now: float, due: bool, hosts: int, rng: random.Random, full: bool = False) -> Source:
    """A source as the scheduler and the pace read it (publications, hour counts, schedule). full:
    also the fetches and decisions a source remembers (settings.fetch_history, decision_history),
    for its item's size alone (moto keeps
    every nested value as an object: 100,000 of those would cost gigabytes here)."""
    publications = _publications(rng, now)
    hours = [0] * 24
    for t in publications:
        hours[int(t % DAY // 3600)] += 1
    source = Source(source_id=f"{prefix}{n:010x}", url=f"https://host{n % hosts}.example/feed{n}.xml",
                    title=f"Feed {n}", site_url=f"https://host{n % hosts}.example/", created_at=now - 30 * DAY,
                    status="ok", http_status=304, interval=900, reason="rhythm", etag=f'"{n:08x}"',
                    last_modified="Mon, 01 Jan 2024 00:00:00 GMT", last_fetch_at=now - 900,
                    last_success_at=now - 900, entry_count=50, publications=publications,
                    ewma_interarrival=(publications[-1] - publications[0]) / 19, hour_counts=hours,
                    next_check_at=now - 60 if due else now + 3600 + n)
    if full:
        source.fetch_history = [{"at": "2024-01-01T00:00:00Z", "status": 304, "ms": 180}
                                for _ in range(Settings.fetch_history)]  # as fetch/record.remember_fetch writes a 304
        source.decisions = [{"at": "2024-01-01T00:00:00Z", "reason": "rhythm", "before": 900, "after": 960}
                            for _ in range(Settings.decision_history)]
    return source


def _deep_size(publications: list[list[float]]) -> int:
    """Python's memory for the pace's input: the outer list, each inner list and its floats."""
    return sys.getsizeof(publications) + sum(sys.getsizeof(p) + 24 * len(p) for p in publications)


class _Run:
    """One filled table and one scheduler run over it, with the run's phases and requests."""

    def __init__(self, stack: LocalStack, storage: Storage):
        self.stack, self.storage = stack, storage
        self.queries: list = []
        self.phases: Counter = Counter()
        self.requests: Counter = Counter()
        self.pace_requests: Counter = Counter()
        self.pace_input_bytes = 0
        self.in_pace = False
        self._wrap(storage.records.Source.due, "query", None, record=self.queries)  # items each Query read
        self._wrap(storage.sources, "due_ids", "query_s")
        self._wrap(storage.sources, "take_lease", "leases_s")
        self._wrap(storage.hosts, "paused", "pauses_s")
        self._wrap(storage.queues, "send_fetches", "enqueue_s")
        # Once an hour the run also steps the pace: one Scan of every source (schedule/pace.py).
        self._wrap(storage.sources, "scheduled_publications", "pace_scan_s", pace=True)
        self._wrap(tick, "next_pace", "pace_compute_s", pace=True)
        self._wrap(storage.pace, "save", None, pace=True)  # the step's one write (its read is every run's)

    def _wrap(self, owner, name, phase, record=None, pace=False):
        original = getattr(owner, name)

        def wrapper(*a, **k):
            started, self.in_pace = time.monotonic(), pace
            try:
                result = original(*a, **k)
            finally:
                self.in_pace = False
            if record is not None:
                record.append(result)
            if name == "scheduled_publications":
                self.pace_input_bytes = _deep_size(result)
            if phase:
                self.phases[phase] += time.monotonic() - started
            return result
        setattr(owner, name, wrapper)

    def count(self, service, operation, params):
        (self.pace_requests if self.in_pace else self.requests)[f"{service}:{operation}"] += 1

    def measure(self, sources: int, due: int, prefix: str = "00", seed: int = 1) -> dict:
        storage, stack = self.storage, self.stack
        dynamodb, _, sqs = _backends()
        table = dynamodb.get_table(stack.stack.refs["SourcesTable"])
        table.items.clear()  # a fresh population (moto's indexes are read from table.items)
        dynamodb.get_table(stack.stack.refs["StatsTable"]).items.clear()  # the pace is stepped again
        # An empty fetch queue (PurgeQueue allows one a minute): moto's FIFO send compares each
        # message with every queued one (deduplication), so a full queue would slow the next size.
        sqs.get_queue(stack.queue("FetchQueue").rsplit("/", 1)[-1])._messages = []
        self.queries.clear()
        self.phases.clear()
        self.requests.clear()
        self.pace_requests.clear()
        now, rng, hosts = time.time(), random.Random(seed), max(1, sources // SOURCES_PER_HOST)
        started = time.monotonic()
        for n in range(sources):
            source = _source(n, prefix, now, n < due, hosts, rng)
            _insert(table, source_record(storage.records, source, storage.settings).serialize())
        setup_s = time.monotonic() - started
        full = source_record(storage.records, _source(0, prefix, now, True, hosts, random.Random(seed), full=True),
                             storage.settings).serialize()
        with observed(self.count):
            started = time.monotonic()
            report = run_tick(storage, now)
            wall_s = time.monotonic() - started
        read = sum(q.total_count for q in self.queries)
        queued = int(stack.sqs.get_queue_attributes(QueueUrl=stack.queue("FetchQueue"),
                                                    AttributeNames=["ApproximateNumberOfMessages"])
                     ["Attributes"]["ApproximateNumberOfMessages"])
        pace_s = self.phases["pace_scan_s"] + self.phases["pace_compute_s"]
        run_s = wall_s - pace_s  # what every run takes; the pace step is once an hour
        dynamodb_requests = sum(v for k, v in self.requests.items() if k.startswith("dynamodb:"))
        return {
            "sources": sources, "due": due, "index_items_read": read, "index_queries": len(self.queries),
            "leased": report.leased, "enqueued": report.enqueued, "queue_depth": queued,
            "items_read_per_due_source": round(read / max(1, due), 3),
            "leased_per_s": round(report.leased / run_s, 1) if run_s > 0 else None,
            "dynamodb_requests_per_run": dynamodb_requests,
            "requests_per_run": dict(sorted(self.requests.items())),
            "pace_requests": dict(sorted(self.pace_requests.items())),
            "pace_input_bytes": self.pace_input_bytes,
            "source_item_bytes": record_bytes(full),  # a source with its histories full
            "setup_s": round(setup_s, 1), "scheduler_run_wall_s": round(wall_s, 2), "run_s": round(run_s, 2),
            "other_s": round(run_s - sum(self.phases[p] for p in PHASES), 2),
            # Against moto: its FIFO SendMessageBatch does work per queued message,
            # so enqueue_s is the emulator's; real SQS takes ~20 ms a batch of ten.
            "phases": {k: round(v, 3) for k, v in sorted(self.phases.items())}}


def scaling(rows: list[dict]) -> dict:
    """The exponent b of time ∝ sources^b for the run, each phase and the pace Scan, and of the
    reads and requests."""
    sizes = [r["sources"] for r in rows]

    def b(values):
        value = fit_exponent(sizes, values)
        return None if value is None else round(value, 2)
    return {"run_s": b([r["run_s"] for r in rows]),
            # moto's FIFO send compares each message with every queued one: without it, the run
            # as AWS would scale it (its requests are the same; their latency is not moto's).
            "run_s_without_enqueue": b([r["run_s"] - r["phases"].get("enqueue_s", 0) for r in rows]),
            **{p: b([r["phases"].get(p, 0) for r in rows]) for p in (*PHASES, "pace_scan_s", "pace_compute_s")},
            "index_items_read": b([r["index_items_read"] for r in rows]),
            "dynamodb_requests_per_run": b([r["dynamodb_requests_per_run"] for r in rows]),
            "pace_input_bytes": b([r["pace_input_bytes"] for r in rows])}


def table(rows: list[dict], exponents: dict) -> str:
    head = ("sources", "due", "leased", "leased/s", "leases/s", "items read", "reads/due", "DDB req/run", "run s",
            "query s", "leases s", "pauses s", "enqueue s", "pace Scan s", "pace compute s")
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for r in rows:
        p = r["phases"]
        lines.append(" | ".join(str(v) for v in (
            f"{r['sources']:,}", f"{r['due']:,}", f"{r['leased']:,}", r["leased_per_s"],
            round(r["leased"] / p["leases_s"], 1) if p.get("leases_s") else None, f"{r['index_items_read']:,}",
            r["items_read_per_due_source"], f"{r['dynamodb_requests_per_run']:,}", r["run_s"], p.get("query_s", 0),
            p.get("leases_s", 0), p.get("pauses_s", 0), p.get("enqueue_s", 0), p.get("pace_scan_s", 0),
            p.get("pace_compute_s", 0))))
    fitted = ", ".join(f"{k} {v}" for k, v in exponents.items())
    return ("\n".join(lines) + "\n(leased/s: leases over the run's wall time; leases/s: over the lease phase alone)"
            + f"\nexponent b (time or count ∝ sources^b): {fitted}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=100_000, help="one run over this many sources")
    parser.add_argument("--due", type=int, default=None,
                        help="due sources: one run's (default 1,000); with --sizes, the same at every size")
    parser.add_argument("--sizes", help="comma-separated sizes (10000,30000,100000): a run each, and the fit")
    parser.add_argument("--due-share", type=float, default=DUE_SHARE,
                        help=f"with --sizes, the due share at every size (default 2.2/288 = {DUE_SHARE:.4f})")
    parser.add_argument("--json", action="store_true", help="with --sizes, print the rows and the fit as JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    stack = LocalStack(state=Path(tempfile.mkdtemp()))
    try:
        run = _Run(stack, Storage(Settings.from_env(stack.environment)))
        if not args.sizes:
            print(json.dumps(run.measure(args.sources, 1_000 if args.due is None else args.due), indent=1))
            return
        rows = []
        for index, size in enumerate(int(s) for s in args.sizes.split(",")):
            due = args.due if args.due is not None else round(size * args.due_share)
            rows.append(run.measure(size, due, prefix=f"{index:02x}", seed=index + 1))
            if not args.json:
                print(f"{size:,} sources: {rows[-1]['run_s']} s a run, pace Scan "
                      f"{rows[-1]['phases'].get('pace_scan_s', 0)} s", file=sys.stderr, flush=True)
        exponents = scaling(rows)
        if args.json:
            print(json.dumps({"rows": rows, "exponents": exponents}, indent=1))
        else:
            print(table(rows, exponents))
            print("(times are moto's, on this machine; the counts are the run's own)")
    finally:
        stack.close()


if __name__ == "__main__":
    main()

"""The monthly bill (docs/design.md#target-cost): measured counts and durations times dated list prices.

    python -m starfeed.bench.cost [--json] [--feeds 1000] [--log-bytes N] [--metrics N]

What it measures, on the local stack (moto in this process, the functions driven by their real
event sources, a loopback origin):
- a fetch cycle, one scheduler tick and every queue drained, for SOURCES sources answering 304,
  then 200 with the same bytes, then with other bytes and the same items (again with every
  entry's sighting due), then one new entry each, then three: every AWS
  request by function, service and operation, the SQS requests of the event source mappings
  (receive, delete) included; DynamoDB capacity units estimated from the item sizes moto holds
  (billing rules: reads per 4 KB, half for eventually consistent reads; writes per 1 KB of the
  larger of the item before and after; moto's own ConsumedCapacity is a constant, not used);
- the scheduler's tick with nothing due, and its hourly pace Scan;
- a reader's request through the api function (a cache miss, a hit within the window, a
  revalidation, with its counters' flush; and one source's own feed, built from the store);
- each invocation's duration, split into CPU time (this thread's) and waiting (the rest);
- the bytes the functions log at INFO, as Lambda's JSON log format writes them;
- sizes: a source's item, an entry's item, the rendered objects, a raw payload.

Fetches per source per month, and their 304 / 200 / new-entry mix, come from the scheduling
simulation (bench/schedsim.py) on a generated population of --feeds feeds over 30 days.

The model (printed with the bill): Lambda bills configured memory x duration. Duration at memory
M is the measured CPU time x max(1, 1769 / M) (Lambda gives a whole vCPU at 1,769 MB, a share of
it below) plus the measured waiting, which does not scale, plus ORIGIN_SECONDS per fetch for a
real origin's round trip (the loopback answers at once). A tick runs every 5 minutes whatever the
load; the event source mappings long-poll their queues whatever the load (ESM_IDLE_RECEIVES).
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import math
import random
import time
import tracemalloc
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

from botocore.client import BaseClient

from starfeed import observe

DAY, MONTH_SECONDS = 86400, 30 * 86400
HOURS_PER_MONTH = 720
TICKS_PER_MONTH = MONTH_SECONDS // 300  # template.yaml's ScheduleRate: rate(5 minutes)
PACE_STEPS_PER_MONTH = HOURS_PER_MONTH  # schedule/pace.py's EVERY: an hour
SOURCES = 10  # sources measured in each fetch cycle
FULL_VCPU_MB = 1769

# Prices -------------------------------------------------------------------------------------

PRICES_DATE = "2026-11"
PRICES_REGION = "us-east-1"


@dataclass(frozen=True)
class Price:
    usd: float
    per: str
    source: str


_LAMBDA = "https://aws.amazon.com/lambda/pricing/"
_SQS = "https://aws.amazon.com/sqs/pricing/"
_DDB = "https://aws.amazon.com/dynamodb/pricing/on-demand/"
_S3 = "https://aws.amazon.com/s3/pricing/"
_EB = "https://aws.amazon.com/eventbridge/pricing/"
_APIGW = "https://aws.amazon.com/api-gateway/pricing/"
_CW = "https://aws.amazon.com/cloudwatch/pricing/"
_EC2 = "https://aws.amazon.com/ec2/pricing/on-demand/#Data_Transfer"
_XRAY = "https://aws.amazon.com/xray/pricing/"

# List prices, us-east-1, as read in PRICES_DATE from the page each names.
PRICES: dict[str, Price] = {
    "lambda_gb_second_arm64": Price(0.0000133334, "GB-second", _LAMBDA),
    "lambda_request": Price(0.20 / 1e6, "request", _LAMBDA),
    "sqs_standard_request": Price(0.40 / 1e6, "request (64 KB chunk)", _SQS),
    "sqs_fifo_request": Price(0.50 / 1e6, "request (64 KB chunk)", _SQS),
    "dynamodb_write_unit": Price(0.625 / 1e6, "write request unit (1 KB)", _DDB),
    "dynamodb_read_unit": Price(0.125 / 1e6, "read request unit (4 KB strongly consistent)", _DDB),
    "dynamodb_storage": Price(0.25, "GB-month", _DDB),
    "s3_storage": Price(0.023, "GB-month", _S3),
    "s3_put": Price(0.005 / 1000, "PUT, COPY, POST, LIST request", _S3),
    "s3_get": Price(0.0004 / 1000, "GET and other request", _S3),
    "egress": Price(0.09, "GB out to the internet (after the free 100 GB)", _EC2),
    "eventbridge_put_events": Price(1.00 / 1e6, "custom event (64 KB chunk)", _EB),
    "scheduler_invocation": Price(1.00 / 1e6, "EventBridge Scheduler invocation", _EB),
    "apigw_http_request": Price(1.00 / 1e6, "HTTP API request (first 300 M)", _APIGW),
    "logs_ingest": Price(0.50, "GB ingested (standard)", _CW),
    "logs_storage": Price(0.03, "GB-month archived (compressed)", _CW),
    "custom_metric": Price(0.30, "metric-month (first 10,000)", _CW),
    "alarm": Price(0.10, "standard alarm-month", _CW),
    "dashboard": Price(3.00, "dashboard-month past the free 3", _CW),
    "xray_trace": Price(5.00 / 1e6, "trace recorded", _XRAY),
}

# The always-free tiers (they do not expire after 12 months), in the units above.
FREE_TIER: dict[str, float] = {
    "lambda_request": 1_000_000,
    "lambda_gb_second_arm64": 400_000,
    "sqs_request": 1_000_000,  # standard and FIFO together
    "dynamodb_storage": 25.0,
    "egress": 100.0,
    "eventbridge_scheduler": 14_000_000,
    "custom_metric": 10,
    "alarm": 10,
    "dashboard": 3,
    "logs_gb": 5.0,  # ingestion and storage together
    "xray_trace": 100_000,
}

# Assumptions, named so they can be changed ----------------------------------------------------

# Powertools Logger's one JSON line per fetch, its keys included (644 bytes measured on a
# typical fetch), and the X-Ray trace id Lambda adds. The bytes the code's own message takes
# are printed beside it.
LOG_BYTES_PER_FETCH = 700
# Powertools Metrics' custom metrics (EMF), each name x dimension set one metric: those sent
# without DetailedMetrics (observe.CORE, FetchErrors as two classes).
CUSTOM_METRICS = observe.metric_count(detailed_metrics=False)
# template.yaml's five alarms, billed per metric they read: dead letters (4 queues), the fetch
# error rate (2), freshness, GitHub stopped, API 5xx.
ALARMS = 9
# X-Ray: template.yaml traces every function but the api (each reader request would be a trace);
# Lambda samples the first request a second and 5% of the rest, at these rates nearly all.
UNTRACED = ("ApiFunction",)
DASHBOARDS = 1
LOG_RETENTION_MONTHS = 0.5  # ApiAccessLogs keeps 14 days; the functions' groups the same assumed
LOG_COMPRESSION = 0.15  # archived bytes per ingested byte (CloudWatch bills storage compressed)
# API Gateway's access log line (template.yaml's AccessLogSettings Format) with typical values.
ACCESS_LOG_BYTES = len(json.dumps({
    "requestId": "JYb1oiFkIAMEVjQ=", "ip": "203.0.113.200", "time": "01/Nov/2026:12:00:00 +0000",
    "method": "GET", "path": "/c/news/feed.xml", "status": "304", "bytes": "0", "latencyMs": "42",
    "userAgent": "Miniflux/2.2.6 (+https://miniflux.app; 3 subscribers)"})) + 1
# A real origin's answer (DNS, TLS, transfer); the loopback origin takes none.
ORIGIN_SECONDS = 0.25
# Lambda's SQS event source mapping long-polls each queue with several pollers whatever the load:
# five pollers, each a 20-second ReceiveMessage, is 15 a minute per queue (not on a pricing page:
# an estimate; with messages flowing the same calls return them).
ESM_IDLE_RECEIVES_PER_MINUTE = 15
# A 200 with no new entry (a server without validators, or one that ignores them) sends the bytes
# it sent last time this often; the rest differ in something that is not an entry (a build date,
# an ad, a comment count). Not measured anywhere public: half, named so it can be changed.
SAME_BYTES_SHARE = 0.5
# Readers: how many conditional requests are answered 304, and a 200's bytes (gzip).
READER_NOT_MODIFIED_SHARE = 0.5
READER_BODY_BYTES = 30_000
# A reader's request misses the api's in-memory window (settings.api_cache_ttl, 2 s) unless the
# same object was asked within it: at these rates almost every request is a conditional GET.
READER_S3_GET_SHARE = 1.0
# The share of reader requests for one source's own feed (built from the store per request past
# the api's window) rather than the aggregate or a collection (objects in S3): an assumption.
READER_SOURCE_FEED_SHARE = 0.25
READER_RUNS = 9  # times each reader's request is measured (reader() in measure)
COUNTER_FLUSH_SECONDS = 10.0  # store/counters.py: one UpdateItem per instance per 10 s at most
API_INSTANCES = 1  # warm api instances at these rates (a few requests a second at most)
# The pace Scan's pages: one 1 MB page a round trip of about this long (DynamoDB, in-region).
PACE_SCAN_PAGE_SECONDS = 0.1

# The reduction proposed next (a what-if: the code does not do it yet), for the largest line left,
# DynamoDB writes: the scheduler's lease taken on a small item of its own (1 write unit) instead
# of on the 2 KB source item (2). (Done and measured: a 304 and a 200 with the bytes stored last
# store nothing; a stored fetch is one object; a source's own feed is built when read; the taps
# of a fetcher invocation are one object; custom metrics within the free ten; no pace Scan idle;
# sightings in one digest write a feed; source items under 2 KB.)
REDUCED = {"wru_saved_per_fetch": 1.0}

SIZES = (1_000, 10_000, 100_000, 1_000_000)
READER_RATES = (100, 1_000, 10_000)
TARGET_FEEDS, TARGET_USD = 10_000, 5.0


# Measurement ----------------------------------------------------------------------------------

ESM = "event source mapping"  # the requests Lambda's pollers make, outside any function


@dataclass
class Tally:
    """AWS requests by (actor, "service:operation"), and DynamoDB capacity units by actor."""

    requests: Counter = field(default_factory=Counter)
    rru: Counter = field(default_factory=Counter)
    wru: Counter = field(default_factory=Counter)
    sqs_fifo: Counter = field(default_factory=Counter)  # SQS requests on FIFO queues, by actor

    def total(self, actor: str | None = None) -> int:
        return sum(n for (a, _), n in self.requests.items() if actor is None or a == actor)

    def by_operation(self) -> Counter:
        out = Counter()
        for (_, op), n in self.requests.items():
            out[op] += n
        return out


class _Moto:
    """Item sizes as moto holds them (it runs in this process), by DynamoDB's size rules."""

    def __init__(self):
        from moto.backends import get_backend
        from moto.core import DEFAULT_ACCOUNT_ID

        from starfeed.local.template import REGION
        self._backend = get_backend("dynamodb")[DEFAULT_ACCOUNT_ID][REGION]

    def table(self, name: str):
        try:
            return self._backend.get_table(name)
        except Exception:  # noqa: BLE001 - an unknown table: no size
            return None

    def item(self, table_name: str, key: dict):
        """A copy of the item as moto holds it now (None: there is none)."""
        from moto.dynamodb.models.dynamo_type import DynamoType

        table = self.table(table_name)
        if table is None or table.hash_key_attr not in key:
            return None
        range_key = DynamoType(key[table.range_key_attr]) if table.range_key_attr in key else None
        try:
            item = table.get_item(DynamoType(key[table.hash_key_attr]), range_key)
        except Exception:  # noqa: BLE001 - a key moto cannot look up: no item
            return None
        return copy.deepcopy(item) if item else None

    def item_size(self, table_name: str, key: dict) -> int:
        item = self.item(table_name, key)
        return item.size() if item else 0

    def write_units(self, table_name: str, before, after) -> int:
        """A write's units: the table's (per 1 KB of the larger of the item before and after), plus
        each global secondary index's the write touches (billing rules: an index entry put, updated
        or deleted costs the units of its projection; one whose key changes, a delete and a put;
        local secondary indexes alike)."""
        units = _units(max(before.size() if before else 0, after.size() if after else 0), 1024)
        table = self.table(table_name)
        for index in ([*table.global_indexes, *table.indexes] if table else []):  # local ones bill the same
            keys = index.schema_key_attrs
            old, new = ([index.project(i) if i is not None and all(k in i.attrs for k in keys) else None
                         for i in (before, after)])
            if old is not None and new is not None and all(old.attrs[k] == new.attrs[k] for k in keys):
                units += 0 if old.attrs == new.attrs else _units(new.size(), 1024)
            else:
                units += sum(_units(i.size(), 1024) for i in (old, new) if i is not None)
        return units

    def key_of(self, table_name: str, item: dict) -> dict:
        table = self.table(table_name)
        if table is None:
            return {}
        return {k: item[k] for k in (table.hash_key_attr, table.range_key_attr) if k and k in item}

    def average_size(self, table_name: str) -> float:
        table = self.table(table_name)
        sizes = [item.size() for item in table.all_items()] if table else []
        return sum(sizes) / len(sizes) if sizes else 0.0

    @staticmethod
    def json_size(item: dict) -> int:
        from moto.dynamodb.models.dynamo_type import DynamoType, bytesize
        return sum(bytesize(k) + DynamoType(v).size() for k, v in item.items())


def _units(size: float, unit: int) -> int:
    return max(1, math.ceil(size / unit))


def _capacity(moto: _Moto, operation: str, params: dict, before: dict, response: dict | None) -> tuple[float, float]:
    """(read units, write units) of one DynamoDB request, from item sizes (billing rules)."""
    response = response or {}
    table = params.get("TableName", "")
    read_factor = 1.0 if params.get("ConsistentRead") else 0.5
    if operation == "GetItem":
        return _units(moto.item_size(table, params["Key"]), 4096) * read_factor, 0
    if operation == "BatchGetItem":
        rru = 0.0
        for name, request in params["RequestItems"].items():
            factor = 1.0 if request.get("ConsistentRead") else 0.5
            rru += sum(_units(moto.item_size(name, key), 4096) * factor for key in request["Keys"])
        return rru, 0
    if operation in ("Query", "Scan"):
        # Billed on the items read whole (a projection does not shrink them): look each up by its
        # table key; an index item without the table's key counts as returned.
        total = 0
        for item in response.get("Items", []):
            key = moto.key_of(table, item)
            full = moto.item_size(table, key) if key and "IndexName" not in params else 0
            total += full or moto.json_size(item)
        return _units(total, 4096) * read_factor, 0
    if operation in WRITES:
        return 0, sum(moto.write_units(table, before.get((table, str(key))), moto.item(table, key))
                      * (2 if operation == "TransactWriteItems" else 1)  # transactions cost twice
                      for table, key in _written(moto, operation, params))
    return 0, 0


WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")


def _written(moto: _Moto, operation: str, params: dict) -> list[tuple[str, dict]]:
    """(table, key) of each item a write request names."""
    if operation in ("PutItem", "UpdateItem", "DeleteItem"):
        table = params.get("TableName", "")
        return [(table, params.get("Key") or moto.key_of(table, params.get("Item", {})))]
    out = []
    if operation == "BatchWriteItem":
        for table, requests in params["RequestItems"].items():
            out += [(table, r["DeleteRequest"]["Key"] if "DeleteRequest" in r
                     else moto.key_of(table, r["PutRequest"]["Item"])) for r in requests]
    if operation == "TransactWriteItems":
        for action in params["TransactItems"]:
            for kind in ("Put", "Update", "Delete"):
                if kind in action:
                    table = action[kind]["TableName"]
                    out.append((table, action[kind].get("Key") or moto.key_of(table, action[kind].get("Item", {}))))
    return out


@contextmanager
def recording(tally: Tally):
    """Every botocore request made inside, by the function running it (or the event source
    mapping), with DynamoDB capacity units from item sizes."""
    from starfeed.local.runtime import CURRENT_FUNCTION

    moto = _Moto()
    original = BaseClient._make_api_call

    def call(client, operation, params):
        service = client.meta.service_model.service_name
        actor = CURRENT_FUNCTION.get() or ESM
        tally.requests[(actor, f"{service}:{operation}")] += 1
        if service == "sqs" and str(params.get("QueueUrl", "")).endswith(".fifo"):
            tally.sqs_fifo[actor] += 1
        before = {}  # (table, key) -> the item before a write
        if service == "dynamodb" and operation in WRITES:
            before = {(table, str(key)): moto.item(table, key) for table, key in _written(moto, operation, params)}
        response = None
        try:
            response = original(client, operation, params)
            return response
        finally:
            if service == "dynamodb":
                rru, wru = _capacity(moto, operation, params, before, response)
                tally.rru[actor] += rru
                tally.wru[actor] += wru

    BaseClient._make_api_call = call
    try:
        yield tally
    finally:
        BaseClient._make_api_call = original


@dataclass
class Invocation:
    function: str
    records: int
    wall: float
    cpu: float
    peak_bytes: int = 0  # Python allocations at the peak, beyond those before (when tracing)


@contextmanager
def timing(invocations: list[Invocation]):
    """Each function invocation's wall time and this thread's CPU time (moto and the origin run
    in other threads: their work is waiting, as AWS's and the origin's would be); with
    tracemalloc tracing, its peak of Python allocations (moto's threads included: an upper bound)."""
    from starfeed.local import runtime

    original = runtime.Function.invoke

    def invoke(self, event):
        tracing = tracemalloc.is_tracing()
        if tracing:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(self, event)
        finally:
            elapsed, used = time.perf_counter() - wall, time.thread_time() - cpu
            peak = tracemalloc.get_traced_memory()[1] - before if tracing else 0
            invocations.append(Invocation(self.logical_id, len(event.get("Records", [])) or 1, elapsed, used, peak))

    runtime.Function.invoke = invoke
    try:
        yield invocations
    finally:
        runtime.Function.invoke = original


class _LogBytes(logging.Handler):
    """Bytes logged at INFO and above, by function, as Lambda's JSON log format writes them."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.bytes = Counter()

    def emit(self, record):
        from starfeed.local.runtime import CURRENT_FUNCTION

        line = json.dumps({"timestamp": "2026-11-01T12:00:00.000Z", "level": record.levelname,
                           "message": record.getMessage(), "logger": record.name,
                           "requestId": "8f5a7c1e-1b2d-4e4f-9a0b-2c3d4e5f6a7b"})
        self.bytes[CURRENT_FUNCTION.get() or ESM] += len(line) + 1


@contextmanager
def info_logs():
    root = logging.getLogger()
    handler = _LogBytes()
    level, quiet = root.level, [(h, h.level) for h in root.handlers]
    for h, _ in quiet:
        h.setLevel(max(h.level, logging.WARNING))
    root.setLevel(logging.INFO)
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        for h, lvl in quiet:
            h.setLevel(lvl)


@dataclass
class Phase:
    """One measured step: its requests, capacity, invocations and log bytes."""

    tally: Tally
    invocations: list[Invocation]
    log_bytes: Counter
    fetches: int = 0

    def per(self, n: float, actor: str | None = None) -> float:
        return self.tally.total(actor) / n if n else 0.0


@contextmanager
def phase(fetches: int = 0):
    tally, invocations = Tally(), []
    with recording(tally), timing(invocations), info_logs() as logs:
        result = Phase(tally, invocations, logs.bytes, fetches)
        yield result


def measure(sources: int = SOURCES) -> dict:
    """Every measured figure the bill needs, from one local stack."""
    from moto.moto_api._internal.models import moto_api_backend

    from starfeed.bench import aws_requests
    from starfeed.local.http_bridge import http_api_event
    from starfeed.sources import add_source

    moto_api_backend.reset()  # moto's state is one per process: a second measure starts clean
    feed = aws_requests._Feed
    feed.items, feed.etag, feed.revision = aws_requests.ITEMS, '"1"', 0
    phases: dict[str, Phase] = {}
    with aws_requests.stack_with_origin(aws_requests._Handler, "cost") as (stack, storage, origin):
        now = time.time()
        ids = [add_source(storage, f"{origin.url}/feed{n}.xml", now - 3600, ["bench"], backfill=aws_requests.ITEMS)[0]
               .source_id for n in range(sources)]
        stack.run_cycle()  # the first fetches store the items; the first renders

        def due_all():
            for source_id in ids:
                storage.sources.change(source_id, {"next_check_at": time.time() - 1, "locked_until": None})

        def cycle(name: str, prepare):
            prepare()
            due_all()
            with phase(fetches=len(ids)) as p:
                stack.run_cycle()
            phases[name] = p

        def new_items(n):
            def step():
                feed.items += n
                feed.etag = f'"{feed.items}"'
            return step

        # Source items as they are after weeks of polling, their fetch and decision histories full:
        # a write costs a unit per KB of the item, and a new source's is smaller.
        for _ in range(storage.settings.fetch_history):
            due_all()
            stack.run_cycle()
        cycle("304", lambda: None)
        def new_etag(revise: bool):
            def step():
                feed.etag = f'"{feed.etag.strip(chr(34))}b"'
                feed.revision += revise
            return step

        cycle("200 same bytes", new_etag(False))
        cycle("200 other bytes", new_etag(True))
        # The same, with every entry's sighting due (STARFEED_SIGHTING_REFRESH past): what a parse
        # costs beyond, the share of parses that find them due is the bill's (units_from).
        cycle("200 other bytes, sightings due",
              lambda: (new_etag(True)(),
                       _age_sightings(storage.settings.entries_table, storage.settings.sighting_refresh + DAY)))
        cycle("one new entry", new_items(1))
        cycle("three new entries", new_items(3))
        # The tick with nothing due (the pace already stepped this hour), and the pace's step.
        with phase() as p:
            stack.tick()
        phases["idle tick"] = p
        from starfeed.local.runtime import CURRENT_FUNCTION
        from starfeed.schedule.tick import update_pace
        stored = storage.pace.load()
        storage.pace.save(stored[0], time.time() - 7200, stored[1])  # an hour old: due a step
        with phase() as p:
            running = CURRENT_FUNCTION.set("SchedulerFunction")
            wall, cpu = time.perf_counter(), time.thread_time()
            update_pace(storage, time.time())
            p.invocations.append(Invocation("SchedulerFunction", 1, time.perf_counter() - wall,
                                            time.thread_time() - cpu))
            CURRENT_FUNCTION.reset(running)
        phases["pace step"] = p
        # A reader: a miss, a hit within the window, a revalidation (304 from S3) with the
        # counters' flush due.
        api = stack.functions["ApiFunction"]

        def event():
            return http_api_event("GET", "/feed.xml", {"Host": "localhost", "Accept-Encoding": "gzip",
                                                       "User-Agent": "Miniflux/2.2"}, b"", "127.0.0.1")

        api.invoke(event())  # the cold import's own work, not counted

        def reader(name: str, prepare, request=event) -> None:
            """A reader's request measured READER_RUNS times: the run of median CPU time is kept,
            as one request takes a millisecond or two and one run is mostly noise."""
            runs = []
            for _ in range(READER_RUNS):
                prepare()
                with phase() as p:
                    api.invoke(request())
                runs.append(p)
            phases[name] = sorted(runs, key=lambda p: sum(i.cpu for i in p.invocations))[READER_RUNS // 2]

        cache = api.module.app.feed_cache._items

        def revalidation_due():
            api.invoke(event())  # cached
            for cached in cache.values():
                cached.checked_at -= 3600
            api.module.storage.counters._since -= 3600

        reader("reader: miss", cache.clear)
        reader("reader: hit", lambda: api.invoke(event()))
        reader("reader: revalidated, counters flushed", revalidation_due)
        # A reader of one source's own feed: built from the store when the window has passed.
        reader("reader: a source's feed, built", cache.clear, lambda: http_api_event(
            "GET", f"/s/{ids[0]}/feed.xml", {"Host": "localhost", "Accept-Encoding": "gzip",
                                             "User-Agent": "Miniflux/2.2"}, b"", "127.0.0.1"))

        settings = storage.settings
        sizes = {
            "source_item": _Moto().average_size(settings.sources_table),
            "entry_item": _Moto().average_size(settings.entries_table),
            "collection_entry_item": _Moto().average_size(settings.collection_entries_table),
            **_bucket_sizes(stack),
        }
        memory = {lid: f.memory for lid, f in stack.functions.items()}
        timeouts = {lid: f.timeout for lid, f in stack.functions.items()}
    return {"sources": sources, "phases": phases, "sizes": sizes, "memory": memory, "timeouts": timeouts,
            "jobs": job_counts(), "pace_cpu_per_source": pace_cpu_per_source(),
            "sighting_refresh": float(settings.sighting_refresh)}


def _age_sightings(table_name: str, seconds: float) -> None:
    """Every source's entry digest (store/digest.py) last sighted `seconds` ago: moto's items,
    changed in this process, so no request is counted."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    table = _Moto().table(table_name)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds))
    for item in table.all_items() if table else []:
        if "sighted_at" in item.attrs:
            item.attrs["sighted_at"] = DynamoType({"S": stamp})


def pace_cpu_per_source(count: int = 5000) -> float:
    """CPU seconds per scheduled source of the pace's step (schedule/pace.next_pace) on 20 recent
    publications each: what the hourly step costs beyond its Scan's pages."""
    from starfeed.schedule.pace import next_pace
    from starfeed.settings import Settings

    rng, now = random.Random(1), 1_790_000_000.0
    publications = [sorted(now - rng.uniform(0, 30 * DAY) for _ in range(20)) for _ in range(count)]
    settings = Settings()
    cpu = time.thread_time()
    next_pace(settings.initial_pace(), publications, settings, now)
    return (time.thread_time() - cpu) / count


def job_counts() -> dict:
    """bench/aws_requests' own counts of the fetch and render jobs (called alone, without the
    scheduler and the queues), in a process of its own: moto's state is one per process."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "starfeed.bench.aws_requests", "--json"],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _bucket_sizes(stack) -> dict:
    """Average object sizes: rendered feeds (the feeds bucket) and raw payloads (the raw one)."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=stack.endpoint, region_name="us-east-1",
                      aws_access_key_id="local", aws_secret_access_key="local")
    out = {}
    for name, variable in (("rendered_object", "FEEDS_BUCKET"), ("raw_payload", "RAW_BUCKET")):
        objects = s3.list_objects_v2(Bucket=stack.environment[variable]).get("Contents", [])
        out[name] = sum(o["Size"] for o in objects) / len(objects) if objects else 0.0
        out[f"{name}s"] = len(objects)
    return out


# From measurements to unit costs --------------------------------------------------------------

@dataclass
class Usage:
    """Billable units of one event (a fetch, a tick, a render...): requests by kind, capacity,
    Lambda time by function, log bytes."""

    lambda_requests: Counter = field(default_factory=Counter)  # by function
    gb_seconds: Counter = field(default_factory=Counter)  # by function
    sqs: float = 0.0
    sqs_fifo: float = 0.0
    rru: float = 0.0
    wru: float = 0.0
    s3_put: float = 0.0
    s3_get: float = 0.0
    put_events: float = 0.0
    log_bytes: float = 0.0

    def scaled(self, k: float) -> Usage:
        return Usage(Counter({f: v * k for f, v in self.lambda_requests.items()}),
                     Counter({f: v * k for f, v in self.gb_seconds.items()}),
                     self.sqs * k, self.sqs_fifo * k, self.rru * k, self.wru * k, self.s3_put * k,
                     self.s3_get * k, self.put_events * k, self.log_bytes * k)

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.lambda_requests + other.lambda_requests, self.gb_seconds + other.gb_seconds,
                     self.sqs + other.sqs, self.sqs_fifo + other.sqs_fifo, self.rru + other.rru,
                     self.wru + other.wru, self.s3_put + other.s3_put, self.s3_get + other.s3_get,
                     self.put_events + other.put_events, self.log_bytes + other.log_bytes)

    def __sub__(self, other: Usage) -> Usage:
        return self + other.scaled(-1)


def duration(cpu: float, waiting: float, memory_mb: int) -> float:
    """Seconds an invocation takes at memory_mb: CPU scales with the memory's vCPU share."""
    return cpu * max(1.0, FULL_VCPU_MB / memory_mb) + waiting


def usage_of(p: Phase, memory: dict[str, int], per: float, extra_wait: dict[str, float] | None = None) -> Usage:
    """A phase's billable units divided by `per` (its fetches, or 1)."""
    u = Usage()
    for inv in p.invocations:
        wait = max(0.0, inv.wall - inv.cpu) + (extra_wait or {}).get(inv.function, 0.0) * inv.records
        u.lambda_requests[inv.function] += 1
        u.gb_seconds[inv.function] += duration(inv.cpu, wait, memory[inv.function]) * memory[inv.function] / 1024
    for (_actor, op), n in p.tally.requests.items():
        service, operation = op.split(":", 1)
        if service == "s3" and operation in ("PutObject", "CopyObject", "ListObjectsV2"):
            u.s3_put += n
        elif service == "s3" and operation != "DeleteObject":  # DELETE is free
            u.s3_get += n
        elif service == "events" and operation == "PutEvents":
            u.put_events += n
    sqs_total = sum(n for (_, op), n in p.tally.requests.items() if op.startswith("sqs:"))
    fifo = sum(p.tally.sqs_fifo.values())
    u.sqs, u.sqs_fifo = sqs_total - fifo, fifo
    u.rru, u.wru = sum(p.tally.rru.values()), sum(p.tally.wru.values())
    u.log_bytes = sum(p.log_bytes.values())
    return u.scaled(1 / per) if per else u


@dataclass
class Population:
    """Per source per month, from the scheduling simulation."""

    fetches: float
    not_modified: float  # fetches answered 304
    with_new: float  # fetches that found new entries
    new_entries: float
    errors: float  # 429 / 5xx fetches, costed as a 304

    @property
    def unchanged_200(self) -> float:
        return max(0.0, self.fetches - self.not_modified - self.with_new - self.errors)


def simulate_population(feeds: int = 1000, seed: int = 1) -> Population:
    from starfeed.bench import schedsim

    statuses = Counter()

    class Counted(schedsim.Starfeed):
        def wait(self, t, status, new, visible, retry_after, ttl, seen):
            statuses[200 if status == 200 and new else -200 if status == 200 else status] += 1
            return super().wait(t, status, new, visible, retry_after, ttl, seen)

    start, end, population = schedsim.read_population(schedsim.generate(feeds, 30, seed))
    tally = schedsim.simulate(population, Counted, start, end, random.Random(7))
    per = feeds * (end - start) / MONTH_SECONDS
    errors = sum(n for status, n in statuses.items() if status not in (200, -200, 304))
    return Population(tally.fetches / per, tally.not_modified / per, statuses[200] / per,
                      tally.new_entries / per, errors / per)


@dataclass
class Units:
    """Billable units per event kind, from the measurements."""

    per_fetch: dict[str, Usage]  # "304", "200 same bytes", "200 other bytes", "one new entry"
    per_extra_entry: Usage
    per_tick: Usage  # nothing due
    pace_step: Usage  # at the measured number of sources
    per_reader_request: Usage
    per_counter_flush: Usage
    log_bytes_per_fetch_now: float
    pace_cpu_per_source: float  # seconds of CPU the pace step spends per scheduled source
    sizes: dict
    memory: dict
    cycle: dict  # the measured cycles' requests by operation, for the cross-check
    sources: int
    jobs: dict = field(default_factory=dict)  # bench.aws_requests' counts of the jobs alone
    per_sighting_round: Usage = field(default_factory=Usage)  # a parse's sightings written, when due
    sighting_refresh: float = 86400.0  # settings.sighting_refresh: how often they are due


def units_from(measured: dict) -> Units:
    phases, memory, n = measured["phases"], measured["memory"], measured["sources"]
    origin = {"FetcherFunction": ORIGIN_SECONDS}

    def fetch_usage(name):
        return usage_of(phases[name], memory, n, origin)

    idle_tick = usage_of(phases["idle tick"], memory, 1)
    per_fetch = {}
    for name in ("304", "200 same bytes", "200 other bytes", "one new entry"):
        # A cycle's tick is a tick and a lease per source: the tick's fixed part is its own line.
        per_fetch[name] = fetch_usage(name) - idle_tick.scaled(1 / n)
    three = fetch_usage("three new entries") - idle_tick.scaled(1 / n)
    extra_entry = (three - per_fetch["one new entry"]).scaled(0.5)
    # What a parse costs beyond when its entries' sightings are due: their writes (DynamoDB only;
    # the Lambda time of 50 small writes is left in the fetch's).
    due = fetch_usage("200 other bytes, sightings due") - per_fetch["200 other bytes"] - idle_tick.scaled(1 / n)
    sighting_round = Usage(wru=max(0.0, due.wru), rru=max(0.0, due.rru))
    reader = usage_of(phases["reader: miss"], memory, 1)
    reader_hit = usage_of(phases["reader: hit"], memory, 1)
    revalidated = usage_of(phases["reader: revalidated, counters flushed"], memory, 1)
    flush = Usage(rru=revalidated.rru, wru=revalidated.wru)
    # A reader's request: the revalidation's S3 GET (READER_S3_GET_SHARE of them) and Lambda time;
    # its counters' flush is its own line (at most one per COUNTER_FLUSH_SECONDS).
    rendered = Usage(lambda_requests=Counter({"ApiFunction": 1}),
                     gb_seconds=Counter({"ApiFunction": READER_S3_GET_SHARE * revalidated.gb_seconds["ApiFunction"]
                                         + (1 - READER_S3_GET_SHARE) * reader_hit.gb_seconds["ApiFunction"]}),
                     s3_get=READER_S3_GET_SHARE * max(reader.s3_get, revalidated.s3_get))
    # A source's own feed is built instead (a read of the source, a Query of its newest entries).
    built = usage_of(phases["reader: a source's feed, built"], memory, 1)
    built = Usage(lambda_requests=Counter({"ApiFunction": 1}),
                  gb_seconds=Counter({"ApiFunction": built.gb_seconds["ApiFunction"]}), rru=built.rru)
    reader_request = rendered.scaled(1 - READER_SOURCE_FEED_SHARE) + built.scaled(READER_SOURCE_FEED_SHARE)
    measured_fetches = ("304", "200 same bytes", "200 other bytes", "one new entry")
    log_now = sum(phases[k].log_bytes.get("FetcherFunction", 0) for k in measured_fetches) / (len(measured_fetches) * n)
    cycle = {name: {"fetches": n, "requests": phases[name].tally.total(),
                    "by_operation": dict(sorted(phases[name].tally.by_operation().items())),
                    "by_actor": {a: phases[name].tally.total(a)
                                 for a in sorted({k[0] for k in phases[name].tally.requests})},
                    "rru": round(sum(phases[name].tally.rru.values()), 1),
                    "wru": round(sum(phases[name].tally.wru.values()), 1),
                    "invocations": Counter(i.function for i in phases[name].invocations)}
             for name in phases}
    return Units(per_fetch, extra_entry, idle_tick, usage_of(phases["pace step"], memory, 1),
                 reader_request, flush, log_now, measured["pace_cpu_per_source"], measured["sizes"], memory, cycle, n,
                 measured["jobs"], sighting_round, measured["sighting_refresh"])


# The bill ------------------------------------------------------------------------------------

LINES = ("Lambda requests", "Lambda compute", "SQS", "DynamoDB writes", "DynamoDB reads", "DynamoDB storage",
         "S3 requests", "S3 storage", "EventBridge", "API Gateway", "CloudWatch logs", "CloudWatch metrics",
         "CloudWatch alarms", "CloudWatch dashboards", "X-Ray traces", "Egress")
STORAGE_LINES = ("DynamoDB storage", "S3 storage")


@dataclass
class Options:
    log_bytes_per_fetch: float = LOG_BYTES_PER_FETCH
    custom_metrics: int = CUSTOM_METRICS
    alarms: int = ALARMS
    dashboards: int = DASHBOARDS
    # What-ifs of the reductions proposed (not in the code): S3 PUTs a fetch would no longer make.
    puts_saved_new: float = 0.0  # PUTs a fetch with new entries would no longer make
    wru_saved_per_fetch: float = 0.0  # write units any fetch would no longer cost


def monthly_usage(units: Units, pop: Population, sources: int, readers_per_hour: float,
                  options: Options | None = None) -> Usage:
    """The month's billable request and compute units."""
    options = options or Options()
    f = units.per_fetch
    extra_entries = max(0.0, sources * (pop.new_entries - pop.with_new))
    saved = Usage(s3_put=sources * pop.with_new * options.puts_saved_new,
                  wru=sources * pop.fetches * options.wru_saved_per_fetch)
    u = Usage() - saved + (f["304"].scaled(sources * (pop.not_modified + pop.errors))
         + f["200 same bytes"].scaled(sources * pop.unchanged_200 * SAME_BYTES_SHARE)
         + f["200 other bytes"].scaled(sources * pop.unchanged_200 * (1 - SAME_BYTES_SHARE))
         + f["one new entry"].scaled(sources * pop.with_new)
         + units.per_extra_entry.scaled(extra_entries)
         + units.per_sighting_round.scaled(sources * parses(pop) * sightings_due_share(pop, units.sighting_refresh))
         + units.per_tick.scaled(TICKS_PER_MONTH))
    # The hourly pace step (inside a tick): its Scan reads every scheduled source whole, so its
    # read units and its time scale with the sources.
    pace = units.pace_step
    memory = units.memory["SchedulerFunction"]
    per_source = duration(units.pace_cpu_per_source, PACE_SCAN_PAGE_SECONDS * units.sizes["source_item"] / 1e6,
                          memory) * memory / 1024
    steps = PACE_STEPS_PER_MONTH if pop.fetches else 0  # no step while no source is leased
    u = u + Usage(gb_seconds=Counter({fn: (v + per_source * sources) * steps
                                      for fn, v in pace.gb_seconds.items()}),
                  rru=steps * pace_scan_rru(units, sources), wru=steps * pace.wru)
    requests = readers_per_hour * HOURS_PER_MONTH
    u = u + units.per_reader_request.scaled(requests)
    u = u + units.per_counter_flush.scaled(min(requests, API_INSTANCES * MONTH_SECONDS / COUNTER_FLUSH_SECONDS))
    # The event source mappings' long polls on the four queues (the fetch queue is FIFO).
    polls = ESM_IDLE_RECEIVES_PER_MINUTE * MONTH_SECONDS / 60
    return u + Usage(sqs=3 * polls, sqs_fifo=polls)


def parses(pop: Population) -> float:
    """A source's fetches a month that store their bytes and read their entries: the 200s with
    other bytes than last time."""
    return pop.unchanged_200 * (1 - SAME_BYTES_SHARE) + pop.with_new


def sightings_due_share(pop: Population, refresh: float) -> float:
    """The share of those parses that find their unchanged entries' sightings due, the parses
    evenly spaced: the first parse once `refresh` has passed, so one in ceil(refresh / gap)."""
    n = parses(pop)
    return 1 / math.ceil(refresh * n / MONTH_SECONDS) if n else 0.0


def pace_scan_rru(units: Units, sources: int) -> float:
    """One pace step's read units: the Scan reads every source item whole (eventually
    consistent), plus the pace item's read."""
    return math.ceil(sources * units.sizes["source_item"] / 4096) * 0.5 + 0.5


def storage_gb(units: Units, pop: Population, sources: int) -> tuple[float, float]:
    """(DynamoDB GB, S3 GB) held: sources, a month of entries and their collection copies
    (EntryRetentionDays 30), a month of raw payloads (RawRetentionDays 30: every 200 with other
    bytes stores one) and of taps (an entry's item's size a line). The rendered objects, the
    aggregate's and the collections', do not grow with the sources."""
    s = units.sizes
    dynamodb = sources * (s["source_item"] + pop.new_entries * (s["entry_item"] + s["collection_entry_item"]))
    s3 = sources * (parses(pop) * s["raw_payload"] + pop.new_entries * s["entry_item"])
    return dynamodb / 1e9, s3 / 1e9


def bill(units: Units, pop: Population, sources: int, readers_per_hour: float,
         options: Options | None = None, idle: bool = False) -> dict[str, dict[str, float]]:
    """Each line's list price and its price after the always-free tiers (USD a month). Idle: no
    fetches and no readers, the data of `sources` sources kept; the tick and the queues' pollers
    still run (they are their own lines, Lambda and SQS)."""
    options = options or Options()
    dynamodb_gb, s3_gb = storage_gb(units, pop, sources)
    active = Population(0, 0, 0, 0, 0) if idle else pop
    readers = 0 if idle else readers_per_hour
    u = monthly_usage(units, active, sources, readers, options)
    fetches = sources * active.fetches
    requests = readers * HOURS_PER_MONTH
    P = {k: v.usd for k, v in PRICES.items()}
    lines: dict[str, tuple[float, float]] = {}

    def line(name, quantity, price, free=0.0):
        lines[name] = (quantity * price, max(0.0, quantity - free) * price)

    line("Lambda requests", sum(u.lambda_requests.values()), P["lambda_request"], FREE_TIER["lambda_request"])
    line("Lambda compute", sum(u.gb_seconds.values()), P["lambda_gb_second_arm64"], FREE_TIER["lambda_gb_second_arm64"])
    sqs_list = u.sqs * P["sqs_standard_request"] + u.sqs_fifo * P["sqs_fifo_request"]
    free_std = min(u.sqs, FREE_TIER["sqs_request"])  # the free million taken from the cheaper first
    free_fifo = min(u.sqs_fifo, FREE_TIER["sqs_request"] - free_std)
    lines["SQS"] = (sqs_list, sqs_list - free_std * P["sqs_standard_request"] - free_fifo * P["sqs_fifo_request"])
    line("DynamoDB writes", u.wru, P["dynamodb_write_unit"])
    line("DynamoDB reads", u.rru, P["dynamodb_read_unit"])
    line("DynamoDB storage", dynamodb_gb, P["dynamodb_storage"], FREE_TIER["dynamodb_storage"])
    s3_requests = u.s3_put * P["s3_put"] + u.s3_get * P["s3_get"]
    lines["S3 requests"] = (s3_requests, s3_requests)
    line("S3 storage", s3_gb, P["s3_storage"])
    events = u.put_events * P["eventbridge_put_events"]
    lines["EventBridge"] = (events + TICKS_PER_MONTH * P["scheduler_invocation"],
                            events + max(0.0, TICKS_PER_MONTH - FREE_TIER["eventbridge_scheduler"])
                            * P["scheduler_invocation"])
    line("API Gateway", requests, P["apigw_http_request"])
    log_gb = (fetches * options.log_bytes_per_fetch + requests * ACCESS_LOG_BYTES) / 1e9
    logs_list = log_gb * (P["logs_ingest"] + LOG_RETENTION_MONTHS * LOG_COMPRESSION * P["logs_storage"])
    lines["CloudWatch logs"] = (logs_list, max(0.0, log_gb - FREE_TIER["logs_gb"]) * P["logs_ingest"])
    # A metric with no data point in a month costs nothing (metrics are billed by the hour they report).
    line("CloudWatch metrics", 0 if idle else options.custom_metrics, P["custom_metric"], FREE_TIER["custom_metric"])
    line("CloudWatch alarms", options.alarms, P["alarm"], FREE_TIER["alarm"])
    line("CloudWatch dashboards", options.dashboards, P["dashboard"], FREE_TIER["dashboard"])
    traces = sum(n for function, n in u.lambda_requests.items() if function not in UNTRACED)
    line("X-Ray traces", traces, P["xray_trace"], FREE_TIER["xray_trace"])
    egress_gb = requests * (1 - READER_NOT_MODIFIED_SHARE) * READER_BODY_BYTES / 1e9
    line("Egress", egress_gb, P["egress"], FREE_TIER["egress"])
    out = {name: {"list": lines[name][0], "free_tier": lines[name][1]} for name in LINES}
    out["Total"] = {"list": sum(v[0] for v in lines.values()), "free_tier": sum(v[1] for v in lines.values())}
    return out


# Output ---------------------------------------------------------------------------------------

def _usd(x: float) -> str:
    return f"${x:,.2f}" if x >= 0.005 or x == 0 else f"${x:.4f}"


def report(units: Units, pop: Population, options: Options) -> dict:
    bills = {str(n): {str(r): bill(units, pop, n, r, options) for r in READER_RATES} for n in SIZES}
    idle = {str(n): bill(units, pop, n, 0, options, idle=True) for n in SIZES}
    target = bills[str(TARGET_FEEDS)]
    holds = {str(r): {k: target[str(r)]["Total"][k] < TARGET_USD for k in ("list", "free_tier")} for r in READER_RATES}
    idle_extra = {n: {k: sum(v[k] for name, v in b.items() if name not in (*STORAGE_LINES, "Total"))
                      for k in ("list", "free_tier")} for n, b in idle.items()}
    reduced = Options(**{**vars(options), **REDUCED})
    before_after = {"before": bill(units, pop, TARGET_FEEDS, 1000, options),
                    "after": bill(units, pop, TARGET_FEEDS, 1000, reduced), "reduced": REDUCED}
    return {"before_after": before_after, "prices": {"date": PRICES_DATE, "region": PRICES_REGION,
                       "table": {k: {"usd": v.usd, "per": v.per, "source": v.source} for k, v in PRICES.items()},
                       "free_tier": FREE_TIER},
            "population": vars(pop) | {"unchanged_200": pop.unchanged_200},
            "assumptions": {"log_bytes_per_fetch": options.log_bytes_per_fetch,
                            "log_bytes_per_fetch_measured_now": units.log_bytes_per_fetch_now,
                            "custom_metrics": options.custom_metrics, "access_log_bytes": ACCESS_LOG_BYTES,
                            "origin_seconds": ORIGIN_SECONDS, "esm_receives_per_minute": ESM_IDLE_RECEIVES_PER_MINUTE,
                            "reader_not_modified_share": READER_NOT_MODIFIED_SHARE,
                            "reader_source_feed_share": READER_SOURCE_FEED_SHARE,
                            "reader_body_bytes": READER_BODY_BYTES, "memory_mb": units.memory},
            "sizes": units.sizes, "cycle": units.cycle, "jobs": units.jobs, "bills": bills, "idle": idle,
            "targets": {"10k_under_5_usd": holds, "idle_beyond_storage": idle_extra}}


def print_report(rep: dict, units: Units) -> None:
    pop = rep["population"]
    print(f"Prices: {PRICES_REGION} list prices as of {PRICES_DATE} (sources: bench/cost.py PRICES).")
    print(f"Model: Lambda duration at M MB = CPU x max(1, {FULL_VCPU_MB}/M) + waiting (+{ORIGIN_SECONDS} s origin"
          f" round trip per fetch); billed at template.yaml's MemorySize: "
          + ", ".join(f"{k.removesuffix('Function')} {v}" for k, v in sorted(units.memory.items())))
    print(f"Population (schedsim, starfeed scheduler): per source a month {pop['fetches']:.1f} fetches:"
          f" {pop['not_modified']:.1f} 304, {pop['unchanged_200']:.1f} 200 unchanged, {pop['with_new']:.1f} with new"
          f" entries ({pop['new_entries']:.1f} entries), {pop['errors']:.1f} errors")
    print()
    print(f"Cross-check: AWS requests of fetch cycles on the local stack ({units.sources} sources, one tick,"
          " every queue drained; requests by operation; DynamoDB units estimated from item sizes):")
    for name, c in rep["cycle"].items():
        ops = ", ".join(f"{k} {v}" for k, v in c["by_operation"].items())
        per = f", {c['requests'] / c['fetches']:.2f} per fetch" if name[0].isdigit() or "entr" in name else ""
        print(f"  {name}: {c['requests']} requests{per}; {c['rru']} RRU, {c['wru']} WRU ({ops})")
        print(f"    by actor: {', '.join(f'{k} {v}' for k, v in c['by_actor'].items())}")
    print("  The fetch and render jobs alone (bench.aws_requests, 50 items, a collection of 200): "
          + "; ".join(f"{name} {sum(v for k, v in c.items() if ':' in k)}" for name, c in rep["jobs"].items()))
    a = rep["assumptions"]
    print(f"Logs: {a['log_bytes_per_fetch']} bytes a fetch billed"
          f" (the code logs {a['log_bytes_per_fetch_measured_now']:.0f} now);"
          f" {a['access_log_bytes']} bytes of access log a reader request; {a['custom_metrics']} custom metrics.")
    print()
    for n, by_rate in rep["bills"].items():
        print(f"{int(n):,} sources: USD a month, list price / after the always-free tiers")
        print(f"  {'line':24}" + "".join(f"{int(r):>10,}/h list {'free tier':>10}" for r in by_rate))
        for name in (*LINES, "Total"):
            print(f"  {name:24}" + "".join(f"{_usd(b[name]['list']):>17} {_usd(b[name]['free_tier']):>10}"
                                           for b in by_rate.values()))
        print()
    print("Idle month (no fetches, no readers; the data kept; the tick and the queues' pollers still run):")
    for n, b in rep["idle"].items():
        parts = ", ".join(f"{name} {_usd(v['list'])}" for name, v in b.items()
                          if name != "Total" and v["list"] >= 0.005)
        print(f"  {int(n):>9,} sources: {_usd(b['Total']['list'])} list,"
              f" {_usd(b['Total']['free_tier'])} after free tiers ({parts})")
    print()
    for r, held in rep["targets"]["10k_under_5_usd"].items():
        total = rep["bills"][str(TARGET_FEEDS)][r]["Total"]
        print(f"Target {TARGET_FEEDS:,} feeds under ${TARGET_USD:.0f} at {int(r):,} reader requests/h:"
              f" {_usd(total['list'])} list ({'holds' if held['list'] else 'MISSED'}),"
              f" {_usd(total['free_tier'])} after free tiers ({'holds' if held['free_tier'] else 'MISSED'})")
    ba = rep["before_after"]
    print()
    print(f"Lines over budget at {TARGET_FEEDS:,} sources, 1,000 reader requests/h, and the proposed reductions"
          f" (what-if {ba['reduced']}): list / after free tiers")
    for name in (*LINES, "Total"):
        b, a = ba["before"][name], ba["after"][name]
        if abs(b["list"] - a["list"]) > 0.004 or name == "Total":
            print(f"  {name:24} {_usd(b['list'])} / {_usd(b['free_tier'])}"
                  f" -> {_usd(a['list'])} / {_usd(a['free_tier'])}")
    extra = rep["targets"]["idle_beyond_storage"][str(TARGET_FEEDS)]
    print(f"Target idle at storage cost only ({TARGET_FEEDS:,} sources): beyond storage {_usd(extra['list'])} list"
          f" ({'holds' if extra['list'] < 0.005 else 'MISSED: the tick and the pollers'}),"
          f" {_usd(extra['free_tier'])} after free tiers ({'holds' if extra['free_tier'] < 0.005 else 'MISSED'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--feeds", type=int, default=1000, help="simulated population (default 1000)")
    parser.add_argument("--sources", type=int, default=SOURCES, help="sources in each measured fetch cycle")
    parser.add_argument("--log-bytes", type=float, default=LOG_BYTES_PER_FETCH, help="log bytes a fetch")
    parser.add_argument("--metrics", type=int, default=CUSTOM_METRICS, help="custom CloudWatch metrics")
    args = parser.parse_args()
    pop = simulate_population(args.feeds)
    units = units_from(measure(args.sources))
    rep = report(units, pop, Options(args.log_bytes, args.metrics))
    if args.json:
        print(json.dumps(rep, indent=1, default=str))
    else:
        print_report(rep, units)


if __name__ == "__main__":
    main()

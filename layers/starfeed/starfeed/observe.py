"""Logs, metrics and traces of every function, set up in one place (docs/design.md#observability).

Logs: on Lambda, each `starfeed.*` logger writes one JSON object a line through Powertools Logger
(the handler's cold-start flag and request id on every line, a fetch's figures as keys of its
line). Elsewhere (`make run`, tests) the lines stay readable, unless STARFEED_LOG_FORMAT=json asks
for exactly what Lambda would log.

Metrics: CloudWatch embedded metric format (Powertools Metrics), flushed once per invocation.
Every custom metric is a line of the bill ($0.30 a month per name and dimension set, the first ten
free), so the names are all here, in METRICS; none is per feed (per-feed figures are in the logs,
for Logs Insights). By default only CORE is sent, ten metrics at most (the alarms' and the
dashboard's); STARFEED_DETAILED_METRICS=true (the template's DetailedMetrics) sends the whole list
(docs/design.md#metrics), 21 at most. Off when POWERTOOLS_METRICS_DISABLED is true (the local stack,
unless STARFEED_LOG_FORMAT=json).

Traces: X-Ray through Powertools Tracer, only on Lambda with tracing on (`Tracing: Active`).
Anywhere else no tracer is built and aws_xray_sdk is never imported: a span is a no-op."""

from __future__ import annotations

import functools
import logging
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from starfeed.model import FailureClass

SERVICE = "starfeed"  # the logger's name (every starfeed.* logger reports through it) and the service
NAMESPACE = "starfeed"

# Every custom metric: name -> (unit, the dimension beyond `service`, or None).
FETCHES = "Fetches"
NOT_MODIFIED = "NotModified"
FETCH_ERRORS = "FetchErrors"  # dimension status_class
BYTES_IN = "BytesIn"
COMPRESSION_RATIO = "CompressionRatio"
FETCH_LATENCY = "FetchLatency"
INTERVAL_CHOSEN = "IntervalChosen"
EWMA_INTERVAL = "EwmaInterval"
RETRIES = "Retries"
NEW_ENTRIES = "NewEntries"
DUE = "Due"
LEASED = "Leased"
FRESHNESS = "Freshness"
GITHUB_RATE_REMAINING = "GitHubRateRemaining"
GITHUB_STOPPED = "GitHubStopped"
RENDERS = "Renders"
ANALYZER_CALLS = "AnalyzerCalls"
STATUS_CLASS = "status_class"
# A failed fetch's class: the publisher's (4xx or robots.txt's refusal, 5xx, no answer, a
# document that cannot be read) or starfeed's own (a stage of ours broke): only "starfeed"
# counts against the 2% error budget (docs/design.md#slos).
# Without detailed metrics the publisher's four are sent as one, PUBLISHER (the logs keep them).
STATUS_CLASSES = tuple(dict.fromkeys(c.metric for c in FailureClass))  # a failed fetch's class
OURS, PUBLISHER = FailureClass.OURS.value, "publisher"

METRICS: dict[str, tuple[str, str | None]] = {
    FETCHES: (MetricUnit.Count.value, None),
    NOT_MODIFIED: (MetricUnit.Count.value, None),
    FETCH_ERRORS: (MetricUnit.Count.value, STATUS_CLASS),
    BYTES_IN: (MetricUnit.Bytes.value, None),
    COMPRESSION_RATIO: (MetricUnit.NoUnit.value, None),
    FETCH_LATENCY: (MetricUnit.Milliseconds.value, None),
    INTERVAL_CHOSEN: (MetricUnit.Seconds.value, None),
    EWMA_INTERVAL: (MetricUnit.Seconds.value, None),
    RETRIES: (MetricUnit.Count.value, None),
    NEW_ENTRIES: (MetricUnit.Count.value, None),
    GITHUB_RATE_REMAINING: (MetricUnit.Count.value, None),
    GITHUB_STOPPED: (MetricUnit.Count.value, None),
    DUE: (MetricUnit.Count.value, None),
    LEASED: (MetricUnit.Count.value, None),
    FRESHNESS: (MetricUnit.Percent.value, None),
    RENDERS: (MetricUnit.Count.value, None),
    ANALYZER_CALLS: (MetricUnit.Count.value, None),
}
# Sent always: what the alarms read (the error rate, freshness, GitHub stopped) and the dashboard's
# metric widgets; the rest of each fetch's figures are keys of its log line, which the dashboard's
# Logs Insights widgets read.
CORE = frozenset({FETCHES, NOT_MODIFIED, FETCH_ERRORS, BYTES_IN, NEW_ENTRIES, FRESHNESS,
                  GITHUB_RATE_REMAINING, GITHUB_STOPPED, RENDERS})


def detailed(environ: dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return (env.get("STARFEED_DETAILED_METRICS") or "").strip().lower() in ("1", "true", "yes", "on")


def metric_count(detailed_metrics: bool) -> int:
    """The custom metrics (name x dimension values) sent at most: each is a line of the bill."""
    names = METRICS if detailed_metrics else CORE
    classes = len(STATUS_CLASSES) if detailed_metrics else len((OURS, PUBLISHER))
    return len(names) - 1 + classes


# What a handler with no metric to report flushes: nothing, and no warning about it.
warnings.filterwarnings("ignore", message="No application metrics to publish")

metrics = Metrics(namespace=NAMESPACE, service=SERVICE)
_lock = threading.Lock()  # the local stack runs several functions' handlers on threads of one process
_json_logger = None  # the Powertools Logger, once JSON logging is on
_tracer = None  # the Powertools Tracer, on Lambda with tracing on


# Logs -----------------------------------------------------------------------------------------

def log_format(environ: dict[str, str] | None = None) -> str:
    """STARFEED_LOG_FORMAT, else "json" on Lambda and "text" anywhere else."""
    env = os.environ if environ is None else environ
    chosen = (env.get("STARFEED_LOG_FORMAT") or "").strip().lower()
    if chosen in ("json", "text"):
        return chosen
    return "json" if env.get("AWS_LAMBDA_FUNCTION_NAME") else "text"


class _Stdout:
    """Whatever sys.stdout is when a line is written (pytest swaps it per test)."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


def configure(environ: dict[str, str] | None = None, stream=None) -> str:
    """Set up this process's logs (and its tracer, on Lambda); idempotent. The log format chosen."""
    global _json_logger, _tracer
    chosen = log_format(environ)
    if chosen == "json" and _json_logger is None:
        from aws_lambda_powertools import Logger

        # Named as the package: every starfeed.* logger propagates to its handler.
        _json_logger = Logger(service=SERVICE, stream=stream or _Stdout(), utc=True, use_rfc3339=True)
    if _tracer is None and tracing_enabled(environ):
        from aws_lambda_powertools import Tracer

        # botocore only: the requests library is not patched, so no trace header reaches a publisher.
        _tracer = Tracer(service=SERVICE, auto_patch=True, patch_modules=("botocore",))
    return chosen


def unconfigure() -> None:
    """Undo configure's JSON logging (tests): the package's lines go back to the root logger."""
    global _json_logger
    if _json_logger is None:
        return
    package = logging.getLogger(SERVICE)
    for handler in list(package.handlers):
        package.removeHandler(handler)
    for attribute in ("init", "powertools_handler", "powertools_buffer_config", "powertools_buffer_cache"):
        if hasattr(package, attribute):
            delattr(package, attribute)
    package.setLevel(logging.NOTSET)
    for handler in logging.root.handlers:
        for kept in [f for f in handler.filters if type(f).__name__ == "SuppressFilter"]:
            handler.removeFilter(kept)
    _json_logger = None


def logger(name: str) -> logging.Logger:
    """A function's logger, within the package's (so it reports as every starfeed.* one does)."""
    return logging.getLogger(f"{SERVICE}.function.{name}")


# Traces ---------------------------------------------------------------------------------------

def tracing_enabled(environ: dict[str, str] | None = None) -> bool:
    """On Lambda (not sam local), unless POWERTOOLS_TRACE_DISABLED says otherwise."""
    env = os.environ if environ is None else environ
    if (env.get("POWERTOOLS_TRACE_DISABLED") or "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    return bool(env.get("LAMBDA_TASK_ROOT")) and not env.get("AWS_SAM_LOCAL")


@contextmanager
def span(name: str, **annotations: Any) -> Iterator[None]:
    """An X-Ray subsegment with these annotations (the source id and the host); a no-op without
    a tracer. A span never fails its work: tracing errors are the SDK's to log."""
    if _tracer is None:
        yield
        return
    with _tracer.provider.in_subsegment(name) as subsegment:
        for key, value in annotations.items():
            if value is not None:
                subsegment.put_annotation(key, value)
        yield


def annotate(**annotations: Any) -> None:
    """Annotations on the current span (e.g. what a span learned on its way)."""
    if _tracer is None:
        return
    for key, value in annotations.items():
        if value is not None:
            _tracer.put_annotation(key=key, value=value)


# Metrics --------------------------------------------------------------------------------------

def metrics_on() -> bool:
    return not is_metrics_disabled()


def _sent(name: str) -> bool:
    return metrics_on() and (name in CORE or detailed())


def metric(name: str, value: float) -> None:
    """One value of a metric of METRICS (without its dimension), flushed with the invocation's."""
    unit, dimension = METRICS[name]
    assert dimension is None, name
    if _sent(name):  # disabled ones are never flushed, yet powertools prints 100 piled-up values
        with _lock:
            metrics.add_metric(name=name, unit=unit, value=value)


def metric_by(name: str, dimension_value: str, value: float = 1) -> None:
    """One value of a metric with its one dimension (an EMF line of its own, written at once)."""
    unit, dimension = METRICS[name]
    assert dimension is not None, name
    if _sent(name):
        with _lock, single_metric(name=name, unit=unit, value=value, namespace=NAMESPACE,
                                  default_dimensions={"service": SERVICE, dimension: dimension_value}):
            pass


def flush() -> None:
    if metrics_on():
        with _lock:
            if metrics.metric_set:  # an invocation with nothing to report writes nothing
                metrics.flush_metrics()


# Handlers -------------------------------------------------------------------------------------

def handler(function: Callable) -> Callable:
    """A Lambda handler with its invocation's keys on every log line (cold start, request id,
    function name), its metrics flushed when it returns, and its trace subsegment on Lambda."""
    cold = [True]  # per function: the local stack runs several in one process
    # The response is not kept on the trace: a fetcher batch's or a render's is not worth its size.
    traced = _tracer.capture_lambda_handler(function, capture_response=False) if _tracer is not None else function

    @functools.wraps(function)
    def wrapper(event, context):
        is_cold, cold[0] = cold[0], False
        if _json_logger is not None:
            _json_logger.thread_safe_append_keys(
                cold_start=is_cold, function_name=getattr(context, "function_name", None),
                function_request_id=getattr(context, "aws_request_id", None))
        try:
            return traced(event, context)
        finally:
            try:
                flush()
            except Exception:  # metrics must never fail what the invocation did
                logging.getLogger(__name__).exception("metrics not flushed")
            if _json_logger is not None:
                _json_logger.thread_safe_clear_keys()

    return wrapper


# A fetch's figures ----------------------------------------------------------------------------

def wire_bytes(headers, body: bytes) -> tuple[int, float | None]:
    """(bytes received, decoded/received) for a response: a compressed body's Content-Length is
    what came over the wire; without one, the decoded size stands in and no ratio is known."""
    encoded = (headers.get("Content-Encoding") or "").strip().lower() if headers else ""
    length = headers.get("Content-Length") if headers else None
    try:
        sent = int(length) if length is not None else None
    except ValueError:
        sent = None
    if encoded and encoded != "identity" and sent and body:
        return sent, round(len(body) / sent, 2)
    return (sent if sent is not None and not encoded else len(body)), None


def fetched(fields: dict) -> None:
    """The metrics of one fetch, from the figures its log line carries (no feed id among them)."""
    metric(FETCHES, 1)
    if fields.get("not_modified") and fields.get("http_status") == 304:  # the 304 rate: a 200 with
        metric(NOT_MODIFIED, 1)  # the same bytes is not modified too, but its body came over the wire
    if fields.get("status_class"):
        shown = fields["status_class"]
        metric_by(FETCH_ERRORS, shown if shown == OURS or detailed() else PUBLISHER)
    if fields.get("bytes_in"):
        metric(BYTES_IN, fields["bytes_in"])
    if fields.get("compression_ratio"):
        metric(COMPRESSION_RATIO, fields["compression_ratio"])
    if fields.get("latency_ms") is not None:
        metric(FETCH_LATENCY, fields["latency_ms"])
    if fields.get("interval_after"):
        metric(INTERVAL_CHOSEN, fields["interval_after"])
    if fields.get("ewma_interval"):
        metric(EWMA_INTERVAL, fields["ewma_interval"])
    metric(RETRIES, fields.get("retries") or 0)
    metric(NEW_ENTRIES, fields.get("new_entries") or 0)


class RetryCounter:
    """fetch()'s sleep between tries, counting them: a retry follows each sleep."""

    def __init__(self, sleep: Callable[[float], None]):
        self.sleep, self.count = sleep, 0

    def __call__(self, seconds: float) -> None:
        self.count += 1
        self.sleep(seconds)


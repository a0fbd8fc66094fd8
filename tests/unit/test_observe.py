"""What starfeed.observe makes of a fetch (log keys, EMF metrics) and the scheduler's
without AWS."""

import io
import json
import logging
from types import SimpleNamespace

import pytest

from starfeed import observe
from starfeed.model import FailureClass, failure_class

FIELDS = {"feed_id": "abc123", "url": "https://example.org/feed.xml", "host": "example.org", "kind": "feed",
          "decision_reason": "rhythm", "http_status": 503, "interval_before": 900, "interval_after": 1800,
          "ewma_interval": 3600, "new_entries": 0, "not_modified": False, "retries": 2,
          "error": "503 Service Unavailable", "status_class": "5xx", "bytes_in": 1200,
          "compression_ratio": 4.2, "latency_ms": 350}


def test_status_classes_separate_the_publishers_faults_from_ours():
    cases = [(failure_class(404), "4xx"), (failure_class(502), "5xx"), (failure_class(None), "network"),
             (failure_class(200), "content"), (FailureClass.OURS, "starfeed"),
             # robots.txt's refusal: no request was made, and the publisher said no.
             (failure_class(None, refused=True), "4xx")]
    assert [failure.metric for failure, _ in cases] == [expected for _, expected in cases]
    assert {expected for _, expected in cases} == set(observe.STATUS_CLASSES)  # each one reachable


def test_wire_bytes_and_compression_ratio():
    assert observe.wire_bytes({"Content-Encoding": "gzip", "Content-Length": "100"}, b"x" * 400) == (100, 4.0)
    assert observe.wire_bytes({"Content-Length": "400"}, b"x" * 400) == (400, None)
    assert observe.wire_bytes({}, b"x" * 50) == (50, None)  # chunked: the decoded size stands in


def test_the_log_format_is_json_on_lambda_and_text_elsewhere():
    assert observe.log_format({}) == "text"
    assert observe.log_format({"AWS_LAMBDA_FUNCTION_NAME": "f"}) == "json"
    assert observe.log_format({"STARFEED_LOG_FORMAT": "json"}) == "json"
    assert observe.log_format({"AWS_LAMBDA_FUNCTION_NAME": "f", "STARFEED_LOG_FORMAT": "text"}) == "text"


def test_tracing_only_on_lambda_and_never_imported_elsewhere():
    assert not observe.tracing_enabled({})
    assert observe.tracing_enabled({"LAMBDA_TASK_ROOT": "/var/task"})
    assert not observe.tracing_enabled({"LAMBDA_TASK_ROOT": "/var/task", "AWS_SAM_LOCAL": "true"})
    assert not observe.tracing_enabled({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "true"})
    observe.configure({})
    assert observe._tracer is None
    with observe.span("fetch", source_id="s", host="h"):  # a no-op
        observe.annotate(http_status=200)


@pytest.fixture
def json_logs():
    stream = io.StringIO()
    observe.configure({"STARFEED_LOG_FORMAT": "json"}, stream=stream)
    yield stream
    observe.unconfigure()


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_a_fetch_logs_one_json_line_with_the_invocations_keys(json_logs):
    log = logging.getLogger("starfeed.fetch.document")

    @observe.handler
    def handler(event, context):
        log.info("fetcher: %s -> 503", FIELDS["url"], extra=FIELDS)

    context = SimpleNamespace(function_name="FetcherFunction", aws_request_id="req-1")
    handler({}, context)
    handler({}, SimpleNamespace(function_name="FetcherFunction", aws_request_id="req-2"))
    first, second = _lines(json_logs.getvalue())
    assert {k: first[k] for k in FIELDS} == FIELDS
    assert (first["cold_start"], first["function_request_id"]) == (True, "req-1")
    assert (second["cold_start"], second["function_request_id"]) == (False, "req-2")
    assert first["service"] == "starfeed" and first["level"] == "INFO"


def _emf(out: str) -> tuple[set[str], set[str]]:
    """(metric names, FetchErrors' status classes) of the EMF blobs printed."""
    names, classes = set(), set()
    for blob in (line for line in _lines(out) if "_aws" in line):
        for directive in blob["_aws"]["CloudWatchMetrics"]:
            assert directive["Namespace"] == "starfeed"
            assert directive["Dimensions"] in ([["service"]], [["service", "status_class"]])
            names |= {m["Name"] for m in directive["Metrics"]}
        if "status_class" in blob:
            classes.add(blob["status_class"])
    return names, classes


def _two_fetches(capsys) -> tuple[str, tuple[set[str], set[str]]]:
    observe.fetched(FIELDS)
    observe.fetched({**FIELDS, "status_class": None, "not_modified": True, "http_status": 304})
    observe.flush()
    out = capsys.readouterr().out
    return out, _emf(out)


def test_by_default_emf_sends_the_core_metrics_within_the_free_ten(monkeypatch, capsys):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    monkeypatch.delenv("STARFEED_DETAILED_METRICS", raising=False)
    out, (names, classes) = _two_fetches(capsys)
    assert names == {"Fetches", "NotModified", "FetchErrors", "BytesIn", "NewEntries"}
    assert classes == {"publisher"}  # a 5xx is the publisher's: one metric for the four classes
    assert "abc123" not in out and "example.org" not in out  # nothing per feed reaches CloudWatch
    observe.fetched({**FIELDS, "error": "store: Throttling", "status_class": "starfeed"})
    observe.flush()
    assert _emf(capsys.readouterr().out)[1] == {"starfeed"}  # what the error-rate alarm reads
    assert observe.metric_count(detailed_metrics=False) <= 10
    observe.fetched({**FIELDS, "status_class": None, "not_modified": True, "http_status": 200})
    observe.flush()
    assert "NotModified" not in _emf(capsys.readouterr().out)[0]  # the same bytes again: not a 304


def test_detailed_metrics_send_the_whole_list(monkeypatch, capsys):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    monkeypatch.setenv("STARFEED_DETAILED_METRICS", "true")
    out, (names, classes) = _two_fetches(capsys)
    assert names == {"Fetches", "NotModified", "FetchErrors", "BytesIn", "CompressionRatio", "FetchLatency",
                     "IntervalChosen", "EwmaInterval", "Retries", "NewEntries"}
    assert classes == {"5xx"}
    assert observe.metric_count(detailed_metrics=True) == 21


def test_disabled_metrics_print_nothing(monkeypatch, capsys):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    for _ in range(150):  # powertools would print 100 piled-up values even when disabled
        observe.fetched(FIELDS)
    observe.flush()
    assert capsys.readouterr().out == ""


def test_few_custom_metrics():
    # Each is $0.30 a month (a name and its dimension set): README "Operating it" lists them.
    assert [name for name, (_, dimension) in observe.METRICS.items() if dimension] == ["FetchErrors"]
    assert observe.CORE <= set(observe.METRICS)

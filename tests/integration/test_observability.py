"""A fetch through the local stack logs its fields (docs/design.md#log-fields) as JSON and its EMF metrics
carry no feed; no secret reaches a log line; template.yaml holds the tracing, the dashboard, the
alarms and the optional email."""

import io
import json
import re
import time

import pytest

from starfeed import observe
from starfeed.local.template import load
from starfeed.sources import add_source

from conftest import ROOT
from origin import Reply, rss

SEED_FIELDS = ("feed_id", "url", "decision_reason", "http_status", "interval_before", "interval_after",
               "new_entries", "bytes_in", "latency_ms", "not_modified")


@pytest.fixture
def json_logs(monkeypatch):
    """The local stack's functions logging as on Lambda, with their metrics on."""
    stream = io.StringIO()
    observe.configure({"STARFEED_LOG_FORMAT": "json"}, stream=stream)
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    yield stream
    observe.unconfigure()


def _fetch(stack, source_id):
    record = {"messageId": "m1", "receiptHandle": "r1", "body": json.dumps({"source_id": source_id}),
              "attributes": {"ApproximateReceiveCount": "1"}, "messageAttributes": {}, "md5OfBody": "",
              "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:fetch.fifo",
              "awsRegion": "us-east-1"}
    return stack.functions["FetcherFunction"].invoke({"Records": [record]})


def _json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_a_fetch_logs_its_fields_and_emits_metrics_without_the_feed(stack, storage, origin, json_logs,
                                                                        capsys):
    url = origin.serve("/observed.xml", Reply(200, rss(("o1", "One"), ("o2", "Two")), {"ETag": '"v1"'}),
                       Reply(304, headers={"ETag": '"v1"'}))
    source = add_source(storage, url, time.time() - 3600)[0]
    assert _fetch(stack, source.source_id) == {"batchItemFailures": []}
    assert _fetch(stack, source.source_id) == {"batchItemFailures": []}
    lines = [line for line in _json_lines(json_logs.getvalue()) if line.get("feed_id") == source.source_id]
    first, second = lines
    for line in lines:
        assert set(SEED_FIELDS) <= set(line), set(SEED_FIELDS) - set(line)
        assert line["function_name"] == "FetcherFunction" and line["function_request_id"]
        assert "cold_start" in line
    assert (first["http_status"], first["new_entries"], first["not_modified"]) == (200, 2, False)
    assert (second["http_status"], second["not_modified"]) == (304, True)
    storage.sources.delete(source.source_id)  # its origin closes with the test
    assert second["interval_before"] == first["interval_after"]
    emf = [blob for blob in _json_lines(capsys.readouterr().out) if "_aws" in blob]
    names = {m["Name"] for blob in emf for d in blob["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}
    # By default only the core metrics (within CloudWatch's free ten); the rest is on the log line.
    assert {"Fetches", "NotModified", "BytesIn", "NewEntries"} <= names <= observe.CORE
    for blob in emf:
        assert all(set(d) <= {"service", "status_class"} for directive in blob["_aws"]["CloudWatchMetrics"]
                   for d in directive["Dimensions"])
        assert source.source_id not in json.dumps(blob)


def _emitted(out: str) -> set[str]:
    return {m["Name"] for blob in _json_lines(out) if "_aws" in blob
            for d in blob["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}


def test_every_scheduler_run_says_github_is_stopped_until_a_token_is_connected(stack, storage, json_logs, capsys):
    github = storage.settings.github_host
    storage.hosts.pause(github, time.time() + 365 * 86400, "GitHub refused the token", stopped=True)
    try:
        capsys.readouterr()
        stack.tick()
        stack.tick()  # nothing of GitHub's due: still said, so the alarm stays on
        stopped = _json_lines(capsys.readouterr().out)
    finally:
        storage.hosts.clear_pause(github)  # as `starfeed github connect` does
        stack.drain()  # what the runs queued
    assert sum(m["Name"] == "GitHubStopped" for blob in stopped if "_aws" in blob
               for d in blob["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]) == 2
    stack.tick()
    assert "GitHubStopped" not in _emitted(capsys.readouterr().out)


def test_no_secret_reaches_a_log_line(stack, storage, origin, json_logs):
    password, secret = "pw-not-in-logs-51c2", "websub-secret-not-in-logs-9e1f"
    path = origin.serve("/private.xml", Reply(200, rss(("p1", "Private"))))
    url = path.replace("http://", f"http://reader:{password}@")
    source = add_source(storage, url, time.time() - 3600)[0]
    storage.sources.change(source.source_id, {"push_secret": secret})
    _fetch(stack, source.source_id)
    storage.sources.delete(source.source_id)  # its origin closes with the test
    text = json_logs.getvalue()
    assert source.source_id in text  # its fetch was logged
    assert password not in text and secret not in text


def test_the_template_traces_alarms_and_shows_a_dashboard():
    template = load(ROOT / "template.yaml")
    resources = template["Resources"]
    assert template["Globals"]["Function"]["Tracing"] == "Active"
    assert template["Globals"]["Function"]["LoggingConfig"]["LogFormat"] == "JSON"
    alarms = {name for name, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    assert alarms == {"DeadLetterAlarm", "FetchErrorRateAlarm", "FreshnessAlarm", "GitHubStoppedAlarm",
                      "Api5xxAlarm"}
    for name in alarms:
        assert resources[name]["Properties"]["AlarmActions"] == [{"Ref": "AlarmTopic"}]
    assert resources["FreshnessAlarm"]["Properties"]["Threshold"] == 95
    assert resources["FetchErrorRateAlarm"]["Properties"]["Threshold"] == 2
    assert resources["AlarmEmailSubscription"]["Condition"] == "HasAlarmEmail"
    assert template["Parameters"]["AlarmEmail"]["Default"] == ""
    body = resources["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    assert template["Parameters"]["DetailedMetrics"]["Default"] == "false"
    for shown in ("NotModified", "FetchErrors", "avg(interval_after)", "avg(ewma_interval)", "sum(new_entries)",
                  "by status_class, http_status, host", "ApproximateAgeOfOldestMessage", "AWS/ApiGateway",
                  "Freshness"):
        assert shown in body, shown
    # Every custom metric an alarm or a widget names is one observe.py sends by default.
    custom = {m.split('"')[0] for m in body.split('["starfeed", "')[1:]}
    assert custom <= observe.CORE
    assert {resources[a]["Properties"].get("MetricName") for a in ("FreshnessAlarm", "GitHubStoppedAlarm")} \
        <= observe.CORE
    widgets = json.loads(re.sub(r"\$\{[^}]+\}", "x", body))["widgets"]  # CloudWatch reads it as JSON
    assert {w["type"] for w in widgets} == {"metric", "log", "alarm"}

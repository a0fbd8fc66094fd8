"""`starfeed status`'s SLOs from what the sources keep (docs/design.md#slos)."""

from starfeed.fetch.stage import StageFailed
from starfeed.model import FailureClass, Source, Status
from starfeed.parse.normalize import rfc3339
from starfeed.schedule.freshness import chosen_wait, on_time
from starfeed.status import slos

NOW = 1_800_000_000.0
PERIOD = 300  # the scheduler runs every 5 minutes


def fetched(outcome="ok", ms=None, hours_ago=1.0, status=200, failure=None) -> dict:
    record = {"fetch_id": "f", "at": rfc3339(NOW - hours_ago * 3600), "status": status, "outcome": outcome}
    if failure is not None:
        record["class"] = failure.value
    return {**record, "ms": ms} if ms is not None else record


def source(history=(), **fields) -> Source:
    values = {"status": Status.OK, "last_fetch_at": NOW - 600, "next_check_at": NOW + 300, **fields}
    return Source(source_id="s", url="https://example.org/feed.xml", fetch_history=list(history), **values)


def test_the_p99_latency_comes_from_the_last_day_s_requests_only():
    durations = [fetched(ms=100) for _ in range(98)] + [fetched(ms=4000), fetched(ms=9000)]
    assert slos([source(durations)], NOW, PERIOD).latency_p99_ms == 4000  # the 99th of 100, not the largest
    old = [fetched(ms=60000, hours_ago=25)]
    measured = slos([source(durations + [fetched(ms=9500)]), source(old)], NOW, PERIOD)
    assert measured.fetches == 101 and measured.latency_p99_ms == 9000
    assert slos([source([fetched()])], NOW, PERIOD).latency_p99_ms is None  # a 304 from a push has no request


def test_the_error_budget_counts_starfeed_s_own_failures_and_names_the_others():
    history = [fetched(), fetched("not-modified", status=304), fetched("push"),
               fetched(str(StageFailed("store", KeyError("x"))), failure=FailureClass.OURS),
               fetched("503 Service Unavailable: the server is failing", status=503, failure=FailureClass.SERVER),
               fetched("timeout after 25s", status=None, failure=FailureClass.NETWORK),
               fetched("not a feed: text/html", status=200, failure=FailureClass.CONTENT),
               # Its words look like a stage's, but its class says whose it is.
               fetched("parse: ValueError: bad", status=200, failure=FailureClass.CONTENT)]
    measured = slos([source(history)], NOW, PERIOD)
    assert (measured.failed_ours, measured.failed_theirs, measured.fetches) == (1, 4, 8)
    assert round(measured.error_share, 3) == round(1 / 8, 3)


def test_a_source_is_late_once_it_has_waited_longer_than_the_wait_chosen_for_it():
    on_time = source(last_fetch_at=NOW - 3600, next_check_at=NOW - 1800)  # waited 30 min past a 60 min wait
    late = source(last_fetch_at=NOW - 7200, next_check_at=NOW - 3601)  # over a whole wait past it
    measured = slos([on_time, late], NOW, PERIOD)
    assert (measured.scheduled, measured.late, measured.fresh_share) == (2, 1, 0.5)


def test_sources_off_the_schedule_do_not_count_for_freshness():
    for fields in ({"enabled": False}, {"deleted_at": NOW}, {"polling": False}, {"status": Status.DEAD},
                   {"status": Status.NEW}, {"next_check_at": None}):
        assert chosen_wait(source(**fields)) is None, fields
    assert chosen_wait(source()) == 900
    assert slos([], NOW, PERIOD).fresh_share == 1.0 and slos([], NOW, PERIOD).error_share == 0.0


def test_a_poll_is_on_time_within_twice_the_wait_chosen_backoff_and_retry_after_included():
    chosen = source(last_fetch_at=NOW - 3600, next_check_at=NOW)  # a one-hour wait, due now
    assert on_time(chosen, NOW + 3600, PERIOD) is True and on_time(chosen, NOW + 3601, PERIOD) is False
    backoff = source(last_fetch_at=NOW - 4 * 3600, next_check_at=NOW, interval=900)  # backoff chose 4 h
    assert on_time(backoff, NOW + 60, PERIOD) is True  # late by its base interval's measure, not by the wait chosen
    assert on_time(source(status=Status.NEW), NOW, PERIOD) is None


def test_a_wait_shorter_than_the_scheduler_s_period_is_held_to_the_period():
    timeline = source(last_fetch_at=NOW - 60, next_check_at=NOW)  # a one-minute wait
    assert on_time(timeline, NOW + 240, PERIOD) is True  # polled by the next run, 5 minutes on
    assert on_time(timeline, NOW + 541, PERIOD) is False


def test_records_without_an_outcome_read_it_from_their_status_and_hand_edited_ones_break_nothing():
    from starfeed.model import outcome_of

    assert outcome_of({"status": 304}) == "not-modified" and outcome_of({"status": 200}) == "ok"
    assert outcome_of({"status": [304]}) == "-" and outcome_of("not a record") == "-"
    at = rfc3339(NOW - 3600)
    measured = slos([source([{"at": at, "status": 304}, {"at": at, "status": 200},
                             {"at": at, "status": {"x": 1}}])], NOW, PERIOD)
    assert measured.fetches == 3 and measured.failed_ours == 0  # "-" is no stage of ours
    assert measured.error_share == 0.0

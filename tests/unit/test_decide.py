import random

import pytest

from starfeed.model import FetchOutcome, Pace, Source
from starfeed.schedule.decide import decide
from starfeed.settings import Settings

NOW = 1_800_000_000.0
# The EWMA blend's formulas (docs/design.md#ewma-blend); the sqrt model has its own test below.
SETTINGS = Settings(default_interval=900, min_interval=300, max_interval=86400, backoff_cap=86400,
                    interval_model="ewma")


class NoJitter(random.Random):
    def uniform(self, a, b):
        return 0.0


def source(**kwargs) -> Source:
    return Source(source_id="s1", url="https://example.org/feed", **kwargs)


def after(src: Source, outcome: FetchOutcome):
    return decide(src, outcome, SETTINGS, NOW, NoJitter())


def test_not_modified_backs_off_by_a_quarter():
    d = after(source(interval=1000), FetchOutcome(304, not_modified=True))
    assert (d.interval, d.reason, d.next_check_at) == (1250, "not-modified", NOW + 1250)


def test_new_entries_speed_up_by_a_quarter_down_to_the_minimum():
    assert after(source(interval=1000), FetchOutcome(200, new_entries=3)).interval == 750
    assert after(source(interval=350), FetchOutcome(200, new_entries=1)).interval == 300


def test_no_new_entries_slow_down_up_to_the_maximum():
    d = after(source(interval=80000), FetchOutcome(200, new_entries=0))
    assert (d.interval, d.reason) == (86400, "no-new-entries")


def test_a_new_source_starts_from_the_default_interval():
    assert after(source(), FetchOutcome(200, new_entries=2)).interval == int(900 * 0.75)


def test_backoff_waits_interval_times_two_to_the_failures():
    # consecutiveFailures = 2 and pollIntervalMinutes = 60 -> polled after 240 minutes.
    d = after(source(interval=3600, consecutive_failures=1), FetchOutcome(500, error="HTTP 500"))
    assert d.consecutive_failures == 2
    assert d.next_check_at == NOW + 240 * 60
    assert (d.interval, d.reason) == (3600, "error-backoff")


def test_backoff_is_capped():
    d = after(source(interval=3600, consecutive_failures=5), FetchOutcome(None, error="refused"))
    assert d.next_check_at == NOW + SETTINGS.backoff_cap


def test_success_resets_the_failure_count():
    assert after(source(consecutive_failures=4), FetchOutcome(200)).consecutive_failures == 0


def test_retry_after_is_honoured_exactly_without_jitter():
    d = decide(source(interval=900), FetchOutcome(429, error="429", retry_after=120.0), SETTINGS,
               NOW, random.Random(7))
    assert (d.next_check_at, d.reason) == (NOW + 120, "retry-after")


def test_publisher_ttl_is_a_floor():
    d = after(source(interval=600), FetchOutcome(200, new_entries=1, ttl_minutes=60))
    assert d.interval == 3600


def test_polling_off_runs_once():
    assert after(source(polling=False), FetchOutcome(200, new_entries=1)).next_check_at is None


@pytest.mark.parametrize("seed", range(20))
def test_jitter_stays_within_fifteen_percent(seed):
    d = decide(source(interval=1000), FetchOutcome(304, not_modified=True), SETTINGS, NOW,
               random.Random(seed))
    assert 1250 * 0.85 <= d.next_check_at - NOW <= 1250 * 1.15


def test_the_circuit_breaker_parks_a_source_after_ten_failures_under_any_policy():
    for policy in ("backoff", "one-strike"):
        d = after(source(consecutive_failures=9, policy=policy), FetchOutcome(500, error="HTTP 500"))
        assert (d.dead, d.next_check_at, d.consecutive_failures) == (True, None, 10)
        assert d.reason.startswith("circuit-open")


def test_one_strike_takes_the_source_off_the_schedule_at_the_first_error():
    d = after(source(policy="one-strike"), FetchOutcome(404, error="404 Not Found"))
    assert (d.dead, d.next_check_at, d.reason) == (True, None, "one-strike")
    assert after(source(policy="one-strike"), FetchOutcome(200, new_entries=1)).next_check_at


def test_the_ewma_of_publication_gaps_is_blended_in():
    hour = 3600.0
    posts = tuple(NOW - n * hour for n in reversed(range(6)))  # hourly
    d = after(source(interval=20000), FetchOutcome(200, new_entries=1, publications=posts))
    # x0.75 then blended: 0.5 * clamp(ewma=3600) + 0.5 * 15000
    assert d.ewma == hour and d.interval == int(0.5 * hour + 0.5 * 15000)
    assert d.reason == "new-entries+ewma" and d.publications == posts


def test_only_the_latest_twenty_publications_are_kept():
    posts = tuple(NOW - n * 60 for n in range(40))
    d = after(source(), FetchOutcome(200, new_entries=1, publications=posts))
    assert len(d.publications) == 20 and d.publications[-1] == NOW


def test_http_freshness_is_a_floor_and_per_source_clamps_apply():
    d = after(source(interval=600), FetchOutcome(200, new_entries=1, fresh_for=7200))
    assert (d.interval, d.reason) == (7200, "new-entries+publisher-floor")
    tight = source(interval=600, min_interval=60, max_interval=900)
    assert after(tight, FetchOutcome(304, not_modified=True)).interval == 750
    assert after(tight, FetchOutcome(200, new_entries=1, fresh_for=7200)).interval == 900


def test_skip_hours_and_days_move_the_check_out_of_quiet_windows():
    import calendar
    import time

    from starfeed.schedule.decide import skip_windows

    monday_0230 = float(calendar.timegm((2026, 11, 23, 2, 30, 0)))  # a Monday
    assert time.gmtime(monday_0230).tm_wday == 0 and time.gmtime(monday_0230).tm_hour == 2
    assert time.gmtime(skip_windows(monday_0230, (2, 3), ())).tm_hour == 4
    moved = skip_windows(monday_0230, (), ("Mon",))
    assert time.gmtime(moved).tm_wday == 1 and time.gmtime(moved).tm_hour == 0
    assert skip_windows(monday_0230, (), ()) == monday_0230
    d = decide(source(interval=600), FetchOutcome(200, new_entries=1, skip_hours=tuple(range(24)),
               skip_days=("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")), SETTINGS, NOW, NoJitter())
    assert d.next_check_at is not None  # a feed that skips everything still gets checked


def test_the_sqrt_model_aims_at_the_square_root_of_the_gap_times_the_scale():
    from starfeed.schedule.decide import target_interval

    sqrt = Settings(interval_model="sqrt", sqrt_scale=3600)
    assert round(target_interval(86400, sqrt)) == 17636  # a post a day: about 4.9 h
    assert target_interval(3600, sqrt) == 3600
    assert target_interval(86400, Settings(interval_model="ewma")) == 86400


def test_the_rhythm_model_checks_busy_hours_often_and_quiet_hours_rarely():
    from starfeed.schedule.decide import rhythm_wait

    day = 86400.0
    # Two weeks of posts at 09:00-10:00 UTC only.
    posts = tuple(sorted(d * day + 9 * 3600 + m * 60 for d in range(14) for m in (5, 35)))[-20:]
    hours = tuple(28 if h == 9 else 0 for h in range(24))
    busy = rhythm_wait(posts, hours, 15 * day + 9 * 3600, 13000, day)
    quiet = rhythm_wait(posts, hours, 15 * day + 14 * 3600, 13000, day)
    assert busy < quiet  # in its posting hour a feed is checked sooner than in its quiet ones
    d = after(source(interval=900), FetchOutcome(200, new_entries=1, publications=posts))
    rhythm = decide(source(interval=900, hour_counts=list(hours)), FetchOutcome(200, new_entries=1, publications=posts),
                    Settings(), NOW, NoJitter())
    assert rhythm.reason == "rhythm" and d.reason.startswith("new-entries")  # the ewma model is untouched


def test_a_moderately_active_feed_waits_at_most_the_active_cap_beyond_its_quiet_hours():
    from starfeed.schedule.decide import rhythm_wait

    day = 86400.0
    # A post a day at 09:00 UTC for 20 days: the square root rule alone waits most of a day.
    posts = tuple(d * day + 9 * 3600 for d in range(20))
    hours = tuple(20 if h == 9 else 0 for h in range(24))
    at_nine = 20 * day + 9 * 3600 + 60
    uncapped = rhythm_wait(posts, hours, at_nine, 25000, day)
    capped = rhythm_wait(posts, hours, at_nine, 25000, day, active_max_wait=6.5 * 3600,
                         active_min_posts_per_day=0.3)
    assert uncapped > 12 * 3600 and capped < 7 * 3600  # 6.5 h after the next few minutes of its busy hour
    # At 10:00 the feed's quiet stretch lies ahead: the cap starts counting only when it ends.
    evening = rhythm_wait(posts, hours, 20 * day + 10 * 3600, 25000, day, 6.5 * 3600, 0.3)
    assert evening > 6.5 * 3600
    # Too slow a feed is not capped.
    assert rhythm_wait(posts, hours, at_nine, 25000, day, 6.5 * 3600, 2.0) == uncapped


def test_a_feed_gone_quiet_is_checked_less_often():
    from starfeed.schedule.decide import rhythm_wait

    posts = tuple(float(h * 3600) for h in range(20))  # hourly, then silence
    hours = (1,) * 24
    just_after = rhythm_wait(posts, hours, 20 * 3600, 25000, 86400)
    a_week_later = rhythm_wait(posts, hours, 20 * 3600 + 7 * 86400, 25000, 86400)
    assert a_week_later > 3 * just_after


def test_a_very_busy_feed_is_checked_before_its_posts_could_scroll_away():
    from starfeed.schedule.decide import POSTS_PER_CHECK, rhythm_wait

    posts = tuple(float(m * 60) for m in range(20))  # a post a minute
    wait = rhythm_wait(posts, (1,) * 24, 20 * 60, 25000, 86400)
    assert wait < (POSTS_PER_CHECK + 1) * 60  # about five posts' worth, not the sqrt rule's 20 min


# Every model, failure policy and publisher hint, one row each. The expected figures are worked
# by hand from the formulas (the comments show the arithmetic); hour_counts empty means the
# Laplace prior alone, so a feed's rate is the same every hour and rhythm_wait has a closed form:
# min(sqrt(scale / rate), 5 / rate, and, when active, horizon + 0.05 / rate).
RHYTHM = Settings(default_interval=900, min_interval=300, max_interval=86400, backoff_cap=86400)
SQRT = Settings(default_interval=900, min_interval=300, max_interval=86400, interval_model="sqrt")
DAY = 86400


def posting(per_day: float, count: int = 20) -> list[float]:
    """count publications per_day apart, the latest at NOW."""
    return [NOW - DAY / per_day * n for n in reversed(range(count))]


@pytest.mark.parametrize(("settings", "state", "outcome", "pace", "expected"), [
    # rhythm (the default model)
    pytest.param(RHYTHM, {}, FetchOutcome(200), None, (86400, "rhythm", NOW + 86400),
                 id="rhythm: no history, a post a week assumed: sqrt(25000 * 604800) = 122963 -> max"),
    pytest.param(RHYTHM, {"publications": posting(2, 15)}, FetchOutcome(200), None,
                 (25560, "rhythm", NOW + 25560),
                 id="rhythm: 2 a day is active: 23400 + 0.05 * 43200 = 25560 < sqrt(25000 * 43200)"),
    pytest.param(RHYTHM, {"publications": posting(2, 15)}, FetchOutcome(200), Pace(600, 0.1),
                 (2760, "rhythm", NOW + 2760), id="rhythm: the pace's horizon: 600 + 2160 = 2760"),
    pytest.param(RHYTHM, {"publications": posting(2, 15)}, FetchOutcome(200), Pace(600, 3.0),
                 (32863, "rhythm", NOW + 32863),
                 id="rhythm: not active under the pace's threshold: sqrt(25000 * 43200) = 32863"),
    pytest.param(RHYTHM, {"publications": posting(50)}, FetchOutcome(200), None, (6572, "rhythm", NOW + 6572),
                 id="rhythm: 50 a day: sqrt(25000 * 1728) = 6572 < 5 * 1728"),
    pytest.param(RHYTHM, {"publications": posting(50)}, FetchOutcome(200, ttl_minutes=120), None,
                 (7200, "rhythm+publisher-floor", NOW + 7200), id="hint: RSS ttl 120 min is a floor"),
    pytest.param(RHYTHM, {"publications": posting(50)}, FetchOutcome(200, fresh_for=10000), None,
                 (10000, "rhythm+publisher-floor", NOW + 10000), id="hint: Cache-Control max-age is a floor"),
    pytest.param(RHYTHM, {"publications": posting(50)}, FetchOutcome(200, ttl_minutes=100000), None,
                 (86400, "rhythm+publisher-floor", NOW + 86400), id="hint: a floor beyond the maximum stops there"),
    pytest.param(RHYTHM, {"publications": posting(50)}, FetchOutcome(200, skip_hours=(9,)), None,
                 (6572, "rhythm+skip-window", NOW + 7200),
                 id="hint: skipHours: 08:00 + 6572 s falls in hour 9, so 10:00"),
    pytest.param(RHYTHM, {"publications": posting(50)}, FetchOutcome(200, skip_days=("Fri",)), None,
                 (6572, "rhythm+skip-window", NOW + 16 * 3600),
                 id="hint: skipDays: NOW is a Friday 08:00, so Saturday 00:00"),
    pytest.param(RHYTHM, {"publications": posting(50), "polling": False}, FetchOutcome(200), None,
                 (6572, "rhythm", None), id="polling off: decided, not re-armed"),
    # failure policies (the same under every model)
    pytest.param(RHYTHM, {"interval": 900}, FetchOutcome(500, error="HTTP 500"), None,
                 (900, "error-backoff", NOW + 1800), id="backoff: 900 * 2^1"),
    pytest.param(RHYTHM, {"interval": 900, "consecutive_failures": 3}, FetchOutcome(500, error="HTTP 500"), None,
                 (900, "error-backoff", NOW + 14400), id="backoff: 900 * 2^4"),
    pytest.param(RHYTHM, {"interval": 86400, "consecutive_failures": 2}, FetchOutcome(500, error="HTTP 500"), None,
                 (86400, "error-backoff", NOW + 86400), id="backoff: capped at backoff_cap"),
    pytest.param(RHYTHM, {"interval": 900, "consecutive_failures": 9}, FetchOutcome(500, error="HTTP 500"), None,
                 (900, "circuit-open after 10 failures", None), id="backoff: the circuit breaker parks it"),
    pytest.param(RHYTHM, {"interval": 900, "policy": "one-strike"}, FetchOutcome(404, error="404"), None,
                 (900, "one-strike", None), id="one-strike: parked at the first error"),
    pytest.param(RHYTHM, {"interval": 900}, FetchOutcome(429, error="429", retry_after=120), None,
                 (900, "retry-after", NOW + 120), id="hint: Retry-After, exactly"),
    pytest.param(RHYTHM, {"interval": 900}, FetchOutcome(503, error="503", retry_after=7200), None,
                 (900, "retry-after", NOW + 7200), id="hint: a 503's Retry-After, exactly"),
    # sqrt: multiplicative steps blended with sqrt(ewma * scale)
    pytest.param(SQRT, {"interval": 1000}, FetchOutcome(304, not_modified=True), None,
                 (1250, "not-modified", NOW + 1250), id="sqrt: not modified, no cadence yet: 1000 * 1.25"),
    pytest.param(SQRT, {"interval": 1000, "ewma_interarrival": 3600}, FetchOutcome(304, not_modified=True), None,
                 (5368, "not-modified+ewma", NOW + 5368),
                 id="sqrt: blended: 0.5 * sqrt(3600 * 25000) + 0.5 * 1250 = 5368"),
    pytest.param(SQRT, {"interval": 1000}, FetchOutcome(200, new_entries=2), None,
                 (750, "new-entries", NOW + 750), id="sqrt: new entries: 1000 * 0.75"),
    # ewma: multiplicative steps blended with the EWMA itself (docs/design.md#ewma-blend)
    pytest.param(SETTINGS, {"interval": 1000, "ewma_interarrival": 3600}, FetchOutcome(304, not_modified=True),
                 None, (2425, "not-modified+ewma", NOW + 2425), id="ewma: 0.5 * 3600 + 0.5 * 1250 = 2425"),
    pytest.param(SETTINGS, {"interval": 1000}, FetchOutcome(200), None,
                 (1250, "no-new-entries", NOW + 1250), id="ewma: nothing new: 1000 * 1.25"),
])
def test_decisions(settings, state, outcome, pace, expected):
    d = decide(source(**state), outcome, settings, NOW, NoJitter(), pace)
    at = None if d.next_check_at is None else int(d.next_check_at)  # to the second, as worked out
    assert (d.interval, d.reason, at) == expected


def test_a_rare_source_may_wait_beyond_a_day_only_when_rare_max_interval_allows_it():
    # Three posts a month ago: far below the pace's activity threshold; the sqrt rule asks more
    # than a day. The 24 h cap (docs/design.md#clamps) holds by default; an active source keeps it under either setting.
    rare = source(publications=[NOW - 40 * 86400, NOW - 35 * 86400, NOW - 30 * 86400])
    pace = Pace(6 * 3600, 0.3)
    rhythm = Settings(interval_model="rhythm")
    longer = Settings(interval_model="rhythm", rare_max_interval=7 * 86400)
    assert decide(rare, FetchOutcome(200), rhythm, NOW, NoJitter(), pace).interval == 86400
    assert 86400 < decide(rare, FetchOutcome(200), longer, NOW, NoJitter(), pace).interval <= 7 * 86400
    active = Pace(6 * 3600, 0.01)  # the same source counted active: a day at most
    assert decide(rare, FetchOutcome(200), longer, NOW, NoJitter(), active).interval == 86400


# A WebSub subscription verified at NOW for four minutes (docs/design.md#websub-renewal).
SHORT_LEASE = {"hub": "https://hub.example/", "topic": "https://example.org/feed", "state": "verified",
               "verified_at": NOW, "expires_at": NOW + 240, "requested_at": NOW - 1}
PUSHED = Settings(public_url="https://feeds.example", default_interval=900, interval_model="ewma")


def test_a_pushed_feed_stays_on_its_daily_poll_and_its_short_lease_is_renewed_before_it_ends():
    from starfeed.schedule.decide import decide_fetch, pushed_check, renewal_only

    d = decide_fetch(source(interval=900, push=SHORT_LEASE), FetchOutcome(200, new_entries=1), PUSHED, NOW,
                     NoJitter())
    assert (d.next_check_at, d.interval) == (NOW + 120, 86400)  # the renewal first; the poll a day on
    assert d.reason == "push verified until 2027-01-15T08:04:00Z: lease renewal, then the daily safety check"
    polled = source(interval=d.interval, last_fetch_at=NOW, push=SHORT_LEASE)
    assert [renewal_only(polled, NOW + t, PUSHED) for t in (119, 120, 86400)] == [False, True, False]
    renewing = source(interval=d.interval, last_fetch_at=NOW, push={**SHORT_LEASE, "requested_at": NOW + 120})
    assert pushed_check(renewing, NOW + 120, PUSHED)[0] == NOW + 180  # asked again if no new lease comes
    renewed = source(interval=d.interval, last_fetch_at=NOW,
                     push={**SHORT_LEASE, "verified_at": NOW + 121, "expires_at": NOW + 361, "requested_at": NOW + 120})
    assert pushed_check(renewed, NOW + 121, PUSHED)[0] == NOW + 241  # the next renewal; the poll stays
    lapsed = source(interval=d.interval, last_fetch_at=NOW, push={**SHORT_LEASE, "requested_at": NOW + 180})
    assert pushed_check(lapsed, NOW + 180, PUSHED) == (NOW + 86400, "push verified until 2027-01-15T08:04:00Z: "
                                                                     "daily safety check")


def test_a_long_lease_is_renewed_by_the_poll_that_comes_first():
    from starfeed.schedule.decide import decide_fetch

    long = {**SHORT_LEASE, "expires_at": NOW + 10 * 86400}
    d = decide_fetch(source(interval=900, push=long), FetchOutcome(304, not_modified=True), PUSHED, NOW, NoJitter())
    assert (d.next_check_at, d.interval) == (NOW + 86400, 86400)
    assert d.reason.endswith(": daily safety check")

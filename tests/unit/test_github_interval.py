"""The per-account interval's cases (docs/design.md#github-interval), and every GitHub verdict's decision."""

import random

import pytest

from starfeed.model import GitHubAccount, Source
from starfeed.parse.github import Answer
from starfeed.schedule.github import (
    REJECTED_PAUSE,
    account_checked,
    after_read,
    following_checked,
    tier_of,
    user_interval,
)
from starfeed.settings import Settings

MINUTE = 60.0


def stars(*minutes: float) -> list[float]:
    return [m * MINUTE for m in minutes]


def test_eve_with_fewer_than_three_stars_gets_the_clamped_default_and_tier_low():
    eve = user_interval(stars(0, 30), None, 1, default=60, low=10, high=10080)
    assert (eve.minutes, eve.tier, eve.ema) == (60, "low", None)
    assert user_interval(stars(0), None, 0, default=5, low=10, high=10080).minutes == 10
    assert user_interval([], None, 0, default=99999, low=10, high=10080).minutes == 10080


def test_frank_ema_90_and_a_star_30_minutes_later_gives_72():
    result = user_interval(stars(0, 100, 200, 230), 90.0, 1, default=60, low=10, high=10080)
    assert round(result.minutes, 6) == 72 and result.ema == result.minutes


def test_grace_at_45_minutes_is_high_activity():
    assert tier_of(45) == "high" and tier_of(60) == "high"
    assert tier_of(61) == "medium" and tier_of(1440) == "medium" and tier_of(1441) == "low"


def test_seeding_averages_all_gaps_before_the_first_update():
    # Gaps 60 and 120: their mean 90 starts the EMA, then 0.3 * 120 + 0.7 * 90 = 99.
    result = user_interval(stars(0, 60, 180), None, 2, default=60, low=10, high=10080)
    assert round(result.minutes, 6) == 99 and result.tier == "medium"


def test_bounds_never_leave_10_to_10080_minutes():
    busy = user_interval(stars(0, 1, 2, 3), 1.0, 1, default=60, low=1, high=99999)
    assert busy.minutes == 10
    quiet = user_interval(stars(0, 20000, 40000), None, 2, default=60, low=10, high=99999)
    assert quiet.minutes == 10080 and quiet.tier == "low"


# after_read: every verdict of a GitHub fetch -> the Decision written on the source, the kind's own
# rhythm on success.
NOW = 1_800_000_000.0
SETTINGS = Settings(startup_jitter=0)  # rate-limited: the next check is exactly the pause's end


def account(**state) -> Source:
    return Source(source_id="u", url="https://api.github.com/users/eve", kind="github-user",
                  github=GitHubAccount(login="eve"), status="ok", **state)


@pytest.mark.parametrize(("source", "verdict", "until", "star_times", "new", "expected"), [
    pytest.param(account(), "ok", None, stars(0, 30), 1,
                 (3600, NOW + 3600, "default 60 min until three stars", 0, "low", None),
                 id="ok: two stars keep the default"),
    pytest.param(account(), "ok", None, stars(0, 60, 180), 3,
                 (99 * 60, NOW + 99 * 60, "star EMA 99 min, tier medium", 0, "medium", 99 * 60),
                 id="ok: the third star seeds the EMA"),
    pytest.param(account(ewma_interarrival=90 * 60, interval=90 * 60, consecutive_failures=2), "ok", None,
                 stars(0, 100, 200, 230), 1,
                 (72 * 60, NOW + 72 * 60, "star EMA 72 min, tier medium", 0, "medium", 72 * 60),
                 id="ok: one new gap updates the EMA and clears failures"),
    pytest.param(account(ewma_interarrival=30 * 60, interval=30 * 60), "not-modified", None,
                 stars(0, 30, 60), 0,
                 (30 * 60, NOW + 30 * 60, "star EMA 30 min, tier high", 0, "high", 30 * 60),
                 id="not-modified: no new gap keeps the EMA"),
    pytest.param(account(ewma_interarrival=5000 * 60), "ok", None, stars(0, 5000, 10000), 0,
                 (1440 * 60, NOW + 1440 * 60, "star EMA 1440 min, tier medium", 0, "medium", 1440 * 60),
                 id="ok: clamped to github_max_minutes"),
    pytest.param(Source(source_id="f", url="https://api.github.com/user/following", kind="github-following"),
                 "ok", None, [], 0, (86400, NOW + 86400, "follow list: daily", 0, None, None),
                 id="follow list: daily"),
    pytest.param(account(interval=1800, consecutive_failures=1), "rate-limited", NOW + 900, [], 0,
                 (1800, NOW + 900, "github-rate-limited", 1, None, None),
                 id="rate-limited: back when the pause ends, no failure counted"),
    pytest.param(account(interval=1800), "rejected", None, [], 0,
                 (1800, NOW + REJECTED_PAUSE, "github-token-rejected", 1, None, None),
                 id="rejected: held until github connect"),
    pytest.param(account(interval=1800, consecutive_failures=3), "failed", None, [], 0,
                 (1800, NOW + 1800, "github-failed: next window", 4, None, None),
                 id="failed: the next window"),
    pytest.param(account(), "failed", None, [], 0,
                 (3600, NOW + 3600, "github-failed: next window", 1, None, None),
                 id="failed before any interval: the default"),
    pytest.param(account(interval=1800, consecutive_failures=9), "failed", None, [], 0,
                 (1800, None, "circuit-open after 10 failures", 10, None, None),
                 id="failed: the circuit breaker parks it"),
    pytest.param(account(interval=1800, policy="one-strike"), "failed", None, [], 0,
                 (1800, None, "one-strike", 1, None, None),
                 id="failed: one strike parks it"),
    pytest.param(account(polling=False), "ok", None, stars(0, 30), 1,
                 (3600, None, "default 60 min until three stars", 0, "low", None),
                 id="polling off: not re-armed"),
])
def test_after_read(source, verdict, until, star_times, new, expected):
    checked = {"github-user": lambda: account_checked(source, star_times, new, NOW, SETTINGS),
               "github-following": lambda: following_checked(source, NOW, SETTINGS)}[source.kind]
    decision = after_read(source, Answer(verdict), until, NOW, SETTINGS, random.Random(1), checked)
    assert (decision.interval, decision.next_check_at, decision.reason, decision.consecutive_failures,
            decision.tier, decision.ewma) == expected
    assert decision.dead == (expected[1] is None and verdict == "failed")

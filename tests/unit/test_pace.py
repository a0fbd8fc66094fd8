"""The scheduler's pace (docs/design.md#pace): a horizon and an activity threshold derived from every source."""

import math
import random

import pytest

from starfeed.model import FetchOutcome, Pace, Source
from starfeed.schedule.decide import decide
from starfeed.schedule.pace import active_rate, entry_frequency_interval, next_pace, uniform_p95
from starfeed.settings import Settings

DAY, HOUR = 86400, 3600
NOW = 1_790_000_000.0
SETTINGS = Settings()


def evenly(per_day: float, days: float = 7) -> list[float]:
    """The latest 20 posts of a feed posting per_day, evenly, up to NOW."""
    gap = DAY / per_day
    return [NOW - gap * n for n in reversed(range(min(20, int(days * per_day) + 1)))]


def test_the_p95_of_posts_checked_on_uniform_intervals():
    assert uniform_p95([(1.0, 1000.0)]) == pytest.approx(950)
    # Half the posts wait up to 1000 s, half up to 100 s: 5% of all wait beyond 900 s.
    assert uniform_p95([(1.0, 1000.0), (1.0, 100.0)]) == pytest.approx(900)
    assert uniform_p95([]) == 0.0


def test_the_slowest_sources_whose_posts_are_a_few_percent_are_not_active():
    rates = [1.0, 1.0, 1.0, 97.0]
    assert active_rate(rates, 0.04) == 97.0  # the three slow ones carry 3% of the posts
    assert active_rate(rates, 0.02) == 1.0


def test_the_entry_frequency_interval_is_a_week_over_the_weeks_posts():
    assert entry_frequency_interval(evenly(24), NOW) == pytest.approx(HOUR, rel=0.01)
    assert entry_frequency_interval([], NOW) == 86400
    assert entry_frequency_interval([NOW - 30 * DAY], NOW) == 86400
    # Two posts ten minutes apart make it check every ten minutes for a week: its known quirk.
    assert entry_frequency_interval([NOW - 3 * DAY, NOW - 3 * DAY + 600], NOW) == 600
    # Posts all stamped alike give its weekly count no gap: none, so the longest interval.
    assert entry_frequency_interval([NOW - DAY] * 5, NOW) == 86400
    # A post a day: weekly 7, so 1440 minutes; a post every 7 hours: weekly 24, so 420 minutes.
    assert entry_frequency_interval([NOW - DAY * n for n in range(6, -1, -1)], NOW) == 86400
    assert entry_frequency_interval([NOW - 3 * DAY + 7 * HOUR * n for n in range(10)], NOW) == 420 * 60


def test_the_horizon_is_a_share_of_the_entry_frequency_p95_on_the_same_sources():
    sources = [evenly(2)] * 50 + [evenly(0.5)] * 50
    pace = next_pace(SETTINGS.initial_pace(), sources, SETTINGS, NOW)
    assert pace.horizon == pytest.approx(SETTINGS.horizon_share * pace.reference)
    # Half a day and two days between posts: 5% of posts wait beyond about 0.81 of a day.
    assert pace.reference == pytest.approx(uniform_p95([(2 / DAY, DAY / 2)] * 50 + [(0.5 / DAY, DAY)] * 50))


def test_busier_sources_get_a_shorter_horizon_and_a_higher_activity_threshold():
    slow = next_pace(SETTINGS.initial_pace(), [evenly(0.5)] * 90 + [evenly(3)] * 10, SETTINGS, NOW)
    busy = next_pace(SETTINGS.initial_pace(), [evenly(8)] * 90 + [evenly(3)] * 10, SETTINGS, NOW)
    assert busy.horizon < slow.horizon / 3
    assert busy.active_per_day > slow.active_per_day


def test_the_reference_moves_a_little_each_hour_and_nothing_changes_without_sources():
    first = next_pace(SETTINGS.initial_pace(), [evenly(1)] * 10, SETTINGS, NOW)
    second = next_pace(first, [evenly(12)] * 10, SETTINGS, NOW)
    alone = next_pace(SETTINGS.initial_pace(), [evenly(12)] * 10, SETTINGS, NOW)
    assert alone.reference < second.reference < first.reference
    assert second.reference == pytest.approx(first.reference + (alone.reference - first.reference) / 24)
    assert next_pace(first, [], SETTINGS, NOW) == first


def test_the_horizon_stays_within_the_global_bounds():
    dormant = next_pace(SETTINGS.initial_pace(), [[]] * 10, SETTINGS, NOW)
    assert dormant.horizon <= SETTINGS.max_interval
    frantic = next_pace(SETTINGS.initial_pace(), [evenly(2000)] * 10, SETTINGS, NOW)
    assert frantic.horizon == SETTINGS.min_interval
    assert math.isfinite(frantic.active_per_day)


def test_a_decision_waits_by_the_pace_it_is_given():
    # A feed posting twice a day, every day: active under a threshold of 0.1 posts a day, so it
    # waits at most the pace's horizon beyond its quiet stretch; under a threshold of 50 it is
    # not active, and the horizon no longer bounds it.
    source = Source(source_id="a", url="https://example.com/", publications=evenly(2))

    def wait(pace):
        return decide(source, FetchOutcome(200), SETTINGS, NOW, random.Random(1), pace).interval

    assert wait(Pace(600, 0.1)) < wait(Pace(7200, 0.1)) < wait(Pace(7200, 50.0))
    assert wait(None) == wait(SETTINGS.initial_pace())  # before the scheduler's first step


def test_the_reference_keeps_minifluxs_clamps_whatever_ours_are():
    sources = [evenly(0.5)] * 50 + [evenly(4)] * 50
    ours = next_pace(SETTINGS.initial_pace(), sources, SETTINGS, NOW)
    wider = Settings(min_interval=60, max_interval=7 * DAY)
    assert next_pace(wider.initial_pace(), sources, wider, NOW).reference == ours.reference
    assert entry_frequency_interval([NOW - 3 * DAY, NOW - 3 * DAY + 60], NOW) == 300  # its 5 minutes

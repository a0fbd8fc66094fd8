"""The population's pace: how long an active source may wait beyond its quiet hours, and how
often a source must post to count as active. Pure: the scheduler recomputes it every hour from
the state of every scheduled source, and the fetchers' decisions read it.

Why a population figure: the best wait for one feed depends on all the others. For the p95 delay
of all posts, the best use of fetches polls every source that carries a real share of the posts
at about one horizon, and lets the slowest sources, whose posts together are a few percent of
all, wait on the square root rule alone (a linear program over per-source fetch rates has that
solution). What horizon is right depends on the population: it is a share (horizon_share) of the
p95 delay that the entry-frequency rule most aggregators use (Miniflux's: one check per expected
post, at least daily) would leave on these same sources, estimated from their recent posts.
"""

from __future__ import annotations

import bisect
import math

from starfeed.model import Pace
from starfeed.schedule.decide import WEEK, posting_rate
from starfeed.settings import Settings

DAY = 86400
TAIL = 0.05  # the p95
EVERY = 3600  # seconds between the scheduler's steps of the pace
SMOOTHING = 1 / 24  # weight of each step's new estimate: the reference moves over about a day
MINIFLUX_CLAMPS = (300.0, 86400.0)  # its 5 and 1440 minutes, whatever our own clamps are


def next_pace(pace: Pace, publications: list[list[float]], settings: Settings, now: float) -> Pace:
    """One hourly step, from the latest publication times of every source on the schedule."""
    if not publications:
        return pace
    rates = [posting_rate(p, now) for p in publications]
    reference = uniform_p95([(rate, entry_frequency_interval(p, now))
                             for rate, p in zip(rates, publications)])
    if pace.reference:  # it swings with every burst of posts
        reference = pace.reference + SMOOTHING * (reference - pace.reference)
    horizon = min(max(settings.horizon_share * reference, settings.min_interval), settings.max_interval)
    return Pace(horizon, active_rate(sorted(rates), settings.rare_post_share) * DAY, reference)


def uniform_p95(sources: list[tuple[float, float]]) -> float:
    """The p95 delay of all posts when each source (posts per second, interval) is checked every
    interval: a post waits uniformly up to its source's interval, so the share of posts waiting
    longer than x is sum(rate * (1 - x / interval)) over intervals above x, over all posts."""
    allowed = TAIL * sum(rate for rate, _ in sources)
    longer = rate_over_interval = 0.0  # sums over the sources whose interval is above x
    ordered = sorted(sources, key=lambda source: -source[1])
    for n, (rate, interval) in enumerate(ordered):
        longer, rate_over_interval = longer + rate, rate_over_interval + rate / interval
        below = ordered[n + 1][1] if n + 1 < len(ordered) else 0.0
        x = (longer - allowed) / rate_over_interval  # where the share crosses TAIL, if in this stretch
        if x >= below:
            return max(x, 0.0)
    return 0.0


def entry_frequency_interval(publications: list[float], now: float) -> float:
    """Miniflux's entry-frequency interval (storage WeeklyFeedEntryCount, model ScheduleNextCheck):
    weekly = ceil(one week / the average gap of the last week's posts), none when fewer than two
    posts or no gap; then one week over weekly, in whole minutes, clamped to Miniflux's own
    bounds; the longest for none. Our clamps do not move this reference."""
    low, high = MINIFLUX_CLAMPS
    week = publications[bisect.bisect_left(publications, now - WEEK):]
    if len(week) < 2 or week[-1] == week[0]:
        return high
    weekly = math.ceil(WEEK / ((week[-1] - week[0]) / (len(week) - 1)))
    return min(max(round(WEEK / 60 / weekly) * 60.0, low), high)


def active_rate(rates: list[float], rare_share: float) -> float:
    """The slowest rate at which the posts of every slower source exceed rare_share of all posts
    (rates ascending)."""
    allowed, total = rare_share * sum(rates), 0.0
    for rate in rates:
        total += rate
        if total > allowed:
            return rate
    return rates[-1] if rates else 0.0

"""The interval decision: source state + fetch outcome -> next check. Pure: no I/O, no clock.

docs/design.md#scheduling in full (multiplicative steps, EWMA of inter-arrival blended in, clamps,
publisher ttl and HTTP freshness as floors, skipHours/skipDays, jitter, Retry-After exactly), with
the failure policies of schedule/policy.py: exponential backoff (longer for a site that refuses
starfeed) or one strike, and a circuit breaker for both.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from starfeed.model import FetchOutcome, Pace, Source, host_key_of
from starfeed.parse.normalize import rfc3339
from starfeed.schedule.policy import parked, rearmed, refused_wait
from starfeed.settings import Settings
from starfeed.websub.subscription import SAFETY_CHECK, is_verified, pushed_check_at, renews_only, safety_poll_at

UP_FACTOR = 1.25
DOWN_FACTOR = 0.75
EWMA_ALPHA = 0.3
BLEND_LAMBDA = 0.5
JITTER_RATIO = 0.15
HISTORY = 20  # publication times kept for the EWMA (docs/design.md#scheduling)
QUIET_POSTS = 0.05  # expected posts below which a stretch of a feed's day counts as quiet
POSTS_PER_CHECK = 5  # at most this many new posts expected per check: none falls off a short feed
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


DAY, WEEK = 86400, 7 * 86400


@dataclass(frozen=True)
class Decision:
    interval: int  # the source's base interval from now on (seconds)
    next_check_at: float | None  # None: not re-armed
    reason: str
    consecutive_failures: int
    ewma: float | None = None  # EWMA of inter-arrival (seconds)
    publications: tuple[float, ...] = ()  # the latest publication times, ascending
    dead: bool = False  # parked: off the schedule until a sync
    hour_counts: tuple[int, ...] = ()  # publications seen per UTC hour of day (rhythm model)
    tier: str | None = None  # GitHub accounts: the label of their interval (docs/design.md#github-tiers)


def decide_fetch(source: Source, outcome: FetchOutcome, settings: Settings, now: float,
                 rng: random.Random, pace: Pace | None = None) -> Decision:
    """The decision after a fetch of a document: decide()'s, with two rules around it. Stored
    state that cannot be used (an item edited by hand) must not wedge the source: it starts again
    from the default interval, its learned rhythm forgotten. And while a hub pushes the feed
    (WebSub), it is polled once a day (or as its schedule says, when that is rarer); its lease's
    renewal, when it comes first, is a check of its own (pushed_check)."""
    try:
        decision = decide(source, outcome, settings, now, rng, pace)
    except (TypeError, ValueError, ArithmeticError) as exc:
        return Decision(settings.default_interval, now + settings.default_interval,
                        f"default: stored state unusable ({type(exc).__name__})", 0)
    if outcome.failed or not is_verified(source.push, now) or decision.next_check_at is None:
        return decision
    poll_at = max(decision.next_check_at, now + SAFETY_CHECK)
    at, reason = _pushed(source, poll_at, settings)
    # The interval is the poll's: safety_poll_at finds it again from the last poll.
    return replace(decision, next_check_at=at, interval=int(poll_at - now), reason=reason)


def pushed_check(source: Source, now: float, settings: Settings) -> tuple[float, str]:
    """(next check, reason) of a source whose WebSub subscription is verified, decided away from
    a poll (its lease verified, or its renewal asked for): its safety poll, a day after the last
    one, or the lease's renewal when that comes first (docs/design.md#websub-renewal)."""
    return _pushed(source, safety_poll_at(source.last_fetch_at, source.interval, now), settings)


def renewal_only(source: Source, now: float, settings: Settings) -> bool:
    """A due check that is for the WebSub lease's renewal alone: the hub is asked, the feed is not
    polled (docs/design.md#websub-renewal)."""
    return renews_only(source.push, safety_poll_at(source.last_fetch_at, source.interval, now), now, settings)


def asked_host(source: Source, now: float, settings: Settings) -> str:
    """The host a due check asks, whose pause holds it: for a WebSub lease's renewal alone, the
    hub's (the feed is not asked, and a pause of the feed's host must not let the lease lapse);
    else the source's."""
    hub = (source.push or {}).get("hub")
    if isinstance(hub, str) and hub and renewal_only(source, now, settings):
        return host_key_of(hub)
    return source.host


def _pushed(source: Source, poll_at: float, settings: Settings) -> tuple[float, str]:
    at = pushed_check_at(source.push, poll_at, settings)
    until = rfc3339((source.push or {}).get("expires_at") or at)
    then = "lease renewal, then the daily safety check" if at < poll_at else "daily safety check"
    return at, f"push verified until {until}: {then}"


def decide(source: Source, outcome: FetchOutcome, settings: Settings, now: float,
           rng: random.Random, pace: Pace | None = None) -> Decision:
    """pace: the population's, which the scheduler steps hourly (schedule/pace.py); before its
    first step, the settings' starting values."""
    hours = _count_hours(source, outcome.publications)
    return replace(_decide(source, outcome, settings, now, rng, hours, pace or settings.initial_pace()),
                   hour_counts=hours)


def _decide(source: Source, outcome: FetchOutcome, settings: Settings, now: float,
            rng: random.Random, hours: tuple[int, ...], pace: Pace) -> Decision:
    before = float(source.interval or settings.default_interval)
    low, high = _bounds(source, settings)
    publications = _merge(source.publications, outcome.publications)
    ewma = ewma_interarrival(publications) if publications != tuple(source.publications) else source.ewma_interarrival

    failures = source.consecutive_failures + 1
    # A site that refuses starfeed waits on its own schedule, Retry-After its least.
    refused = refused_wait(outcome.failure, failures, settings) if outcome.failed else None
    if outcome.retry_after is not None and (refused is None or outcome.retry_after >= refused):
        # The publisher said exactly when to come back: no jitter, no clamp.
        return Decision(int(before), rearmed(source.polling, now + outcome.retry_after), "retry-after",
                        failures, ewma, publications)
    if outcome.failed:
        if why := parked(failures, source.policy, settings):
            return Decision(int(before), None, why, failures, ewma, publications, dead=True)
        wait = refused if refused is not None else min(before * 2 ** failures, settings.backoff_cap)
        reason = f"{outcome.failure}-backoff" if refused is not None else "error-backoff"
        return Decision(int(before), rearmed(source.polling, now + _jitter(wait, rng)), reason,
                        failures, ewma, publications)

    if settings.interval_model == "rhythm":
        if not source.max_interval and posting_rate(publications, now) * DAY < pace.active_per_day:
            high = max(high, float(settings.rare_max_interval))  # a rare source may wait longer
        interval = _clamp(rhythm_wait(publications, hours, now, settings.sqrt_scale, high,
                                      pace.horizon, pace.active_per_day), low, high)
        reason = "rhythm"
    elif outcome.not_modified:
        interval, reason = before * UP_FACTOR, "not-modified"
    elif outcome.new_entries > 0:
        interval, reason = before * DOWN_FACTOR, "new-entries"
    else:
        interval, reason = before * UP_FACTOR, "no-new-entries"
    interval = _clamp(interval, low, high)
    if ewma is not None and settings.interval_model != "rhythm":
        interval = _clamp(BLEND_LAMBDA * _clamp(target_interval(ewma, settings), low, high)
                          + (1 - BLEND_LAMBDA) * interval, low, high)
        reason += "+ewma"
    floor = max(outcome.ttl_minutes * 60 if outcome.ttl_minutes else 0, outcome.fresh_for or 0)
    if floor > interval:
        # The publisher's ttl and HTTP freshness are floors (clamped to [ttl, max]).
        interval, reason = min(floor, high), reason + "+publisher-floor"
    at = now + _jitter(interval, rng)
    shifted = skip_windows(at, outcome.skip_hours, outcome.skip_days)
    if shifted != at:
        reason += "+skip-window"
    return Decision(int(interval), rearmed(source.polling, shifted), reason, 0, ewma, publications)


def target_interval(ewma: float, settings: Settings) -> float:
    """The interval the observed cadence asks for. "ewma": the EWMA itself (docs/design.md#ewma-blend).
    "sqrt": the square root of the EWMA times a scale, so a fetch budget is spent in proportion
    to the square root of each feed's rate, which minimizes staleness for a given budget (Cho and
    Garcia-Molina): busy feeds are fetched less than once per post, quiet ones more often."""
    if settings.interval_model == "sqrt":
        return math.sqrt(ewma * settings.sqrt_scale)
    return ewma


def rhythm_wait(publications: tuple[float, ...], hour_counts: tuple[int, ...], now: float,
                scale: float, longest: float, active_max_wait: float | None = None,
                active_min_posts_per_day: float = 0.0) -> float:
    """The wait that spends one fetch's worth of a sqrt(rate) budget, hour by hour: a feed's rate
    is spread over the UTC hours it has been seen posting in (a smoothed histogram), so checks
    crowd its busy hours and thin out in its quiet ones (Cho and Garcia-Molina, by hour).

    The rate runs to now, not to the last post, so a feed gone quiet slows down. A feed posting
    at least active_min_posts_per_day waits at most active_max_wait beyond its quiet stretch:
    the square root rule alone leaves moderately active feeds' posts waiting longest. And a check
    comes before about POSTS_PER_CHECK new posts are expected, so a very busy feed's posts do not
    scroll out of its document between checks."""
    rate = posting_rate(publications, now)
    counts = [c + 1 for c in (hour_counts or (0,) * 24)]  # Laplace prior: every hour possible
    share = [c / sum(counts) for c in counts]

    def hourly(at: float) -> float:  # expected posts per second in the hour of `at`
        return rate * 24 * share[int(at % 86400 // 3600)]

    wait = min(_spend(now, longest, lambda at: math.sqrt(hourly(at) / scale), 1.0),
               _spend(now, longest, hourly, POSTS_PER_CHECK))
    if active_max_wait and rate * 86400 >= active_min_posts_per_day:
        wait = min(wait, active_max_wait + _spend(now, longest, hourly, QUIET_POSTS))
    return wait


def posting_rate(publications: tuple[float, ...] | list[float], now: float) -> float:
    """Posts per second over the latest publications, up to now: a feed gone quiet slows down."""
    if len(publications) >= 3 and publications[-1] > publications[0]:
        return (len(publications) - 1) / (max(now, publications[-1]) - publications[0])
    return 1 / WEEK  # too little history: assume a post a week


def _spend(now: float, longest: float, speed: Callable[[float], float], budget: float) -> float:
    """How long until `budget` is used up at speed(t) per second (piecewise by the hour)."""
    waited, at = 0.0, now
    while waited < longest:
        step, rate = 3600 - at % 3600, speed(at)
        if budget <= step * rate:
            return waited + budget / rate
        waited, budget, at = waited + step, budget - step * rate, at + step
    return waited


def _count_hours(source: Source, seen: tuple[float, ...]) -> tuple[int, ...]:
    counts = list(source.hour_counts or [0] * 24)
    for published in set(seen) - set(source.publications):
        counts[int(published % 86400 // 3600)] += 1
    return tuple(counts)


def ewma_interarrival(publications: tuple[float, ...]) -> float | None:
    """EWMA (alpha 0.3) of the gaps between the latest publications, oldest first."""
    gaps = [b - a for a, b in zip(publications, publications[1:]) if b > a]
    if not gaps:
        return None
    ewma = gaps[0]
    for gap in gaps[1:]:
        ewma = EWMA_ALPHA * gap + (1 - EWMA_ALPHA) * ewma
    return ewma


def skip_windows(at: float, skip_hours: tuple[int, ...], skip_days: tuple[str, ...]) -> float:
    """Move a check out of the publisher's quiet hours and days (UTC, as RSS defines them)."""
    if not skip_hours and not skip_days:
        return at
    for _ in range(24 * 8):
        moment = time.gmtime(at)
        if moment.tm_hour not in skip_hours and DAYS[moment.tm_wday] not in skip_days:
            return at
        at = (int(at) // 3600 + 1) * 3600  # the start of the next hour
    return at


def _bounds(source: Source, settings: Settings) -> tuple[float, float]:
    low = source.min_interval or settings.min_interval
    high = source.max_interval or settings.max_interval
    return float(low), float(max(low, high))


def _merge(known: list[float], seen: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(sorted(set(known) | set(seen))[-HISTORY:])


def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def _jitter(seconds: float, rng: random.Random) -> float:
    return seconds * (1 + rng.uniform(-JITTER_RATIO, JITTER_RATIO))


"""The interval decision: source state + fetch outcome -> next check. Pure: no I/O, no clock.

Seed 003 §6.2 for the interval, seed 002 for failure backoff.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from starfeed.model import FetchOutcome, Source
from starfeed.settings import Settings

UP_FACTOR = 1.25
DOWN_FACTOR = 0.75
JITTER_RATIO = 0.15


@dataclass(frozen=True)
class Decision:
    interval: int  # the source's base interval from now on (seconds)
    next_check_at: float | None  # None: not re-armed
    reason: str
    consecutive_failures: int


def decide(source: Source, outcome: FetchOutcome, settings: Settings, now: float,
           rng: random.Random) -> Decision:
    interval = float(source.interval or settings.default_interval)
    failures = source.consecutive_failures + 1 if outcome.failed else 0

    if outcome.retry_after is not None:
        # The publisher said exactly when to come back: no jitter, no clamp.
        return Decision(int(interval), _rearm(source, now + outcome.retry_after), "retry-after",
                        failures)
    if outcome.failed:
        wait = min(interval * 2 ** failures, settings.backoff_cap)
        return Decision(int(interval), _rearm(source, now + _jitter(wait, rng)), "error-backoff",
                        failures)

    if outcome.not_modified:
        interval, reason = interval * UP_FACTOR, "not-modified"
    elif outcome.new_entries > 0:
        interval, reason = interval * DOWN_FACTOR, "new-entries"
    else:
        interval, reason = interval * UP_FACTOR, "no-new-entries"
    interval = min(max(interval, settings.min_interval), settings.max_interval)
    if outcome.ttl_minutes:
        # The publisher's ttl is a floor (seed 003 §4.6: clamp to [ttl, max]).
        interval = max(interval, min(outcome.ttl_minutes * 60, settings.max_interval))
    return Decision(int(interval), _rearm(source, now + _jitter(interval, rng)), reason, 0)


def _jitter(seconds: float, rng: random.Random) -> float:
    return seconds * (1 + rng.uniform(-JITTER_RATIO, JITTER_RATIO))


def _rearm(source: Source, at: float) -> float | None:
    # Seed 004: a source with polling off runs once and is not re-armed.
    return at if source.polling else None

"""The scheduler freshness SLO (docs/design.md#slos): 95% of sources polled within twice the wait chosen for
them. Pure; the scheduler measures each source it polls, `starfeed status` every source now."""

from __future__ import annotations

from starfeed.model import Source, Status

FRESH_WITHIN = 2  # times the chosen wait
TARGET = 0.95


def chosen_wait(source: Source) -> float | None:
    """The wait the scheduler chose after the source's last fetch (jitter, backoff, Retry-After
    and skip windows included); None when it is not scheduled (disabled, removed, parked, polling
    off, or never fetched)."""
    if not source.live or not source.polling or source.status in (Status.DEAD, Status.GONE, Status.NEW):
        return None
    if source.next_check_at is None or source.last_fetch_at is None:
        return None
    return max(source.next_check_at - source.last_fetch_at, 0.0)


def on_time(source: Source, now: float, period: float) -> bool | None:
    """Whether the source, polled (or still waiting) at `now`, is within FRESH_WITHIN times its
    chosen wait of its last fetch; None when it is not scheduled. A wait shorter than the
    scheduler's period (the timeline's minute, a short Retry-After) counts as one period: no run
    can come sooner."""
    wait = chosen_wait(source)
    if wait is None or source.last_fetch_at is None:  # chosen_wait is None without a fetch
        return None
    return now - source.last_fetch_at <= FRESH_WITHIN * max(wait, period)


def measured(sources: list[Source], now: float, period: float) -> tuple[int, int]:
    """(on time, scheduled) among these sources."""
    verdicts = [v for v in (on_time(s, now, period) for s in sources) if v is not None]
    return sum(verdicts), len(verdicts)

"""Seed 000's per-user polling interval for GitHub accounts: an EMA of the gaps between stars.

Pure. Minutes throughout, as the seed states them.
"""

from __future__ import annotations

from dataclasses import dataclass

from starfeed.schedule.decide import HISTORY

ALPHA = 0.3
TIERS = ("high", "medium", "low")


@dataclass(frozen=True)
class UserInterval:
    minutes: float
    tier: str  # high | medium | low
    ema: float | None  # None until the user has three stars


def tier_of(minutes: float) -> str:
    return "high" if minutes <= 60 else "medium" if minutes <= 1440 else "low"


def user_interval(star_times: list[float], previous_ema: float | None, new_gaps: int,
                  default: float, low: float, high: float) -> UserInterval:
    """star_times: epoch seconds of every recorded star; new_gaps: how many of the latest gaps
    arrived since the last computation.

    - fewer than three stars: the default interval (clamped), tier low;
    - on reaching three (no previous EMA): seed it with the average of all gaps, then apply the
      update with the newest gap;
    - afterwards: ema = clamp(0.3 * gap + 0.7 * ema) for each new gap."""
    low, high = max(low, 10.0), min(high, 10080.0)  # the seed's bounds: [>= 10, <= 10080]
    clamp = lambda value: min(max(value, low), high)  # noqa: E731
    if len(star_times) < 3:
        return UserInterval(clamp(default), "low", None)
    ordered = sorted(star_times)
    gaps = [(b - a) / 60 for a, b in zip(ordered, ordered[1:])]
    if previous_ema is None:
        ema = clamp(ALPHA * gaps[-1] + (1 - ALPHA) * (sum(gaps) / len(gaps)))
    else:
        ema = previous_ema
        for gap in gaps[len(gaps) - min(new_gaps, len(gaps)):]:
            ema = clamp(ALPHA * gap + (1 - ALPHA) * ema)
    return UserInterval(ema, tier_of(ema), ema)


def schedule_user(user, new_stars: int, settings) -> None:
    """Apply user_interval to a github-user Source: its interval (seconds), tier, EMA and reason.
    user.publications holds every star time known (the latest HISTORY are kept afterwards)."""
    previous = user.ewma_interarrival / 60 if user.ewma_interarrival else None
    decision = user_interval(user.publications, previous, new_stars, settings.github_default_minutes,
                             settings.github_min_minutes, settings.github_max_minutes)
    user.publications = user.publications[-HISTORY:]
    user.interval, user.tier = int(decision.minutes * 60), decision.tier
    user.ewma_interarrival = decision.ema * 60 if decision.ema is not None else None
    user.reason = (f"star EMA {decision.minutes:.0f} min, tier {decision.tier}" if decision.ema is not None
                   else f"default {decision.minutes:.0f} min until three stars")

"""Seed 000's per-user polling interval for GitHub accounts: an EMA of the gaps between stars;
and the received-events timeline's hints, which make an account due the moment it stars.

Pure. Minutes throughout, as the seed states them; a Decision in seconds, as for every source.

The timeline is a hint, as WebSub is for feeds: GitHub says its events lag 30 s to 6 h, and it
keeps only 300. So an account the timeline carries (its events show there) is still polled, but
daily (seed 000's max_interval_minutes) instead of at its EMA; one whose new stars a poll found
unannounced goes back to its EMA, and a timeline that overflowed or failed sends them all back.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from starfeed.model import Kind, Source
from starfeed.schedule.decide import HISTORY, Decision
from starfeed.settings import Settings

ALPHA = 0.3
REJECTED_PAUSE = 365 * 86400  # a refused token holds GitHub polling until `github connect`
TIERS = ("high", "medium", "low")
TIMELINE_PAGES = 3  # GitHub keeps the latest 300 events: three pages of 100
TIMELINE_EVENTS = 300  # TIMELINE_PAGES of fetch.github's PER_PAGE
TIMELINE_POLL = 60  # seconds between reads when GitHub sends no X-Poll-Interval (its usual value)
TIMELINE_LONGEST = 3600  # an X-Poll-Interval beyond an hour is not waited for: the hints would be late


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
        ema = clamp(previous_ema)  # the bounds may have been narrowed since it was stored
        for gap in gaps[len(gaps) - min(new_gaps, len(gaps)):]:
            ema = clamp(ALPHA * gap + (1 - ALPHA) * ema)
    return UserInterval(ema, tier_of(ema), ema)


@dataclass(frozen=True)
class TimelineStep:
    """What one read of the timeline found."""
    starred: tuple[int, ...]  # for each star not seen in an earlier read, its account's id
    active: tuple[int, ...]  # the accounts behind any event newer than the last read: the timeline carries them
    newest_id: int | None  # the newest event read
    watch_ids: tuple[int, ...]  # the star events read, so a later read knows them
    overflowed: bool  # more events arrived since the last read than GitHub keeps: some were missed


_STATE_NUMBERS = ("read_at", "newest_id", "poll_interval", "hinted", "last_hinted_at", "overflowed_at")


def readable_state(state: object) -> dict:
    """The timeline's stored state (Source.timeline) without what cannot be read, an item edited
    by hand: a value that is not a number is left out, and its read starts afresh from there."""
    if not isinstance(state, dict):
        return {}
    kept = {k: state[k] for k in _STATE_NUMBERS
            if isinstance(state.get(k), (int, float)) and not isinstance(state.get(k), bool)}
    ids = state.get("watch_ids")
    if isinstance(ids, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        kept["watch_ids"] = ids
    return kept


def _last_read(previous) -> tuple[int | None, set[int]]:
    """The last read's newest event id and the star events it knew; (None, ...) before a first read."""
    state = readable_state(previous)
    newest = state.get("newest_id")
    return (int(newest) if newest is not None else None), set(state.get("watch_ids", ()))


def timeline_step(events: list, previous: dict | None, reached_end: bool) -> TimelineStep:
    """events: parse.github.Event, newest first, as read now; previous: the source's timeline state
    after the last read (None: this is the first, and it only sets the baseline: stars before it
    are the accounts' first syncs' business); reached_end: the timeline had no page beyond these.

    A star is new when the last read did not show it: newer than that read, or older but shown
    late (GitHub's lag). A read that reaches no event of the
    last read, and not the end either, has a gap: more than 300 events came in between."""
    events = list({e.event_id: e for e in events}.values())  # an event listed twice is one event
    newest = max((e.event_id for e in events), default=None)
    watch = tuple(e.event_id for e in events if e.is_star)
    last_newest, seen = _last_read(previous)
    if last_newest is None:
        return TimelineStep((), (), newest, watch, False)
    # Events only move down the timeline, and a read goes on past page 1 only when all of page 1
    # is new: so every event read now that existed at the last read was read then too.
    new = [e for e in events if e.is_star and e.event_id not in seen and e.actor_id is not None]
    overflowed = bool(events) and min(e.event_id for e in events) > last_newest and not reached_end
    active = dict.fromkeys(e.actor_id for e in events if e.event_id > last_newest and e.actor_id is not None)
    # The star events known from earlier reads stay known (a read may show none of them), as many
    # as GitHub keeps.
    known = tuple(sorted(set(watch) | seen, reverse=True)[:TIMELINE_EVENTS])
    return TimelineStep(tuple(e.actor_id for e in new), tuple(active), max(newest or last_newest, last_newest),
                        known, overflowed)


def reads_on(page_events: list, previous: dict | None) -> bool:
    """Whether the read should go on to the next page: on a first read, no (a baseline); else
    while every event of this page is newer than the last read's newest."""
    last_newest = _last_read(previous)[0]
    if last_newest is None or not page_events:
        return False
    return min(e.event_id for e in page_events) > last_newest


def decide_github(source: Source, verdict: str, until: float | None, star_times: list[float],
                  new_stars: int, now: float, settings: Settings, rng: random.Random) -> Decision:
    """The next check of a GitHub source (kind github-following or github-user) after a fetch whose
    verdict is ok, not-modified, rate-limited (until: when the pause ends), rejected or failed.
    star_times: every star time known now (the fetch's new ones included)."""
    failures = source.consecutive_failures
    interval, hours = source.interval, tuple(source.hour_counts)
    keep = dict(ewma=source.ewma_interarrival, publications=tuple(source.publications), hour_counts=hours)
    if verdict in ("ok", "not-modified"):
        if source.kind == Kind.GITHUB_FOLLOWING:
            decision = Decision(settings.github_following_interval, now + settings.github_following_interval,
                                "follow list: daily", 0, **keep)
        elif source.kind == Kind.GITHUB_TIMELINE:
            asked = readable_state(source.timeline).get("poll_interval")
            asked = asked if asked and asked > 0 else None
            wait = int(min(max(asked or TIMELINE_POLL, TIMELINE_POLL), TIMELINE_LONGEST))
            # From the scheduler run that leased it, not from now: a wait as long as the run's
            # rate would otherwise miss the next run by the seconds this fetch took.
            leased = source.locked_until - settings.lease_seconds if source.locked_until else now
            decision = Decision(wait, max(min(leased, now) + wait, now),
                                f"timeline: every {wait}s" + (f" (GitHub's X-Poll-Interval: {asked:g}s)" if asked else ""),
                                0, **keep)
        else:
            previous = source.ewma_interarrival / 60 if source.ewma_interarrival else None
            fitted = user_interval(star_times, previous, new_stars, settings.github_default_minutes,
                                   settings.github_min_minutes, settings.github_max_minutes)
            reason = (f"star EMA {fitted.minutes:.0f} min, tier {fitted.tier}" if fitted.ema is not None
                      else f"default {fitted.minutes:.0f} min until three stars")
            minutes = fitted.minutes
            if source.timeline_covered:
                # Its stars come by the timeline's hints; this poll is the safety net, at the seed's longest.
                minutes = max(minutes, min(settings.github_max_minutes, 10080))
                reason += f"; the timeline announces its stars: checked every {minutes:.0f} min"
            decision = Decision(int(minutes * 60), now + int(minutes * 60), reason, 0,
                                fitted.ema * 60 if fitted.ema is not None else None,
                                tuple(sorted(star_times)[-HISTORY:]), hour_counts=hours, tier=fitted.tier)
    elif verdict == "rate-limited":
        # Not the source's fault: no failure counted; it is retried when the pause ends.
        decision = Decision(interval, (until or now) + rng.uniform(0, settings.startup_jitter),
                            "github-rate-limited", failures, **keep)
    elif verdict == "rejected":
        decision = Decision(interval, now + REJECTED_PAUSE, "github-token-rejected", failures + 1, **keep)
    elif failures + 1 >= settings.circuit_breaker or source.policy == "one-strike":
        # The same policies as any source: parked as dead until `starfeed source sync`.
        reason = "one-strike" if source.policy == "one-strike" else f"circuit-open after {failures + 1} failures"
        decision = Decision(interval, None, reason, failures + 1, dead=True, **keep)
    else:
        # Seed 000: transient failures were retried inside the fetch; now the next window.
        interval = interval or settings.github_default_minutes * 60
        decision = Decision(interval, now + interval, "github-failed: next window", failures + 1, **keep)
    # Seed 004: a source with polling off runs once and is not re-armed.
    return decision if source.polling else replace(decision, next_check_at=None)

"""The next check of each GitHub kind (docs/design.md#github): a followed account's
polling interval, an EMA of the gaps between its stars; the follow list's daily re-sync; and the
received-events timeline's reads, whose hints make an account due the moment it stars.

Pure. Minutes throughout, as the rule states them; a Decision in seconds, as for every source.

The timeline is a hint, as WebSub is for feeds: GitHub says its events lag 30 s to 6 h, and it
keeps only 300. So an account the timeline carries (its events show there) is still polled, but
daily (the accounts' longest interval) instead of at its EMA; one whose new stars a poll found
unannounced goes back to its EMA, and a timeline that overflowed or failed sends them all back.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from starfeed.model import Source, TimelineState
from starfeed.parse.github import Answer, Event
from starfeed.schedule.decide import HISTORY, Decision
from starfeed.schedule.policy import parked, rearmed
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
    low, high = max(low, 10.0), min(high, 10080.0)  # the rule's bounds: [>= 10, <= 10080]

    def clamp(value: float) -> float:
        return min(max(value, low), high)

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


def _last_read(previous: TimelineState | None) -> tuple[int | None, set[int]]:
    """The last read's newest event id and the star events it knew; (None, ...) before a first read."""
    if previous is None:
        return None, set()
    return previous.newest_id, set(previous.watch_ids)


def timeline_step(events: Sequence[Event], previous: TimelineState | None, reached_end: bool) -> TimelineStep:
    """events: newest first, as read now; previous: the source's timeline state after the last
    read (None, or no newest event: this is the first, and it only sets the baseline: stars before
    it are the accounts' first syncs' business); reached_end: the timeline had no page beyond these.

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
    starred = tuple(e.actor_id for e in events if e.is_star and e.event_id not in seen and e.actor_id is not None)
    overflowed = bool(events) and min(e.event_id for e in events) > last_newest and not reached_end
    active = dict.fromkeys(e.actor_id for e in events if e.event_id > last_newest and e.actor_id is not None)
    # The star events known from earlier reads stay known (a read may show none of them), as many
    # as GitHub keeps.
    known = tuple(sorted(set(watch) | seen, reverse=True)[:TIMELINE_EVENTS])
    return TimelineStep(starred, tuple(active), max(newest or last_newest, last_newest),
                        known, overflowed)


def reads_on(page_events: Sequence[Event], previous: TimelineState | None) -> bool:
    """Whether the read should go on to the next page: on a first read, no (a baseline); else
    while every event of this page is newer than the last read's newest."""
    last_newest = _last_read(previous)[0]
    if last_newest is None or not page_events:
        return False
    return min(e.event_id for e in page_events) > last_newest


def after_read(source: Source, answer: Answer, until: float | None, now: float, settings: Settings,
               rng: random.Random, succeeded: Callable[[], Decision]) -> Decision:
    """The next check of any GitHub source after a read whose answer is ok or not-modified
    (succeeded(): its kind's own rhythm), rate-limited (until: when the pause ends), rejected or
    failed. Failures follow the policies every source follows (schedule/policy.py)."""
    failures = source.consecutive_failures
    interval = source.interval
    if answer.succeeded:
        decision = succeeded()
    elif answer == Answer.RATE_LIMITED:
        # Not the source's fault: no failure counted; it is retried when the pause ends.
        decision = _kept(source, interval, (until or now) + rng.uniform(0, settings.startup_jitter),
                         "github-rate-limited", failures)
    elif answer == Answer.REJECTED:
        decision = _kept(source, interval, now + REJECTED_PAUSE, "github-token-rejected", failures + 1)
    elif why := parked(failures + 1, source.policy, settings):
        decision = replace(_kept(source, interval, None, why, failures + 1), dead=True)
    else:
        # Transient failures were retried inside the fetch; now the next window.
        interval = interval or settings.github_default_minutes * 60
        decision = _kept(source, interval, now + interval, "github-failed: next window", failures + 1)
    return replace(decision, next_check_at=rearmed(source.polling, decision.next_check_at))


def _kept(source: Source, interval: int, at: float | None, reason: str, failures: int) -> Decision:
    """A decision that keeps what the source learned of its rhythm."""
    return Decision(interval, at, reason, failures, source.ewma_interarrival, tuple(source.publications),
                    hour_counts=tuple(source.hour_counts))


def following_checked(source: Source, now: float, settings: Settings) -> Decision:
    """The follow list is re-synced daily."""
    return _kept(source, settings.github_following_interval, now + settings.github_following_interval,
                 "follow list: daily", 0)


def timeline_checked(source: Source, now: float, settings: Settings) -> Decision:
    """The timeline is read as often as GitHub's X-Poll-Interval asks, between TIMELINE_POLL and
    TIMELINE_LONGEST."""
    asked = source.timeline.poll_interval if source.timeline else None
    asked = asked if asked and asked > 0 else None
    wait = int(min(max(asked or TIMELINE_POLL, TIMELINE_POLL), TIMELINE_LONGEST))
    # From the scheduler run that leased it, not from now: a wait as long as the run's rate would
    # otherwise miss the next run by the seconds this fetch took.
    leased = source.locked_until - settings.lease_seconds if source.locked_until else now
    return _kept(source, wait, max(min(leased, now) + wait, now),
                 f"timeline: every {wait}s" + (f" (GitHub's X-Poll-Interval: {asked:g}s)" if asked else ""), 0)


def account_checked(source: Source, star_times: list[float], new_stars: int, now: float,
                    settings: Settings) -> Decision:
    """A followed account's next check from its stars' EMA (star_times: every star time known
    now, the fetch's new ones included); daily while the timeline announces its stars."""
    previous = source.ewma_interarrival / 60 if source.ewma_interarrival else None
    fitted = user_interval(star_times, previous, new_stars, settings.github_default_minutes,
                           settings.github_min_minutes, settings.github_max_minutes)
    reason = (f"star EMA {fitted.minutes:.0f} min, tier {fitted.tier}" if fitted.ema is not None
              else f"default {fitted.minutes:.0f} min until three stars")
    minutes = fitted.minutes
    if source.github is not None and source.github.timeline_covered:
        # Its stars come by the timeline's hints; this poll is the safety net, at the longest interval.
        minutes = max(minutes, min(settings.github_max_minutes, 10080))
        reason += f"; the timeline announces its stars: checked every {minutes:.0f} min"
    return Decision(int(minutes * 60), now + int(minutes * 60), reason, 0,
                    fitted.ema * 60 if fitted.ema is not None else None,
                    tuple(sorted(star_times)[-HISTORY:]), hour_counts=tuple(source.hour_counts), tier=fitted.tier)

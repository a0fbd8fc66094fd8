"""The GitHub follow list as a person manages it (seed 000): resume polling after a token is
stored or a sync is asked for, and the state `starfeed github status` shows."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

from starfeed.model import GITHUB_HELPERS, GITHUB_KINDS, Kind, Source
from starfeed.sources import GITHUB_COLLECTION, GITHUB_PAGES, github_following_source, github_timeline_source
from starfeed.store import Storage
from starfeed.store.hosts import pause_in

log = logging.getLogger(__name__)

HELD = "github-token-rejected"  # the reason a refused token leaves on every GitHub source


@dataclass
class Resumed:
    lifted_stop: bool  # polling had stopped (a refused token) and resumes
    added: Source | None  # the follow list, subscribed for the first time


def resume(storage: Storage, now: float) -> Resumed:
    """Lift a stop, and make the follow list due now (creating its source the first time), with
    every account the stop held."""
    host = storage.settings.github_host
    pause = storage.hosts.pause_of(host, now)
    held = {HELD}
    lifted = bool(pause and pause["stopped"])
    if lifted:
        storage.hosts.clear_pause(host)
        held.add("host-paused")
        if storage.settings.render_queue_url:
            storage.queues.send_render(GITHUB_PAGES)  # the pages stop saying it stopped
    following = github_following_source(storage.settings, now)
    added = following if storage.sources.add(following) else None
    timeline = github_timeline_source(storage.settings, now)
    storage.sources.add(timeline)
    users = storage.sources.get_many(set(storage.collections.members(GITHUB_COLLECTION))).values()
    helpers = [storage.sources.get(following.source_id), storage.sources.get(timeline.source_id)]
    if helpers[1] is not None and helpers[1].login:
        storage.sources.change(timeline.source_id, {"login": None})  # the token may be another user's
    for source in [*helpers, *users]:
        if source and (source.kind in GITHUB_HELPERS or source.reason in held):
            storage.sources.change(source.source_id, {"next_check_at": now, "locked_until": None,
                                                      "last_error": None}, require_enabled=True)
    return Resumed(lifted, added)


def uncover_all(storage: Storage, now: float, why: str) -> None:
    """Some stars may have been missed: every account the timeline covered goes back to its EMA."""
    users = storage.sources.get_many(set(storage.collections.members(GITHUB_COLLECTION)))
    covered = [u for u in users.values() if u.timeline_covered]
    for user in covered:
        back = now + (user.ewma_interarrival or storage.settings.github_default_minutes * 60)
        changes = {"timeline_covered": False}
        if user.next_check_at is not None:  # one not re-armed (polling off, parked) stays so
            changes["next_check_at"] = min(user.next_check_at, back)
        storage.sources.change(user.source_id, changes)
    if covered:
        log.warning("fetcher: GitHub timeline: %s; %d account(s) back to their star EMA", why, len(covered))


def timeline_stopped(storage: Storage, source: Source | None, now: float) -> None:
    """A timeline disabled or removed hints nothing more: the accounts it covered go back to their EMA."""
    if source is not None and source.kind == Kind.GITHUB_TIMELINE:
        uncover_all(storage, now, "the timeline was disabled or removed")


@dataclass
class GitHubState:
    rate_limit: dict | None  # {limit, remaining, reset, at}, as GitHub last said
    pause: dict | None  # {until, reason, stopped} while paused
    following: Source | None
    timeline: Source | None
    users: list[Source]
    tiers: Counter  # followed accounts by tier
    unfollowed: int
    stars: int
    last_failure: Source | None


def state(storage: Storage, now: float) -> GitHubState:
    host = storage.settings.github_host
    accounts = [s for s in storage.sources.all() if s.kind in GITHUB_KINDS]
    users = [s for s in accounts if s.kind == Kind.GITHUB_USER]
    failed = sorted((s for s in accounts if s.last_error), key=lambda s: s.last_fetch_at or 0)
    known = storage.hosts.state(host)  # one read for the rate limit and the pause
    return GitHubState(known.get("rate_limit"), pause_in(known, now),
                       next((s for s in accounts if s.kind == Kind.GITHUB_FOLLOWING), None),
                       next((s for s in accounts if s.kind == Kind.GITHUB_TIMELINE and s.live), None), users,
                       Counter(s.tier or "low" for s in users if s.enabled),
                       sum(1 for s in users if not s.enabled), sum(s.entry_count for s in users),
                       failed[-1] if failed else None)

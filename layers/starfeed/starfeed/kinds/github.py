"""GitHub as a person manages it (docs/design.md#github-accounts), across its three kinds of
source: resume polling after a token is stored or a sync is asked for, and the state
`starfeed github status` shows."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, replace

from starfeed.kinds import github_following, github_timeline, github_user
from starfeed.kinds.github_following import new_following
from starfeed.kinds.github_timeline import new_timeline
from starfeed.kinds.github_user import uncover_all
from starfeed.kinds.registry import kind_of
from starfeed.model import Source
from starfeed.sources import GITHUB_COLLECTION, GITHUB_PAGES
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
    following = new_following(storage.settings, now)
    added = following if storage.sources.add(following) else None
    timeline = new_timeline(storage.settings, now)
    storage.sources.add(timeline)
    users = storage.sources.get_many(set(storage.collections.members(GITHUB_COLLECTION))).values()
    helpers = [storage.sources.get(following.source_id), storage.sources.get(timeline.source_id)]
    if helpers[1] is not None and helpers[1].timeline and helpers[1].timeline.login:
        # The token may be another user's.
        storage.sources.change(timeline.source_id, {"timeline": replace(helpers[1].timeline, login=None)})
    for source in [*helpers, *users]:
        if source and (not kind_of(source).publishes or source.reason in held):
            storage.sources.change(source.source_id, {"next_check_at": now, "locked_until": None,
                                                      "last_error": None}, require_enabled=True)
    return Resumed(lifted, added)


def timeline_stopped(storage: Storage, source: Source | None, now: float) -> None:
    """A timeline disabled or removed hints nothing more: the accounts it covered go back to their EMA."""
    if source is not None and kind_of(source) is github_timeline.KIND:
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
    by_kind: dict[object, list[Source]] = {}
    for source in storage.sources.all():
        by_kind.setdefault(kind_of(source), []).append(source)
    users = by_kind.get(github_user.KIND, [])
    accounts = [*users, *by_kind.get(github_following.KIND, []), *by_kind.get(github_timeline.KIND, [])]
    failed = sorted((s for s in accounts if s.last_error), key=lambda s: s.last_fetch_at or 0)
    known = storage.hosts.state(host)  # one read for the rate limit and the pause
    return GitHubState(known.get("rate_limit"), pause_in(known, now),
                       next(iter(by_kind.get(github_following.KIND, [])), None),
                       next((s for s in by_kind.get(github_timeline.KIND, []) if s.live), None), users,
                       Counter(github_user.KIND.tier(s) for s in users if s.enabled),
                       sum(1 for s in users if not s.enabled), sum(s.entry_count for s in users),
                       failed[-1] if failed else None)


def live_timelines(sources: list[Source]) -> list[Source]:
    """The GitHub timelines among these sources that are read (one per deployment)."""
    return [s for s in sources if kind_of(s) is github_timeline.KIND and s.live]


def announced(sources: list[Source]) -> int:
    """How many of these followed accounts the timeline announces (their polls stretch to daily)."""
    return sum(1 for s in sources
               if kind_of(s) is github_user.KIND and s.live and github_user.account(s).timeline_covered)

"""One scheduler run: find due sources on the index, lease each, enqueue one fetch per source."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from starfeed import observe
from starfeed.kinds.registry import named
from starfeed.model import Pace
from starfeed.schedule import freshness
from starfeed.schedule.decide import asked_host
from starfeed.schedule.dispatch import lease, message_group
from starfeed.schedule.pace import EVERY as PACE_EVERY
from starfeed.schedule.pace import next_pace
from starfeed.store import Storage
from starfeed.store.queues import FetchMessage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TickReport:
    due: int
    leased: int
    enqueued: int
    pace_horizon: float | None = None  # set when this run recomputed the pace


def run_tick(storage: Storage, now: float) -> TickReport:
    with observe.span("schedule"):
        return _run_tick(storage, now)


def _run_tick(storage: Storage, now: float) -> TickReport:
    due = storage.sources.due_ids(now)
    leased = [source for source in (lease(storage, i, now) for i in due) if source]
    # One read of the host pauses a run: a paused host's sources wait for its pause to end. The
    # GitHub host's is read every run: while a refused token stops it, GitHubStopped says so
    # (its alarm stays on until `starfeed github connect`), busy run or idle.
    # A WebSub lease's renewal alone asks the hub, not the feed: the hub's host is the one to wait for.
    github = storage.settings.github_host
    asked = {source.source_id: asked_host(source, now, storage.settings) for source in leased}
    pauses = storage.hosts.paused(set(asked.values()) | ({github} if github else set()), now)
    if github in pauses and pauses[github].stopped:
        observe.metric(observe.GITHUB_STOPPED, 1)
    messages = []
    for source in leased:
        if (host := asked[source.source_id]) in pauses:
            storage.sources.change(source.source_id, {
                "next_check_at": pauses[host].until, "locked_until": None, "reason": "host-paused"})
            continue
        messages.append(FetchMessage(source.source_id, source.next_check_at or now,
                                     message_group(source, storage.settings), source.locked_until))
    enqueued = storage.queues.send_fetches(messages)
    polled = {m.source_id for m in messages}
    on_time, measured = freshness.measured([s for s in leased if s.source_id in polled], now,
                                           storage.settings.schedule_period)
    try:
        storage.pace.note_run(now, len(due), len(leased))  # for `starfeed status`, and the pace's step
    except Exception:  # the run's work is done; the pace step must still come
        log.exception("scheduler: this run's time was not recorded")
    observe.metric(observe.DUE, len(due))
    observe.metric(observe.LEASED, len(leased))
    # One value a polled source (100: on time, 0: late): the metric's average is the share of polls.
    for value in [100] * on_time + [0] * (measured - on_time):
        observe.metric(observe.FRESHNESS, value)
    if due:
        log.info("scheduler: %d due, %d leased, %d enqueued%s", len(due), len(leased), enqueued,
                 f", {len(leased) - len(messages)} waiting for a paused host" if len(messages) < len(leased) else "",
                 extra={"due": len(due), "leased": len(leased), "enqueued": enqueued,
                        "on_time": on_time, "measured": measured})
    pace = update_pace(storage, now)
    return TickReport(due=len(due), leased=len(leased), enqueued=enqueued,
                      pace_horizon=round(pace.horizon) if pace else None)


def update_pace(storage: Storage, now: float) -> Pace | None:
    """Once an hour, step the pace from every scheduled source's posts (schedule/pace.py)."""
    stored = storage.pace.load()
    if stored and now - stored[1] < PACE_EVERY:
        return None
    if stored and storage.pace.idle_since(stored[1]):
        # Nothing fetched since the last step: no post to learn from, and no decision to use it.
        # An idle deployment reads no source (the step Scans them all).
        return None
    settings = storage.settings
    pace = next_pace(stored[0] if stored else settings.initial_pace(),
                     [times for kind, times in storage.sources.scheduled_publications() if named(kind).paced],
                     settings, now)
    if not storage.pace.save(pace, now, stored[1] if stored else None):
        return None  # another run stepped it first
    log.info("scheduler: pace: active sources wait at most %.1f h beyond their quiet hours; active from"
             " %.2f posts a day (the entry-frequency rule's p95 delay here: %.1f h)",
             pace.horizon / 3600, pace.active_per_day, pace.reference / 3600)
    return pace

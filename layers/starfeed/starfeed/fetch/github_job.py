"""Fetch one leased GitHub source (seed 000): the follow list (kind github-following) or one
followed account's stars (kind github-user). Raw pages are stored before they are read; stars and
last_starred_at are written together; the outcome and the next check are written back.

A rate limit pauses the GitHub host for everyone (the scheduler and every fetcher read the pause
from the hosts table); a refused token stops all GitHub polling until `starfeed github connect`."""

from __future__ import annotations

import logging
import random
import time
from collections import Counter

from starfeed import observe
from starfeed.fetch.github import GitHub, Read, TimelineRead, Verdict, read_following, read_stars, read_timeline, whoami
from starfeed.fetch.record import apply_decision, fetch_fields, publish_new, remember_fetch, store_raw, tap_new
from starfeed.fetch.stage import StageFailed, stage
from starfeed.following import uncover_all
from starfeed.model import FetchOutcome, Kind, Source, Status, source_id_for
from starfeed.parse.github import star_entry
from starfeed.parse.normalize import rfc3339
from starfeed.render import SOURCES_SUMMARY, targets_for
from starfeed.schedule.github import REJECTED_PAUSE, decide_github, readable_state, timeline_step
from starfeed.schedule.tick import send_now
from starfeed.sources import GITHUB_COLLECTION, GITHUB_PAGES, github_timeline_source, github_user_key, github_user_source
from starfeed.store import Storage

log = logging.getLogger(__name__)


def fetch_github(storage: Storage, source: Source, before: Source, lease: float | None, now: float,
                 rng: random.Random) -> FetchOutcome:
    github = GitHub(storage.settings, storage.secrets.github_token)
    first = source.status == Status.NEW
    started = time.monotonic()
    with observe.span("http request", source_id=source.source_id, host=source.host):
        if source.kind == Kind.GITHUB_FOLLOWING:
            read = read_following(github)
        elif source.kind == Kind.GITHUB_TIMELINE:
            read = _read_timeline(github, source)
        else:
            read = read_stars(github, source.login or "", source.etag, source.last_modified,
                              lambda uids: storage.entries.known(source.source_id, uids),
                              first_sync=first, now=now, last_starred_at=source.last_starred_at)
    latency_ms = round((time.monotonic() - started) * 1000)
    if source.kind == Kind.GITHUB_TIMELINE and read.verdict.kind == "rejected":
        # A token may read follows and stars but not events: the timeline fails alone, the stars go on.
        read.verdict = Verdict("failed", f"{read.verdict.reason} (for the timeline only: stars are polled as before)")
    # Every answer is kept before it is read (no answer, no payload: a network failure).
    new, answers, previously_failed = 0, [], source.status == Status.ERROR
    try:
        with stage("store raw"):
            answers = [(store_raw(storage, source, page, now), page) for page in read.pages if page.status is not None]
        if read.verdict.kind in ("ok", "not-modified"):
            with stage("store"):
                if source.kind == Kind.GITHUB_FOLLOWING:
                    _apply_following(storage, source, read, now)
                elif source.kind == Kind.GITHUB_TIMELINE:
                    _apply_timeline(storage, source, read, now)
                elif read.stars:
                    new = _store_stars(storage, source, read, lease, now)
                    # Were these stars announced? Without a hint since the last fetch, the timeline missed them.
                    source.timeline_covered = (source.hinted_at or 0) > (before.last_fetch_at or 0)
        # Before the outcome is written: a lost request is then retried with the message. A first
        # fetch publishes the user's feed; after a failure, stars it stored may be unrendered.
        if source.kind == Kind.GITHUB_USER and (new or first or previously_failed):
            with stage("render request"):
                storage.queues.send_render(targets_for(source))
    except StageFailed as failed:
        # Nothing was kept, so neither is the ETag: the next fetch reads these stars again.
        read.verdict = Verdict("failed", str(failed))
    if source.kind == Kind.GITHUB_TIMELINE and read.verdict.kind == "failed" and not previously_failed:
        with stage("store"):
            uncover_all(storage, now, "the timeline failed")
    with observe.span("schedule decision"):
        _record(storage, source, read, new, answers, now, rng)
    _pause_if_limited(storage, source, read.verdict, github.pause_until, now)
    if github.rate:
        storage.hosts.note_rate_limit(source.host, github.rate)  # for `starfeed github status`
        observe.metric(observe.GITHUB_RATE_REMAINING, github.rate["remaining"])
    with observe.span("store outcome"):
        written = storage.sources.finish_fetch(source, before, lease)
    if not written:
        log.warning("fetcher: lease on %s was lost; its outcome was not written", source.url)
    last = read.pages[-1] if read.pages else None
    outcome = FetchOutcome(last.status if last else None, new_entries=new,
                           not_modified=read.verdict.kind == "not-modified",
                           error=read.verdict.reason if read.verdict.kind not in ("ok", "not-modified") else None,
                           retry_after=read.verdict.until - now if read.verdict.until else None)
    # Seed 003 §4.9's fields, as a feed's fetch logs them, plus the requests made and the rate
    # limit left. Never the token: GitHub's URLs carry none.
    fields = fetch_fields(source, before, outcome.http_status, outcome, new, 0)
    fields.update(bytes_in=sum(len(page.body or b"") for page in read.pages), latency_ms=latency_ms,
                  requests=github.requests, rate_remaining=github.rate["remaining"] if github.rate else None)
    observe.fetched(fields)
    log.info("fetcher: %s -> %s in %d request(s), %d new, next %s (%s)%s", source.url,
             last.status if last else "no request", github.requests, new,
             f"in {int(source.next_check_at - now)}s" if source.next_check_at else "never",
             source.reason, f": {read.verdict.reason}" if read.verdict.reason else "", extra=fields)
    return outcome


def _apply_following(storage: Storage, following: Source, read: Read, now: float) -> None:
    """Upsert one github-user source per followed account; disable those no longer followed
    (their entries stay); a renamed account keeps its source and its stars."""
    settings = storage.settings
    known = storage.sources.get_many(set(storage.collections.members(GITHUB_COLLECTION)))
    followed = {}
    for account in read.accounts:
        user = github_user_source(settings, account, now)
        followed[user.source_id] = user
        current = known.get(user.source_id)
        if current is None:
            if storage.sources.add(user):
                storage.collections.join(GITHUB_COLLECTION, user.source_id)
        elif not current.enabled or current.login != user.login:
            storage.sources.change(user.source_id, {"enabled": True, "login": user.login, "title": user.login,
                                                    "url": user.url})
    gone = [s for s in known.values() if s.kind == Kind.GITHUB_USER and s.enabled and s.source_id not in followed]
    for user in gone:
        storage.sources.change(user.source_id, {"enabled": False, "reason": "no longer followed"})
    added = set(followed) - set(known)
    if gone or added:  # an unfollowed account's feed is unpublished; the listings change
        storage.queues.send_render(sorted({t for user in gone for t in targets_for(user)}) + [SOURCES_SUMMARY])
    if storage.sources.add(github_timeline_source(settings, now)):  # a deployment from before the timeline
        log.info("fetcher: GitHub timeline subscribed: followed accounts' stars are fetched as they are announced")
    following.title = f"GitHub follow list ({len(followed)} accounts)"
    log.info("fetcher: GitHub follow list: %d accounts, %d new, %d no longer followed", len(followed),
             len(added), len(gone))


def _read_timeline(github: GitHub, timeline: Source) -> TimelineRead:
    """Ask GitHub who the token's user is, the first time, then read that user's timeline."""
    pages = []
    if not timeline.login:
        page, login = whoami(github)
        pages.append(page.result)
        if login is None:
            verdict = page.verdict if page.verdict.kind != "ok" else Verdict("failed", "GitHub did not name the token's user")
            return TimelineRead(verdict, pages)
        timeline.login, timeline.title = login, f"GitHub timeline of {login}"
        timeline.url = f"{github.settings.github_api_url.rstrip('/')}/users/{login}/received_events"
    read = read_timeline(github, timeline.login, timeline.etag, timeline.timeline)
    read.pages[:0] = pages
    return read


def _apply_timeline(storage: Storage, timeline: Source, read: TimelineRead, now: float) -> None:
    """Make every followed account the timeline saw star due now, and fetch it at once."""
    state = readable_state(timeline.timeline)
    asked = read.poll_interval
    state.update(read_at=now, poll_interval=asked if asked and asked > 0 else None)
    if read.verdict.kind == "ok":
        step = timeline_step(read.events, timeline.timeline, read.reached_end)
        state.update(newest_id=step.newest_id, watch_ids=list(step.watch_ids))
        api = storage.settings.github_api_url
        stars = Counter(source_id_for(github_user_key(api, actor)) for actor in step.starred)
        active = {source_id_for(github_user_key(api, actor)) for actor in step.active}
        accounts = [a for a in storage.sources.get_many(set(stars) | active).values()
                    if a.kind == Kind.GITHUB_USER and a.live and a.polling]
        hinted = [a.source_id for a in accounts if a.source_id in stars
                  and storage.sources.change(a.source_id, {"next_check_at": now, "hinted_at": now},
                                             require_enabled=True)]
        for account in accounts:  # its events reach the timeline: its stars will too
            if not account.timeline_covered and account.source_id not in stars:
                storage.sources.change(account.source_id, {"timeline_covered": True})
        if hinted:
            send_now(storage, hinted, now)
            count = sum(stars[i] for i in hinted)
            state.update(hinted=state.get("hinted", 0) + count, last_hinted_at=now)
            log.info("fetcher: GitHub timeline: %d star(s) by %d followed account(s); fetching them now",
                     count, len(hinted))
        if step.overflowed:
            state["overflowed_at"] = now
            uncover_all(storage, now, "more events than the timeline keeps came in since its last read")
    timeline.timeline = state
    timeline.etag = read.etag or timeline.etag  # last: a read that failed to apply is read again


def _store_stars(storage: Storage, user: Source, read: Read, lease: float | None, now: float) -> int:
    entries = [star_entry(user.login or "", star, user.source_id, now) for star in read.stars]
    storage.entries.store_stars(user, entries, lease)
    publish_new(storage, user, entries)
    tap_new(storage, user, entries, now)
    # Every star time known now: on a first sync, seed 000 seeds the EMA with all of their gaps.
    user.publications = sorted(set(user.publications) | {s.starred_epoch for s in read.stars})
    user.entry_count += len(entries)
    return len(entries)


def _record(storage: Storage, source: Source, read: Read, new: int, answers: list[tuple[dict, object]],
            now: float, rng: random.Random) -> None:
    settings, verdict = storage.settings, read.verdict
    last = read.pages[-1] if read.pages else None
    source.last_fetch_at, source.http_status = now, last.status if last else None
    for raw_ref, page in answers:  # one history line per page, the last page newest
        remember_fetch(source, raw_ref, page.status, verdict.reason or verdict.kind, now, settings, page.elapsed)
    decision = decide_github(source, verdict.kind, verdict.until, source.publications, new, now, settings, rng)
    apply_decision(source, decision, now, settings)
    if verdict.kind in ("ok", "not-modified"):
        source.status = Status.NOT_MODIFIED if verdict.kind == "not-modified" else Status.OK
        source.last_error, source.last_success_at = None, now
        if source.kind == Kind.GITHUB_USER:  # the timeline keeps its own (_apply_timeline)
            source.etag = read.etag or source.etag
            source.last_modified = read.last_modified or source.last_modified
    else:
        source.status, source.last_error = Status.DEAD if decision.dead else Status.ERROR, verdict.reason


def _pause_if_limited(storage: Storage, source: Source, verdict: Verdict, exhausted: float | None,
                      now: float) -> None:
    """One pause in the hosts table holds every GitHub call, the scheduler's and every fetcher's."""
    host = source.host
    if verdict.kind == "rejected":
        storage.hosts.pause(host, now + REJECTED_PAUSE, verdict.reason or "GitHub token rejected",
                                   stopped=True)
        observe.metric(observe.GITHUB_STOPPED, 1)  # the GitHubStopped alarm
        log.error("fetcher: %s; all GitHub polling stops until then", verdict.reason)
        storage.queues.send_render(GITHUB_PAGES)  # the index pages show why
    elif verdict.kind == "rate-limited" or exhausted is not None:
        until = verdict.until if verdict.kind == "rate-limited" else exhausted
        reason = verdict.reason or "GitHub rate limit exhausted"
        storage.hosts.pause(host, until, reason)
        log.warning("fetcher: %s: every GitHub call waits %ds, until %s", reason, until - now, rfc3339(until))



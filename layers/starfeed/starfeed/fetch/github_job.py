"""Fetch one leased GitHub source (docs/design.md#github), whatever its kind reads (the
follow list, an account's stars, the timeline): its raw pages stored before they are read, what
it found kept by its kind, the outcome and the next check written back.

A rate limit pauses the GitHub host for everyone (the scheduler and every fetcher read the pause
from the hosts table); a refused token stops all GitHub polling until `starfeed github connect`."""

from __future__ import annotations

import logging
import random
import time
from typing import Protocol

from starfeed import observe
from starfeed.fetch.github import GitHub, Read, Verdict
from starfeed.fetch.record import apply_decision, fetch_fields, remember_fetch, store_raw
from starfeed.fetch.stage import StageFailed, stage
from starfeed.model import FailureClass, FetchOutcome, Source, Status, failure_class
from starfeed.parse.github import Answer
from starfeed.parse.normalize import rfc3339
from starfeed.schedule.decide import Decision
from starfeed.schedule.github import REJECTED_PAUSE, after_read
from starfeed.settings import Settings
from starfeed.sources import GITHUB_PAGES
from starfeed.store import Storage

log = logging.getLogger(__name__)


class GitHubKind(Protocol):
    """What this fetch asks of a kind read from GitHub's API (starfeed.kinds.base.GitHubKind)."""

    @property
    def publishes(self) -> bool: ...

    def targets(self, source: Source) -> list[str]: ...

    def read(self, github: GitHub, storage: Storage, source: Source, now: float) -> Read: ...

    def keep(self, storage: Storage, source: Source, read: Read, before: Source, lease: float | None,
             now: float) -> int: ...

    def checked(self, source: Source, read: Read, new: int, now: float, settings: Settings) -> Decision: ...

    def succeeded(self, source: Source, read: Read, decision: Decision) -> None: ...

    def failed(self, storage: Storage, source: Source, now: float) -> None: ...


def fetch_github(kind: GitHubKind, storage: Storage, source: Source, before: Source, lease: float | None,
                 now: float, rng: random.Random) -> FetchOutcome:
    github = GitHub(storage.settings, storage.secrets.github_token)
    first = source.status == Status.NEW
    started = time.monotonic()
    with observe.span("http request", source_id=source.source_id, host=source.host):
        read = kind.read(github, storage, source, now)
    latency_ms = round((time.monotonic() - started) * 1000)
    # Every answer is kept before it is read (no answer, no payload: a network failure).
    new, answers, previously_failed, ours = 0, [], source.status == Status.ERROR, False
    try:
        with stage("store raw"):
            answers = [(store_raw(storage, source, page, now), page) for page in read.pages if page.status is not None]
        if read.verdict.answer.succeeded:
            with stage("store"):
                new = kind.keep(storage, source, read, before, lease, now)
        # Before the outcome is written: a lost request is then retried with the message. A first
        # fetch publishes the source's feed; after a failure, entries it stored may be unrendered.
        if kind.publishes and (new or first or previously_failed):
            with stage("render request"):
                storage.queues.send_render(kind.targets(source))
    except StageFailed as failed:
        # Nothing was kept, so neither is the ETag: the next fetch reads these pages again.
        read.verdict, ours = Verdict(Answer.FAILED, str(failed)), True
    if read.verdict.answer == Answer.FAILED and not previously_failed:
        with stage("store"):
            kind.failed(storage, source, now)
    with observe.span("schedule decision"):
        _record(kind, storage, source, read, new, answers, now, rng, ours)
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
                           not_modified=read.verdict.answer == Answer.NOT_MODIFIED,
                           error=None if read.verdict.answer.succeeded else read.verdict.reason,
                           failure=source.failure,
                           retry_after=read.verdict.until - now if read.verdict.until else None)
    # The fields a feed's fetch logs, plus the requests made and the rate limit left. Never the
    # token: GitHub's URLs carry none.
    fields = fetch_fields(source, before, outcome.http_status, outcome, new, 0)
    fields.update(bytes_in=sum(len(page.body or b"") for page in read.pages), latency_ms=latency_ms,
                  requests=github.requests, rate_remaining=github.rate["remaining"] if github.rate else None)
    observe.fetched(fields)
    log.info("fetcher: %s -> %s in %d request(s), %d new, next %s (%s)%s", source.url,
             last.status if last else "no request", github.requests, new,
             f"in {int(source.next_check_at - now)}s" if source.next_check_at else "never",
             source.reason, f": {read.verdict.reason}" if read.verdict.reason else "", extra=fields)
    return outcome


def _record(kind: GitHubKind, storage: Storage, source: Source, read: Read, new: int,
            answers: list[tuple[dict | None, object]], now: float, rng: random.Random, ours: bool) -> None:
    settings, verdict = storage.settings, read.verdict
    last = read.pages[-1] if read.pages else None
    source.last_fetch_at, source.http_status = now, last.status if last else None
    for raw_ref, page in answers:  # one history line per page, the last page newest
        remember_fetch(source, raw_ref, page.status, verdict.reason or verdict.answer.value, now, settings,
                       page.elapsed, None if verdict.answer.succeeded else _failure(page.status, ours))
    decision = after_read(source, verdict.answer, verdict.until, now, settings, rng,
                          lambda: kind.checked(source, read, new, now, settings))
    apply_decision(source, decision, now, settings)
    if verdict.answer.succeeded:
        source.status = Status.NOT_MODIFIED if verdict.answer == Answer.NOT_MODIFIED else Status.OK
        source.last_error, source.failure, source.last_success_at = None, None, now
        kind.succeeded(source, read, decision)
    else:
        source.status, source.last_error = Status.DEAD if decision.dead else Status.ERROR, verdict.reason
        source.failure = _failure(last.status if last else None, ours)


def _failure(http_status: int | None, ours: bool) -> FailureClass:
    """A failed read's class: a stage of ours, else as its last answer's status says."""
    return FailureClass.OURS if ours else failure_class(http_status)


def _pause_if_limited(storage: Storage, source: Source, verdict: Verdict, exhausted: float | None,
                      now: float) -> None:
    """One pause in the hosts table holds every GitHub call, the scheduler's and every fetcher's."""
    host = source.host
    if verdict.answer == Answer.REJECTED:
        storage.hosts.pause(host, now + REJECTED_PAUSE, verdict.reason or "GitHub token rejected", stopped=True)
        observe.metric(observe.GITHUB_STOPPED, 1)  # the GitHubStopped alarm
        log.error("fetcher: %s; all GitHub polling stops until then", verdict.reason)
        storage.queues.send_render(GITHUB_PAGES)  # the index pages show why
    elif verdict.answer == Answer.RATE_LIMITED or exhausted is not None:
        until = verdict.until if verdict.answer == Answer.RATE_LIMITED and verdict.until else exhausted
        reason = verdict.reason or "GitHub rate limit exhausted"
        assert until is not None
        storage.hosts.pause(host, until, reason)
        log.warning("fetcher: %s: every GitHub call waits %ds, until %s", reason, until - now, rfc3339(until))

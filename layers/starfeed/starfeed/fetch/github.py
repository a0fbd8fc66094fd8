"""GitHub's REST API as starfeed uses it (docs/design.md#github): token auth, Link pagination
followed as given, conditional requests, and the rate-limit headers read on every response. The
token goes to the configured API origin (github_api_url's scheme, host and port) and nowhere else:
a Link rel="next" to another origin ends the read, failed, instead of being followed.

The reading of a response (classify) is pure; GitHub.get does the HTTP through fetch.http, so
GitHub calls get the same timeouts, retries, size limit and address checks as any fetch."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode, urljoin

import requests

from starfeed.fetch.guard import Origin, Refused, origin_of, show_origin
from starfeed.fetch.headers import parse_retry_after
from starfeed.fetch.http import FetchResult, fetch
from starfeed.model import TimelineState
from starfeed.parse.github import (
    LOGIN,
    Account,
    Answer,
    BadBody,
    Event,
    Star,
    accounts_of,
    events_of,
    star_uid,
    stars_of,
)
from starfeed.schedule.github import TIMELINE_EVENTS, TIMELINE_PAGES, reads_on
from starfeed.settings import Settings

STAR_JSON = "application/vnd.github.star+json"
GITHUB_JSON = "application/vnd.github+json"
API_VERSION = "2022-11-28"
PER_PAGE = 100
CONNECT = "run `starfeed github connect` with a token that can read your follow list"


@dataclass(frozen=True)
class Verdict:
    """What a response means (parse.github.Answer), why, and until when calls wait."""
    answer: Answer
    reason: str | None = None
    until: float | None = None


def _number(value: str | None) -> float | None:
    """A header's number; None when absent or not a finite number (GitHub's never are)."""
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is None or math.isfinite(number) else None


def _message(body: bytes) -> str:
    try:
        message = json.loads(body).get("message")
    except (ValueError, AttributeError, UnicodeDecodeError):
        return ""
    return message.strip()[:200] if isinstance(message, str) else ""


def exhausted_until(headers: Mapping[str, str], now: float) -> float | None:
    """When the primary limit resets, if this response used its last request (GitHub's window is
    an hour: a reset further off than a day is not believed)."""
    if _number(headers.get("X-RateLimit-Remaining")) == 0:
        return min(max(now, _number(headers.get("X-RateLimit-Reset")) or now + 60), now + 86400)
    return None


def classify(status: int | None, headers: Mapping[str, str], body: bytes, error: str | None, now: float,
             settings: Settings) -> Verdict:
    """GitHub's documented answers (headers as FetchResult keeps them: names case-insensitive):
    304 costs nothing; 401, and a 403 that is not a rate limit,
    mean the token is refused; a 403 or 429 with remaining 0 waits for the reset, and a secondary
    limit waits for Retry-After, else at least github_secondary_pause seconds."""
    if status == 304:
        return Verdict(Answer.NOT_MODIFIED)
    if status is not None and 200 <= status < 300:
        return Verdict(Answer.OK)
    message = _message(body) if status else ""
    if status in (403, 429):
        retry_after = parse_retry_after(headers.get("Retry-After"), now, settings.backoff_cap)
        primary = exhausted_until(headers, now)
        if primary is not None and retry_after is None:
            return Verdict(Answer.RATE_LIMITED, f"GitHub rate limit exhausted: {message or status}", primary)
        if retry_after is not None or status == 429 or "rate limit" in message.lower():
            wait = retry_after if retry_after is not None else settings.github_secondary_pause
            return Verdict(Answer.RATE_LIMITED, f"GitHub secondary rate limit: {message or status}", now + wait)
    if status in (401, 403):
        return Verdict(Answer.REJECTED, f"GitHub token rejected: {status} {message or 'Forbidden'}; {CONNECT}")
    if status == 404:
        return Verdict(Answer.FAILED, f"404 Not Found: {message or 'no such GitHub account'}")
    return Verdict(Answer.FAILED, f"GitHub: {error or f'HTTP {status}'}")


@dataclass
class Page:
    result: FetchResult
    verdict: Verdict
    next_url: str | None
    # Why a Link rel="next" was not followed (another origin): a read that needs that page fails.
    refused_next: str | None = None

    @property
    def failure(self) -> Verdict | None:
        """What stops a read that follows every page: GitHub's answer, or a next page elsewhere."""
        if self.verdict.answer != Answer.OK:
            return self.verdict
        return Verdict(Answer.FAILED, self.refused_next) if self.refused_next else None


TokenSource = Callable[[bool], "str | None"]  # force_fetch -> the token, or None when none is set


class GitHub:
    """One GitHub API client per fetch. token(force) reads the token (cached by the caller's
    store); after a 401 it is read once more, fresh, in case it was just replaced."""

    def __init__(self, settings: Settings, token: TokenSource, clock: Callable[[], float] = time.time):
        self.settings, self._token, self.clock = settings, token, clock
        self.origin: Origin | None = _origin(settings.github_api_url)  # the only place the token goes
        self.requests = 0
        self.pause_until: float | None = None  # set when a response exhausted the primary limit
        self.rate: dict | None = None  # the latest X-RateLimit-* seen: {limit, remaining, reset, at}

    def url(self, path: str, **query) -> str:
        return f"{self.settings.github_api_url.rstrip('/')}{path}" + (f"?{urlencode(query)}" if query else "")

    def get(self, url: str, accept: str = GITHUB_JSON, etag: str | None = None,
            last_modified: str | None = None) -> Page:
        if self.origin is None or _origin(url) != self.origin:  # a second line: callers check Links
            where = show_origin(self.origin) if self.origin else "no valid STARFEED_GITHUB_API_URL"
            return Page(FetchResult(url, None), Verdict(
                Answer.FAILED, f"GitHub: the token is not sent to {_shown(url)}; it stays with {where}"), None)
        token = self._token(False)
        if not token:
            return Page(FetchResult(url, None), Verdict(Answer.REJECTED, f"no GitHub token is set; {CONNECT} "
                                                        "(or set STARFEED_GITHUB_TOKEN locally)"), None)
        page = self._get(url, accept, etag, last_modified, token)
        if page.result.status == 401 and (fresh := self._token(True)) and fresh != token:
            page = self._get(url, accept, etag, last_modified, fresh)
        return page

    def _get(self, url: str, accept: str, etag: str | None, last_modified: str | None, token: str) -> Page:
        headers = {"Accept": accept, "Authorization": f"Bearer {token}", "X-GitHub-Api-Version": API_VERSION}
        # A connection per request: every socket of a fetch is bounded by that fetch's deadline.
        result = fetch(url, self.settings, etag=etag, last_modified=last_modified, headers=headers)
        self.requests += 1
        now = self.clock()
        verdict = classify(result.status, result.headers, result.body, result.error, now, self.settings)
        limit, remaining, reset = (_number(result.headers.get(f"X-RateLimit-{name}"))
                                   for name in ("Limit", "Remaining", "Reset"))
        if remaining is not None and reset is not None:
            self.rate = {"limit": int(limit or 0), "remaining": int(remaining), "reset": int(reset), "at": int(now)}
        exhausted = exhausted_until(result.headers, now)
        if exhausted is not None and verdict.answer.succeeded:
            self.pause_until = exhausted  # this answer is good, but it was the last one allowed
        links = requests.utils.parse_header_links(result.headers.get("Link") or "")
        next_url = next((urljoin(url, link["url"]) for link in links if link.get("rel") == "next"), None)
        if next_url and verdict.answer == Answer.OK and _origin(next_url) != self.origin:
            return Page(result, verdict, None, f'GitHub: Link rel="next" points at another origin '
                                               f"({_shown(next_url)}); not followed, the token stays with "
                                               f"{show_origin(self.origin)}")
        return Page(result, verdict, next_url)


def _origin(url: str) -> Origin | None:
    try:
        return origin_of(url)
    except Refused:
        return None


def _shown(url: str) -> str:
    """Where a URL points, for a reason: its origin, or the URL itself when it has none."""
    origin = _origin(url)
    return show_origin(origin) if origin else url[:200]


@dataclass
class Read:
    """The outcome of reading one GitHub resource across its pages."""
    verdict: Verdict
    pages: list[FetchResult] = field(default_factory=list)
    accounts: list[Account] = field(default_factory=list)
    stars: list[Star] = field(default_factory=list)  # newest first, only those not yet stored
    etag: str | None = None
    last_modified: str | None = None


def read_following(github: GitHub) -> Read:
    """Every account the token's user follows: /user/following, then each rel="next" as given."""
    read, url = Read(Verdict(Answer.OK)), github.url("/user/following", per_page=PER_PAGE)
    while url:
        page = github.get(url)
        read.pages.append(page.result)
        if failure := page.failure:
            read.verdict = failure
            return read
        try:
            read.accounts.extend(accounts_of(page.result.body))
        except BadBody as exc:
            read.verdict = Verdict(Answer.FAILED, str(exc))
            return read
        url = page.next_url
    return read


def read_stars(github: GitHub, login: str, etag: str | None, last_modified: str | None,
               known: Callable[[list[str]], set[str]], first_sync: bool, now: float,
               last_starred_at: str | None = None) -> Read:
    """A user's stars not yet stored, newest first. The first page is conditional; pages stop at
    a star already stored (no newer than last_starred_at, or one known(uids) names), at a short
    page, or, on a first sync, at the history horizon (github_history_days, github_history_stars).
    GitHub lists stars newest first, so one older than the newest stored is stored already, even
    if the account has since been renamed (its stored GUIDs carry the old login)."""
    settings = github.settings
    read = Read(Verdict(Answer.OK))
    url: str | None = github.url(f"/users/{login}/starred", per_page=PER_PAGE)
    horizon = now - settings.github_history_days * 86400
    while url:
        page = github.get(url, STAR_JSON, *((etag, last_modified) if not read.pages else (None, None)))
        read.pages.append(page.result)
        if failure := page.failure:
            read.verdict = failure
            return read
        if len(read.pages) == 1:
            read.etag, read.last_modified = page.result.validators
        try:
            stars = stars_of(page.result.body)
        except BadBody as exc:
            read.verdict = Verdict(Answer.FAILED, str(exc))
            return read
        stored = known([star_uid(login, s) for s in stars]) if stars else set()
        for star in stars:
            # A star as old as the newest stored came in the same sync as it: stored already.
            if star_uid(login, star) in stored or last_starred_at and star.starred_at <= last_starred_at:
                return read
            if first_sync and (star.starred_epoch < horizon or len(read.stars) >= settings.github_history_stars):
                return read
            read.stars.append(star)
        url = page.next_url if len(stars) >= PER_PAGE else None
    return read


def whoami(github: GitHub) -> tuple[Page, str | None]:
    """GET /user: the token's user, and its login when GitHub named a valid one."""
    page = github.get(github.url("/user"))
    try:
        login = json.loads(page.result.body)["login"] if page.verdict.answer == Answer.OK else None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        login = None
    return page, login if isinstance(login, str) and LOGIN.fullmatch(login) else None


@dataclass
class TimelineRead(Read):
    """One read of a received-events timeline."""
    events: list[Event] = field(default_factory=list)  # newest first
    reached_end: bool = False  # the timeline holds no event older than those read
    poll_interval: float | None = None  # X-Poll-Interval, seconds


def read_timeline(github: GitHub, login: str, etag: str | None, previous: TimelineState | None) -> TimelineRead:
    """GET /users/{login}/received_events: page 1 conditionally (a 304 costs no quota), then the
    next pages, up to GitHub's 300 events, only while every event of a page is new."""
    read = TimelineRead(Verdict(Answer.OK))
    url: str | None = github.url(f"/users/{login}/received_events", per_page=PER_PAGE)
    while url:
        page = github.get(url, etag=None if read.pages else etag)
        read.pages.append(page.result)
        if len(read.pages) == 1:
            read.poll_interval = _number(page.result.headers.get("X-Poll-Interval"))
            read.etag = page.result.validators[0]
        if page.verdict.answer != Answer.OK:
            read.verdict = page.verdict
            return read
        try:
            events = events_of(page.result.body)
        except BadBody as exc:
            read.verdict = Verdict(Answer.FAILED, str(exc))
            return read
        read.events.extend(events)
        # GitHub stops at 300 events: a last page that reaches that count is the cap, not the end.
        read.reached_end = page.next_url is None and not page.refused_next and len(read.events) < TIMELINE_EVENTS
        more = len(read.pages) < TIMELINE_PAGES and reads_on(events, previous)
        if more and page.refused_next:  # the next page is needed, and it is elsewhere
            read.verdict = Verdict(Answer.FAILED, page.refused_next)
            return read
        url = page.next_url if more else None
    return read

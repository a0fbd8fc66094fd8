"""GitHub API bodies into starfeed's records: followed accounts, and stars as entries in the
format of docs/design.md#github-stars. Pure: no I/O. Bodies come from the network, so every field
is checked before use."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from starfeed.model import Entry
from starfeed.parse.normalize import epoch_of, plain_text, rfc3339

GITHUB_WEB = "https://github.com"
# What GitHub (and GitHub Enterprise, whose logins may carry _ and .) allows; logins and
# repository names go into URLs and GUIDs, so anything else is dropped.
LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
REPO = re.compile(r"[A-Za-z0-9._-]{1,100}/[A-Za-z0-9._-]{1,100}")


class BadBody(ValueError):
    pass


class Answer(StrEnum):
    """What a GitHub response means for the read that asked (fetch.github.classify)."""

    OK = "ok"
    NOT_MODIFIED = "not-modified"
    RATE_LIMITED = "rate-limited"  # every GitHub call waits until the limit resets
    REJECTED = "rejected"  # the token is refused: all GitHub polling stops until `github connect`
    FAILED = "failed"  # this call only

    @property
    def succeeded(self) -> bool:
        return self in (Answer.OK, Answer.NOT_MODIFIED)


@dataclass(frozen=True)
class Account:
    login: str
    user_id: int


@dataclass(frozen=True)
class Star:
    repo_full_name: str
    starred_at: str  # RFC 3339, UTC, as GitHub sends it
    html_url: str
    description: str | None = None
    language: str | None = None
    stargazers_count: int | None = None

    @property
    def starred_epoch(self) -> float:
        return epoch_of(self.starred_at)


def _array(body: bytes) -> list[Any]:
    try:
        document = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadBody(f"GitHub sent a body that is not JSON: {exc}") from None
    if not isinstance(document, list):
        raise BadBody("GitHub sent JSON that is not a list")
    return document


def accounts_of(body: bytes) -> list[Account]:
    """A page of /user/following: simple-user objects."""
    accounts = []
    for item in _array(body):
        if (isinstance(item, dict) and isinstance(item.get("login"), str) and LOGIN.fullmatch(item["login"])
                and isinstance(item.get("id"), int)):
            accounts.append(Account(item["login"], item["id"]))
    return accounts


def stars_of(body: bytes) -> list[Star]:
    """A page of /users/{login}/starred in the star+json media type: [{starred_at, repo}]."""
    stars = []
    for item in _array(body):
        repo = item.get("repo") if isinstance(item, dict) else None
        if not isinstance(repo, dict) or not REPO.fullmatch(str(repo.get("full_name"))):
            continue
        try:
            starred_at = rfc3339(epoch_of(item["starred_at"]))
        except (KeyError, TypeError, ValueError):
            continue
        html_url = repo.get("html_url")
        if not (isinstance(html_url, str) and html_url.startswith(("https://", "http://"))):
            html_url = f"{GITHUB_WEB}/{repo['full_name']}"
        count = repo.get("stargazers_count")
        stars.append(Star(repo["full_name"], starred_at, html_url,
                          _text(repo.get("description")), _text(repo.get("language")),
                          count if isinstance(count, int) and not isinstance(count, bool) else None))
    return stars


@dataclass(frozen=True)
class Event:
    """One event of a received-events timeline; only what the hints need."""
    event_id: int  # GitHub's ids grow with time: a larger id is a later event
    event_type: str  # WatchEvent, PushEvent, ...
    actor_id: int | None

    @property
    def is_star(self) -> bool:
        return self.event_type == "WatchEvent"


def events_of(body: bytes) -> list[Event]:
    """A page of /users/{login}/received_events. A star is a WatchEvent (payload.action
    "started"); an event without a numeric id is skipped, an actor without a valid id kept
    without it (the follow list names accounts by id)."""
    events = []
    for item in _array(body):
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            continue
        try:
            event_id = int(str(item.get("id"))[:20])  # GitHub's ids fit in 64 bits; a longer one is hostile
        except (TypeError, ValueError):
            continue
        if not 0 < event_id < 2 ** 63:
            continue
        actor = item["actor"] if isinstance(item.get("actor"), dict) else {}
        payload = item["payload"] if isinstance(item.get("payload"), dict) else {}
        event_type = item["type"][:100]
        if event_type == "WatchEvent" and payload.get("action") not in (None, "started"):
            event_type = "WatchEvent:" + str(payload.get("action"))[:50]
        actor_id = (actor.get("id") if isinstance(actor.get("id"), int) and not isinstance(actor.get("id"), bool)
                    else None)
        events.append(Event(event_id, event_type, actor_id))
    return events


def _text(value: object) -> str | None:
    return plain_text(value) if isinstance(value, str) else None


def star_uid(login: str, star: Star) -> str:
    """A star's GUID: github-star://{username}/{repo_full_name}/{starred_at}."""
    return f"github-star://{login}/{star.repo_full_name}/{star.starred_at}"


def star_entry(login: str, star: Star, source_id: str, now: float) -> Entry:
    """A star's item: "{username} starred {repo_full_name}", linking to the repository, with its
    description plus language and star count when known, dated when the star was given."""
    details = [star.description] if star.description else []
    if star.language:
        details.append(f"Language: {star.language}")
    if star.stargazers_count is not None:
        details.append(f"Stars: {star.stargazers_count:,}")
    seen = rfc3339(now)
    entry = Entry(entry_uid=star_uid(login, star), feed_id=source_id, canonical_link=star.html_url,
                  title=f"{login} starred {star.repo_full_name}", summary=" · ".join(details) or None,
                  authors=[{"name": login, "uri": f"{GITHUB_WEB}/{login}"}],
                  categories=[star.language] if star.language else [],
                  published=star.starred_at, first_seen=seen, last_seen=seen)
    entry.content_hash = hashlib.sha256(f"{entry.title}\x1f{entry.summary}".encode()).hexdigest()
    return entry

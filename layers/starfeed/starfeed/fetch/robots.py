"""robots.txt (RFC 9309) for what starfeed crawls rather than subscribes to: article pages,
website sources and the HTML pages whose feeds it discovers. Feeds are not subject to it, by
convention. Parsed with Protego; each host's answer is cached in
the hosts table for settings.robots_cache_seconds.

A robots.txt that answers 4xx allows everything (RFC 9309 section 2.3.1.3); one that cannot be read
(5xx, 429, no answer) disallows everything until it is read again, after ROBOTS_UNREACHABLE_RETRY."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from protego import Protego

from starfeed.fetch.http import fetch
from starfeed.model import host_key_of
from starfeed.settings import Settings
from starfeed.store import Storage

ROBOTS_TOKEN = "starfeed"  # the product token of our User-Agent
# RFC 9309 section 2.5 asks for at least 500 KiB to be parsed; a DynamoDB item holds 400 KB, so the
# first 300,000 bytes are kept and parsed (a robots.txt is rarely over a few KB).
ROBOTS_KEPT_BYTES = 300_000
ROBOTS_UNREACHABLE_RETRY = 3600
# A Crawl-delay holds the host this long at most: a day would stop its feeds too.
MAX_CRAWL_DELAY = 3600.0
KNOWN_HOSTS = 1000  # robots.txt answers a process keeps in memory; then it starts again


@dataclass(frozen=True)
class RobotsAnswer:
    allowed: bool
    reason: str | None = None  # why not, for the analyzer result, `source list` and the logs
    crawl_delay: float | None = None  # seconds between requests to the host, when it asks


def robots_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/robots.txt"


def answer(record: dict, url: str) -> RobotsAnswer:
    """Pure: what a cached robots.txt ({status, body}) says of this URL for our token."""
    status = record.get("status")
    if not isinstance(status, int) or status >= 500 or status == 429:
        return RobotsAnswer(False, f"robots.txt unreachable ({record.get('error') or f'HTTP {status}'}): "
                                   "treated as disallowing everything until read again")
    if status >= 400:
        return RobotsAnswer(True)
    try:
        rules = Protego.parse(str(record.get("body") or ""))
        allowed, delay = rules.can_fetch(url, ROBOTS_TOKEN), rules.crawl_delay(ROBOTS_TOKEN)
    except Exception as exc:  # noqa: BLE001 - a hostile robots.txt: that host's pages alone
        return RobotsAnswer(False, f"{robots_url(url)} could not be read as rules ({type(exc).__name__}): "
                                   "treated as disallowing everything")
    delay = min(float(delay), MAX_CRAWL_DELAY) if isinstance(delay, (int, float)) and delay > 0 else None
    return RobotsAnswer(True, crawl_delay=delay) if allowed else RobotsAnswer(False, f"disallowed by {robots_url(url)}")


def check(storage: Storage, url: str, now: float, known: dict[str, dict] | None = None) -> RobotsAnswer:
    """The host's robots.txt's answer for url: from `known` (a process's own copies, which spare
    a read per article), the hosts table, or fetched and cached in both."""
    host = host_key_of(url)
    record = (known or {}).get(host)
    if not _fresh(record, now):
        record = storage.hosts.robots(host)
    if not _fresh(record, now):  # absent, expired, or not one of ours (a hand-edited item): read again
        record = read(url, storage.settings, now)
        storage.hosts.note_robots(host, record)
    if known is not None:
        if len(known) >= KNOWN_HOSTS:
            known.clear()
        known[host] = record
    return answer(record, url)


def turn(storage: Storage, url: str, allowed: RobotsAnswer, now: float) -> float | None:
    """A request to url may go now: its host's Crawl-delay turn taken in the hosts table, which
    every instance reads (docs/design.md#crawl-delay). None when it may (or no delay is asked for);
    else when the host's turn comes."""
    if not allowed.crawl_delay:
        return None
    return storage.hosts.take_turn(host_key_of(url), now, now + allowed.crawl_delay,
                                   crawl_delay_words(allowed.crawl_delay, url))


def crawl_delay_words(delay: float, url: str) -> str:
    """A Crawl-delay's turn, as a host's pause names it."""
    return f"its robots.txt asks for {delay:g} s between requests (Crawl-delay in {robots_url(url)})"


def _fresh(record: object, now: float) -> bool:
    expires = record.get("expires") if isinstance(record, dict) else None
    return isinstance(expires, (int, float)) and expires > now


def read(url: str, settings: Settings, now: float) -> dict:
    result = fetch(robots_url(url), settings, headers={"Accept": "text/plain, */*;q=0.1"})
    status = None if result.status == 200 and result.error else result.status  # 200 cut short: unread
    ok = status is not None and status < 500 and status != 429
    body = result.body[:ROBOTS_KEPT_BYTES].decode("utf-8", "ignore") if status == 200 else ""
    return {"status": status, "error": None if ok else result.error, "body": body,
            "at": now, "expires": now + (settings.robots_cache_seconds if ok else ROBOTS_UNREACHABLE_RETRY)}

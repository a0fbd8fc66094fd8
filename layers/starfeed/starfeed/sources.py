"""Subscribing: add sources by URL or from an OPML file. Shared by the CLI and the local stack."""

from __future__ import annotations

import xml.etree.ElementTree as ET
import random
import re
from pathlib import Path
from urllib.parse import urlsplit

from starfeed.model import Source, source_id_for
from starfeed.store import PARTITION_KEY_BYTES, Storage


class BadSource(ValueError):
    pass


COLLECTION_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def new_source(url: str, now: float, collections: list[str] | None = None, *, kind: str = "feed",
               enforce_feed_domain: bool = False, jitter: float = 0.0) -> Source:
    """jitter: seed 002's startup jitter, so a bulk import does not hit every host at once."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadSource(f"not an http(s) URL: {url!r}")
    if len(url.encode("utf-8", "surrogatepass")) > PARTITION_KEY_BYTES:
        raise BadSource(f"a URL of {len(url.encode('utf-8', 'surrogatepass')):,} bytes is longer than "
                        f"starfeed can index ({PARTITION_KEY_BYTES:,})")
    for collection in collections or []:
        if not COLLECTION_NAME.fullmatch(collection):
            raise BadSource(f"collection names are lower-case letters, digits, - and _: {collection!r}")
    # Due at once: the next scheduler run fetches it.
    return Source(source_id=source_id_for(url), url=url, created_at=now,
                  next_check_at=now + random.uniform(0, jitter) if jitter else now,
                  collections=list(collections or []), kind=kind,
                  enforce_feed_domain=enforce_feed_domain)


GITHUB_COLLECTION = "github"  # every followed GitHub account joins it; its feed is seed 000's
GITHUB_PAGES = ["feed", f"c/{GITHUB_COLLECTION}/feed"]  # the render targets that show GitHub's state


def github_following_source(settings, now: float) -> Source:
    """The follow list of the token's user (seed 000): one per deployment, re-synced daily."""
    url = f"{settings.github_api_url.rstrip('/')}/user/following"
    return Source(source_id=source_id_for(url), url=url, kind="github-following", created_at=now,
                  title="GitHub follow list", next_check_at=now)


def github_user_source(settings, account, now: float) -> Source:
    """A followed account, keyed by its numeric id so a renamed account keeps its stars. Due at
    once: the GitHub host's message groups already cap the calls in flight, so no jitter."""
    api = settings.github_api_url.rstrip("/")
    return Source(source_id=source_id_for(f"{api}/user/{account.user_id}"), kind="github-user",
                  url=f"{api}/users/{account.login}/starred", title=account.login, login=account.login,
                  user_id=account.user_id, created_at=now, collections=[GITHUB_COLLECTION], tier="low",
                  next_check_at=now)


def add_source(storage: Storage, url: str, now: float, collections: list[str] | None = None,
               **options) -> tuple[Source, bool]:
    """Returns the source and whether it is new (adding a URL twice finds the first)."""
    source = new_source(url, now, collections, **options)
    if storage.catalog.add_source(source):
        for collection in source.collections:
            storage.catalog.join_collection(collection, source.source_id)
        return source, True
    return storage.catalog.get_source(source.source_id) or source, False


def opml_feed_urls(path: Path) -> list[str]:
    """Every outline's xmlUrl, in document order, nested folders included."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise BadSource(f"cannot read OPML from {path}: {exc}") from None
    if root.tag != "opml":
        raise BadSource(f"{path} is not OPML (its root element is <{root.tag}>)")
    urls = []
    for outline in root.iter("outline"):
        url = outline.get("xmlUrl") or outline.get("xmlurl")
        if url and url not in urls:
            urls.append(url)
    return urls

"""Subscribing: add sources by URL or from an OPML file. Shared by the CLI and the local stack."""

from __future__ import annotations

import hashlib
import random
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from starfeed.model import FEED_NAME, RequestOptions, Selectors, Source, root_domain_of, source_id_for
from starfeed.store import Storage
from starfeed.store.limits import PARTITION_KEY_BYTES


class BadSource(ValueError):
    pass


COLLECTION_NAME = FEED_NAME


def new_source(url: str, now: float, collections: list[str] | None = None, *, kind: str = "feed",
               enforce_feed_domain: bool = False, jitter: float = 0.0, backfill: int = 0,
               no_root_domain: bool = False, deframe: bool = False, selectors: Selectors | None = None,
               request: RequestOptions | None = None) -> Source:
    """jitter: the startup jitter (docs/design.md#startup-jitter), so a bulk import does not hit
    every host at once. backfill: the first fetch keeps the newest N entries whatever the filters
    say (docs/design.md#backfill). The root domain (docs/design.md#root-domain) is derived from the
    URL here, once, unless no_root_domain (`source add --no-root-domain`: left empty; `starfeed
    root-domain set` gives one later). selectors: how a page without a feed is read
    (docs/design.md#selectors), refused when one of them cannot be used. request: its request
    options (docs/design.md#request-options), checked already, their secrets stored."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise BadSource(f"not an http(s) URL: {url!r}")
    url = spelled(url)
    if len(url.encode("utf-8", "surrogatepass")) > PARTITION_KEY_BYTES:
        raise BadSource(f"a URL of {len(url.encode('utf-8', 'surrogatepass')):,} bytes is longer than "
                        f"starfeed can index ({PARTITION_KEY_BYTES:,})")
    for collection in collections or []:
        if not COLLECTION_NAME.fullmatch(collection):
            raise BadSource(f"collection names are lower-case letters, digits, - and _: {collection!r}")
    if backfill < 0:
        raise BadSource(f"--backfill takes a number of entries, 0 or more: {backfill}")
    if selectors is not None:
        from starfeed.parse.selected import selectors_problem  # lxml: only when a page is read by selectors

        if problem := selectors_problem(selectors):
            raise BadSource(problem)
    # Due at once: the next scheduler run fetches it.
    return Source(source_id=source_id_for(url), url=url, created_at=now,
                  next_check_at=now + random.uniform(0, jitter) if jitter else now,
                  collections=list(collections or []), kind=kind,
                  enforce_feed_domain=enforce_feed_domain, backfill=backfill, deframe=deframe, selectors=selectors,
                  request=request, root_domain=None if no_root_domain else root_domain_of(url) or None)


def spelled(url: str) -> str:
    """A feed's URL in one spelling, so that HTTP://Example.com/feed#top and http://example.com/feed
    are one subscription: fetch.guard's canonical form (scheme and host in lower case, IDNA,
    no default port, no fragment). A URL with credentials keeps them as typed, fragment aside."""
    from starfeed.fetch.guard import Refused, canonical

    try:
        target = canonical(url)
    except Refused as exc:
        raise BadSource(f"{url}: {exc}") from None
    return url.split("#", 1)[0] if target.userinfo else target.url


GITHUB_COLLECTION = "github"  # every followed GitHub account joins it: the GitHub feed
GITHUB_PAGES = ["feed", f"c/{GITHUB_COLLECTION}/feed"]  # the render targets that show GitHub's state


def add_source(storage: Storage, url: str, now: float, collections: list[str] | None = None,
               **options) -> tuple[Source, bool]:
    """Returns the source and whether it is new (adding a URL twice finds the first)."""
    source = new_source(url, now, collections, **options)
    if (existing := subscribed(storage, [source.url]).get(source.url)) is not None:
        return existing, False
    if storage.sources.add(source):
        for collection in source.collections:
            storage.collections.join(collection, source.source_id)
        return source, True
    return storage.sources.get(source.source_id) or source, False


def subscribed(storage: Storage, urls: list[str]) -> dict[str, Source]:
    """The sources these URLs are subscribed as: by the id a URL gives, or, when a permanent
    redirect moved a source, by its current URL (so an exported OPML imports back as itself)."""
    urls = [u.strip() for u in urls if u.strip()]
    by_id = storage.sources.get_many({source_id_for(u) for u in urls})
    found = {}
    for url in urls:
        source = by_id.get(source_id_for(url)) or storage.sources.find_by_url(url)
        if source is not None:
            found[url] = source
    return found


@dataclass
class OpmlFeed:
    url: str
    title: str = ""
    collections: list[str] = field(default_factory=list)


@dataclass
class OpmlDocument:
    feeds: list[OpmlFeed]
    folders: dict[str, str] = field(default_factory=dict)  # folder path ("A/B") -> collection name
    title: str = ""


def collection_name(folder: list[str] | str) -> str:
    """A folder path as a collection name (COLLECTION_NAME): its titles joined with "-",
    accents folded, lower-cased, anything else a "-". A folder whose title keeps no such
    character (say it is all CJK) gets "folder-" and a hash of its path, the same every time."""
    path = [folder] if isinstance(folder, str) else list(folder)
    digest = hashlib.sha256("/".join(path).encode()).hexdigest()[:8]
    text = unicodedata.normalize("NFKD", "-".join(path)).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9_-]+", "-", text)).strip("-_")
    if len(slug) > 64:  # two long paths sharing a prefix stay two collections
        slug = slug[:55].rstrip("-_") + "-" + digest
    if not slug:
        slug = "folder-" + digest
    if slug == GITHUB_COLLECTION:  # reserved for the accounts you follow (the GitHub stars' feed)
        slug = "github-folder"
    return slug


def read_opml(path: Path) -> OpmlDocument:
    """Every feed of an OPML file (listparser), once each, in document order, with the folders it
    sits in as collections. Nested folders become one collection named by their path ("Tech" >
    "Python": tech-python); an outline's category attribute counts as a folder too. A feed in two
    folders (as /subscriptions.opml writes a source in two collections) joins both."""
    import listparser

    try:
        content = path.read_bytes()
    except FileNotFoundError:
        raise BadSource(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadSource(f"{path} is a folder: give the OPML file in it") from None
    except OSError as exc:
        raise BadSource(f"cannot read {path}: {exc.strerror or exc}") from None
    parsed = listparser.parse(content)  # bytes: never taken for a URL to download
    if parsed.bozo and not parsed.feeds:
        raise BadSource(f"cannot read OPML from {path}: {parsed.bozo_exception}")
    if not str(parsed.version).startswith("opml"):
        raise BadSource(f"{path} is not OPML: export your subscriptions from your reader as OPML "
                        "(usually Settings, Import/Export)")
    folders: dict[str, str] = {}
    feeds = []
    for item in parsed.feeds:
        names = []
        for category in item.get("categories") or []:
            if not category:
                continue
            name = folders.setdefault("/".join(category), collection_name(category))
            if name not in names:
                names.append(name)
        feeds.append(OpmlFeed(item.url, item.get("title") or "", names))
    return OpmlDocument(feeds, folders, parsed.meta.get("title") or "")


_OWN_FEED = re.compile(r"/(feed|c/[a-z0-9][a-z0-9_-]{0,63}/feed|s/[0-9a-f]+/feed)(?:\.(?:xml|atom|json))?")


def own_feed(url: str, public_url: str) -> str | None:
    """The render target ("feed", "c/NAME/feed", "s/ID/feed") when url is a feed this starfeed
    publishes itself (as /subscriptions.opml lists GitHub and website sources): subscribing to
    it would feed starfeed its own entries."""
    base = public_url.rstrip("/")
    if not base or not url.startswith(base + "/"):
        return None
    match = _OWN_FEED.fullmatch(url[len(base):].split("?", 1)[0].split("#", 1)[0])
    return match.group(1) if match else None
